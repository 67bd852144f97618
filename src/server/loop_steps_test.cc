#include "server/loop_steps.h"

#include <gtest/gtest.h>

namespace abacus::server {
namespace {

using std::chrono::seconds;

TEST(PeriodicTest, RunsAtMostOncePerPeriodUnlessForced) {
  Periodic check(seconds(1));
  const Time t0 = Time{} + seconds(100);
  EXPECT_TRUE(check.Due(t0));  // never ran: the epoch is long past
  EXPECT_EQ(check.last(), t0);
  EXPECT_FALSE(check.Due(t0 + std::chrono::milliseconds(999)));
  EXPECT_EQ(check.last(), t0);  // a check not due does not move the period
  EXPECT_TRUE(check.Due(t0 + std::chrono::milliseconds(999), /*force=*/true));
  EXPECT_FALSE(check.Due(t0 + seconds(1)));  // the forced run started a new period
  EXPECT_TRUE(check.Due(t0 + seconds(2)));
}

TEST(PeriodicTest, CountsItsFirstPeriodFromTheEpoch) {
  Periodic check(seconds(1));
  EXPECT_FALSE(check.Due(Time{} + std::chrono::milliseconds(500)));
  EXPECT_TRUE(check.Due(Time{} + seconds(1)));
}

}  // namespace
}  // namespace abacus::server
