#include "sched/order.h"

#include <gtest/gtest.h>

#include "sched/builders.h"

namespace abacus::sched {
namespace {

TEST(DrfSorterTest, FlavorWeightsMakeAnH100CountMoreThanAT4) {
  FlavorId h100 = Flavor::Parse("gpu/nvidia/H100-80G")->Intern();
  FlavorId t4 = Flavor::Parse("gpu/nvidia/T4")->Intern();
  ClusterTotals totals;
  totals.cpu_milli = 1'000'000;
  totals.memory_bytes = 1000 * kGiB;
  totals.device_milli.assign(Flavor::InternedCount(), 0);
  totals.device_milli[h100] = 8'000;
  totals.device_milli[t4] = 8'000;
  std::vector<int64_t> weights(Flavor::InternedCount(), 1000);
  weights[h100] = 4000;
  DrfSorter drf(totals, weights);
  ResourceVector two_h100, four_t4;
  two_h100.Set(ResourceKey::Devices(h100), 2'000);
  four_t4.Set(ResourceKey::Devices(t4), 4'000);
  // 2 × 4 / (8 × 4 + 8 × 1) = 0.2 against 4 × 1 / 40 = 0.1.
  EXPECT_NEAR(drf.Share(two_h100, 1000), 0.2, 1e-9);
  EXPECT_NEAR(drf.Share(four_t4, 1000), 0.1, 1e-9);
  // A queue weight of 2 halves the share.
  EXPECT_NEAR(drf.Share(two_h100, 2000), 0.1, 1e-9);
}

TEST(DrfSorterTest, DominantResourceWins) {
  ClusterTotals totals;
  totals.cpu_milli = 100'000;
  totals.memory_bytes = 100 * kGiB;
  totals.device_milli.assign(Flavor::InternedCount(), 0);
  DrfSorter drf(totals, std::vector<int64_t>(Flavor::InternedCount(), 1000));
  ResourceVector u;
  u.Set(ResourceKey::Cpu(), 10'000);         // 10%
  u.Set(ResourceKey::Memory(), 50 * kGiB);   // 50%
  EXPECT_NEAR(drf.Share(u, 1000), 0.5, 1e-9);
}

TEST(OrderTest, PriorityThenSubmissionThenId) {
  WorkloadInfo a = MakeWorkload("a").Priority(500).Submitted(FromMicros(10)).Build();
  WorkloadInfo b = MakeWorkload("b").Priority(500).Submitted(FromMicros(5)).Build();
  WorkloadInfo c = MakeWorkload("c").Priority(700).Submitted(FromMicros(20)).Build();
  EXPECT_TRUE(BeforeInQueue(c, 700, a, 500));
  EXPECT_TRUE(BeforeInQueue(b, 500, a, 500));
  EXPECT_FALSE(BeforeInQueue(a, 500, b, 500));
  WorkloadInfo d = MakeWorkload("d").Priority(500).Submitted(FromMicros(5)).Build();
  EXPECT_TRUE(BeforeInQueue(b, 500, d, 500));
}

}  // namespace
}  // namespace abacus::sched
