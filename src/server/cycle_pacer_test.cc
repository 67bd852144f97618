#include "server/cycle_pacer.h"

#include <gtest/gtest.h>

namespace abacus::server {
namespace {

using namespace std::chrono_literals;
using sched::CycleKind;

class CyclePacerTest : public ::testing::Test {
 protected:
  // A first cycle (owed at start, full) at t0, which cost 10 ms.
  void SetUp() override {
    ASSERT_TRUE(pacer_.Check(now_, steady_, false).cycle);
    CyclePacer::Owed first = pacer_.Begin(now_, steady_);
    EXPECT_EQ(first.kind, CycleKind::kFull);
    pacer_.Ended(10ms, first);
  }
  CyclePacer pacer_{5ms, 10s};
  Time now_ = FromMicros(1'700'000'000'000'000);
  CyclePacer::SteadyTime steady_ = CyclePacer::SteadyTime(1000s);
};

TEST_F(CyclePacerTest, NothingOwedMeansNoCycleUntilTheTimer) {
  CyclePacer::Verdict v = pacer_.Check(now_ + 1s, steady_ + 1s, false);
  EXPECT_FALSE(v.cycle);
  EXPECT_EQ(v.back_off, Duration(0));
  EXPECT_EQ(pacer_.UntilTimer(now_ + 1s), 9s);
  // The timer's cycle is full: it retries every parked workload.
  ASSERT_TRUE(pacer_.Check(now_ + 10s, steady_ + 10s, false).cycle);
  EXPECT_EQ(pacer_.Begin(now_ + 10s, steady_ + 10s).kind, CycleKind::kFull);
}

TEST_F(CyclePacerTest, AChangeWaitsOutTheCoalescingGapThatGrowsWithTheCycleCost) {
  pacer_.Arrived("wl-1");
  pacer_.Changed();
  // The last cycle cost 10 ms: the gap is 4 x 10 ms = 40 ms, not the 5 ms minimum.
  CyclePacer::Verdict v = pacer_.Check(now_ + 10ms, steady_ + 10ms, false);
  EXPECT_FALSE(v.cycle);
  EXPECT_EQ(v.back_off, 30ms);
  pacer_.Arrived("wl-2");
  ASSERT_TRUE(pacer_.Check(now_ + 40ms, steady_ + 40ms, false).cycle);
  CyclePacer::Owed owed = pacer_.Begin(now_ + 40ms, steady_ + 40ms);
  EXPECT_EQ(owed.kind, CycleKind::kFresh);  // only the arrivals
  EXPECT_EQ(owed.arrived, (std::unordered_set<std::string>{"wl-1", "wl-2"}));
  pacer_.Ended(1ms, owed);
  // Taken once: nothing is owed after the cycle.
  EXPECT_FALSE(pacer_.Check(now_ + 1s, steady_ + 1s, false).cycle);
  EXPECT_TRUE(pacer_.Begin(now_ + 1s, steady_ + 1s).arrived.empty());
}

TEST_F(CyclePacerTest, FreedCapacityGivesABoundedCycleAndARetryAFullOne) {
  pacer_.Freed();
  ASSERT_TRUE(pacer_.Check(now_ + 1s, steady_ + 1s, false).cycle);
  CyclePacer::Owed bounded = pacer_.Begin(now_ + 1s, steady_ + 1s);
  EXPECT_EQ(bounded.kind, CycleKind::kBounded);
  pacer_.Ended(1ms, bounded);
  pacer_.Freed();
  pacer_.RetryAll();
  ASSERT_TRUE(pacer_.Check(now_ + 2s, steady_ + 2s, false).cycle);
  CyclePacer::Owed full = pacer_.Begin(now_ + 2s, steady_ + 2s);
  EXPECT_EQ(full.kind, CycleKind::kFull);
  pacer_.Ended(1ms, full);
  // The full cycle restarted the timer.
  EXPECT_EQ(pacer_.UntilTimer(now_ + 2s), 10s);
}

TEST_F(CyclePacerTest, AWaiterGetsACycleAtOnceWhenNothingChanged) {
  // Nothing changed, but a waiter (WaitForCycle) asked: cycle without waiting for a gap.
  EXPECT_TRUE(pacer_.Check(now_ + 1ms, steady_ + 1ms, true).cycle);
  // With a change waiting, the waiter waits for the change's cycle (after the gap).
  pacer_.Changed();
  EXPECT_FALSE(pacer_.Check(now_ + 1ms, steady_ + 1ms, true).cycle);
}

TEST_F(CyclePacerTest, ASlowFullCycleSpacesTheTimersCycles) {
  pacer_.RetryAll();
  ASSERT_TRUE(pacer_.Check(now_ + 1s, steady_ + 1s, false).cycle);
  CyclePacer::Owed full = pacer_.Begin(now_ + 1s, steady_ + 1s);
  pacer_.Ended(1s, full);  // 20 x 1 s = 20 s, more than the 10 s interval
  EXPECT_EQ(pacer_.UntilTimer(now_ + 1s), 20s);
}

}  // namespace
}  // namespace abacus::server
