#include "sched/cycle_kind.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

namespace abacus::sched {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(CycleKindTest, FullWhenAskedElseBoundedWhenCapacityWasFreedElseFresh) {
  EXPECT_EQ(ChooseCycleKind(true, true), CycleKind::kFull);
  EXPECT_EQ(ChooseCycleKind(true, false), CycleKind::kFull);
  EXPECT_EQ(ChooseCycleKind(false, true), CycleKind::kBounded);
  EXPECT_EQ(ChooseCycleKind(false, false), CycleKind::kFresh);
  EXPECT_EQ(CycleKindName(CycleKind::kBounded), "bounded");
}

TEST(CycleKindTest, EachKindTriesItsOwnShareOfTheWaitingWork) {
  const CycleScope full = ScopeOf(CycleKind::kFull, 256);
  EXPECT_EQ(full.per_queue, std::numeric_limits<size_t>::max());
  const CycleScope bounded = ScopeOf(CycleKind::kBounded, 256);
  EXPECT_EQ(bounded.per_queue, 256u);
  EXPECT_TRUE(bounded.arrivals);
  EXPECT_FALSE(bounded.strict_fifo_mates) << "the first of a StrictFIFO queue are its head already";
  const CycleScope fresh = ScopeOf(CycleKind::kFresh, 256);
  EXPECT_EQ(fresh.per_queue, 0u);
  EXPECT_TRUE(fresh.arrivals);
  EXPECT_TRUE(fresh.strict_fifo_mates);
}

TEST(CycleKindTest, TheTimerWaitsTheIntervalOrTwentyTimesTheLastFullCycle) {
  EXPECT_EQ(FullCycleGap(seconds(1), milliseconds(10)), seconds(1));
  EXPECT_EQ(FullCycleGap(seconds(1), milliseconds(100)), seconds(2));
  const Time t0 = FromMicros(1'000'000);
  EXPECT_FALSE(FullCycleDue(t0 + milliseconds(999), t0, seconds(1), milliseconds(10)));
  EXPECT_TRUE(FullCycleDue(t0 + seconds(1), t0, seconds(1), milliseconds(10)));
  EXPECT_FALSE(FullCycleDue(t0 + seconds(1), t0, seconds(1), milliseconds(60)));
}

TEST(CycleKindTest, ChangesCoalesceForTheMinGapOrFourTimesTheLastCycle) {
  EXPECT_EQ(CoalescingGap(milliseconds(5), milliseconds(1)), milliseconds(5));
  EXPECT_EQ(CoalescingGap(milliseconds(5), milliseconds(3)), milliseconds(12));
}

TEST(CycleKindTest, BoundedOrderIsPriorityThenSubmissionThenId) {
  using Key = BoundedOrderKey<std::string>;
  std::vector<Key> keys = {
      {0, FromMicros(1), "a"}, {500, FromMicros(9), "z"}, {0, FromMicros(1), "0"}, {500, FromMicros(2), "y"},
      {-10, FromMicros(0), "first-submitted"},
  };
  std::sort(keys.begin(), keys.end());
  std::vector<std::string> order;
  for (const Key& k : keys) order.push_back(k.tie);
  EXPECT_EQ(order, (std::vector<std::string>{"y", "z", "0", "a", "first-submitted"}));
}

}  // namespace
}  // namespace abacus::sched
