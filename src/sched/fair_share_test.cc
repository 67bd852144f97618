#include "sched/fair_share.h"

#include <gtest/gtest.h>

#include <cmath>

namespace abacus::sched {
namespace {

constexpr double kDay = 86400;
const Time kT0 = FromMicros(1'700'000'000'000'000);
Time Day(double d) { return kT0 + Duration(static_cast<int64_t>(d * kDay * 1e6)); }

FlavorId A100() { return Flavor::Parse("gpu/nvidia/A100-80G")->Intern(); }
FlavorId T4() { return Flavor::Parse("gpu/nvidia/T4")->Intern(); }

TEST(UsageHistoryTest, ADayOfFourDevicesWithAOneDayHalfLife) {
  UsageHistory h(std::chrono::hours(24));
  h.Add("a", A100(), 4000, Day(0), Day(1));
  // Raw: 4 × 86400. Decayed at the end: 4 × 86400 / ln 2 × (1 − 1/2) = 249,297.7.
  FlavorUsage u = h.Usage("a", Day(1)).at(A100());
  EXPECT_DOUBLE_EQ(u.raw, 4 * kDay);
  EXPECT_NEAR(u.decayed, 4 * kDay / M_LN2 * 0.5, 1e-6);
  EXPECT_NEAR(u.decayed, 249297.7, 0.01);
  // One half-life later it counts half; raw stays.
  FlavorUsage later = h.Usage("a", Day(2)).at(A100());
  EXPECT_DOUBLE_EQ(later.raw, 4 * kDay);
  EXPECT_NEAR(later.decayed, u.decayed / 2, 1e-6);
  EXPECT_NEAR(h.Usage("a", Day(4)).at(A100()).decayed, u.decayed / 8, 1e-6);
}

TEST(UsageHistoryTest, OpenAllocationsCountUpToNowAndOrderOfEventsDoesNotMatter) {
  UsageHistory in_order(std::chrono::hours(24)), shuffled(std::chrono::hours(24));
  in_order.Start("a", A100(), 2000, Day(0));
  in_order.Start("a", A100(), 1000, Day(0.5));
  in_order.Stop("a", A100(), 2000, Day(1));
  // The same three events, the later ones first (a close reported after a later open).
  shuffled.Stop("a", A100(), 2000, Day(1));
  shuffled.Start("a", A100(), 1000, Day(0.5));
  shuffled.Start("a", A100(), 2000, Day(0));
  for (double d : {1.0, 1.5, 3.0}) {
    FlavorUsage x = in_order.Usage("a", Day(d)).at(A100()), y = shuffled.Usage("a", Day(d)).at(A100());
    EXPECT_NEAR(x.raw, y.raw, 1e-6);
    EXPECT_NEAR(x.decayed, y.decayed, 1e-6);
  }
  // Raw at day 1.5: 2 devices × 1 day + 1 device × 1 day (still open).
  EXPECT_NEAR(in_order.Usage("a", Day(1.5)).at(A100()).raw, 3 * kDay, 1e-6);
}

TEST(UsageHistoryTest, ZeroHalfLifeForgetsAtOnce) {
  UsageHistory h(Duration(0));
  h.Add("a", A100(), 8000, Day(0), Day(1));
  FlavorUsage u = h.Usage("a", Day(1)).at(A100());
  EXPECT_DOUBLE_EQ(u.raw, 8 * kDay);
  EXPECT_EQ(u.decayed, 0);
}

TEST(ComputeSharesTest, SiblingsShareByWeightAndTheFactorIsSshares) {
  std::vector<CohortInfo> cohorts(1);
  cohorts[0].name = "research";
  std::vector<QueueInfo> queues(3);
  queues[0].name = "team-a";
  queues[0].cohort = 0;
  queues[1].name = "team-b";
  queues[1].cohort = 0;
  queues[1].weight_milli = 3000;
  queues[2].name = "alone";
  UsageHistory h(Duration(0));  // decayed 0: only raw; then check decayed with a long half-life
  UsageHistory h7(kDefaultFairShareHalfLife);
  for (UsageHistory* x : {&h, &h7}) {
    x->Add("team-a", A100(), 3000, Day(0), Day(0) + std::chrono::hours(1));  // 3 device-hours
    x->Add("team-b", T4(), 2000, Day(0), Day(0) + std::chrono::hours(1));    // 2 T4-hours, weight 0.5
  }
  std::map<FlavorId, int64_t> weights{{T4(), 500}};
  auto raw = ComputeShares(queues, cohorts, weights, h, Day(0) + std::chrono::hours(1));
  EXPECT_DOUBLE_EQ(raw[0].raw_usage, 3 * 3600.0);
  EXPECT_DOUBLE_EQ(raw[1].raw_usage, 1 * 3600.0);
  EXPECT_EQ(raw[0].cohort, "research");
  EXPECT_DOUBLE_EQ(raw[0].share, 0.25);
  EXPECT_DOUBLE_EQ(raw[1].share, 0.75);
  EXPECT_DOUBLE_EQ(raw[2].share, 1.0);
  EXPECT_DOUBLE_EQ(raw[0].factor, 1.0);  // nothing decayed: everyone at 1

  auto s = ComputeShares(queues, cohorts, weights, h7, Day(0) + std::chrono::hours(1));
  // Decayed weighted usage 3 : 1 → usage_norm 0.75 and 0.25.
  EXPECT_NEAR(s[0].usage_norm, 0.75, 1e-9);
  EXPECT_NEAR(s[1].usage_norm, 0.25, 1e-9);
  EXPECT_NEAR(s[0].factor, std::exp2(-0.75 / 0.25), 1e-12);  // 0.125
  EXPECT_NEAR(s[1].factor, std::exp2(-0.25 / 0.75), 1e-12);  // 0.7937
  EXPECT_DOUBLE_EQ(s[2].factor, 1.0);
  EXPECT_EQ(s[2].cohort, "");
}

TEST(ComputeSharesTest, CpuOnlyUseDoesNotCount) {
  std::vector<QueueInfo> queues(1);
  queues[0].name = "a";
  UsageHistory h;
  h.Add("a", kCpuFlavorId, 4000, Day(0), Day(1));
  auto s = ComputeShares(queues, {}, {}, h, Day(1));
  EXPECT_EQ(s[0].raw_usage, 0);
}

TEST(DeviceHoursTextTest, WholeHoursAndTenths) {
  EXPECT_EQ(DeviceHoursText(412 * 3600.0), "412");
  EXPECT_EQ(DeviceHoursText(1800), "0.5");
  EXPECT_EQ(DeviceHoursText(37 * 3600.0 + 1), "37");
}

}  // namespace
}  // namespace abacus::sched
