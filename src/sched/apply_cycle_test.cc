#include "sched/apply_cycle.h"

#include <gtest/gtest.h>

#include "sched/builders.h"

namespace abacus::sched {
namespace {

FlavorId A100() { return Flavor::Parse("gpu/nvidia/A100-80G")->Intern(); }

TEST(ApplyCycleTest, AdmitsOnTheDecidedPlacesThenReclaimsForTheOwner) {
  const FlavorId a100 = A100();
  Snapshot s = BorrowerFillsTheOwnersIdleQuota(a100);
  s.now = FromMicros(10);
  const CycleResult first = Schedule(s, {});
  ASSERT_EQ(first.admissions.size(), 8u);
  ApplyCycle(first, &s);
  for (const Admission& a : first.admissions) {
    const WorkloadInfo& w = s.workloads[a.workload];
    EXPECT_TRUE(w.admitted) << w.id;
    EXPECT_FALSE(w.evicting);
    EXPECT_EQ(w.admitted_at, FromMicros(10));
    EXPECT_EQ(w.group_flavors, a.group_flavors);
    ASSERT_EQ(w.placements.size(), a.placements.size());
    EXPECT_EQ(w.placements[0].node, a.placements[0].node);
  }

  // The owner comes back: it reclaims two, which yield to it until it starts.
  s.now = FromMicros(100);
  s.workloads.push_back(MakeWorkload("o1").Queue(0).Gpus({a100}, 2).Priority(500).Submitted(FromMicros(50)).Build());
  const CycleResult second = Schedule(s, {});
  ASSERT_EQ(second.preemptions.size(), 2u);
  ASSERT_TRUE(second.admissions.empty());
  ApplyCycle(second, &s);
  for (const Preemption& p : second.preemptions) {
    const WorkloadInfo& v = s.workloads[p.victim];
    EXPECT_TRUE(v.admitted) << "a victim holds its capacity until it stops";
    EXPECT_TRUE(v.evicting);
    EXPECT_EQ(v.stop_deadline, s.now + std::chrono::seconds(p.grace_seconds));
    EXPECT_EQ(v.yields_to, "o1");
    EXPECT_EQ(v.yield_count, 1);
  }
  EXPECT_FALSE(s.workloads.back().admitted);
}

TEST(ApplyCycleTest, LeavesAVictimAlreadyEvictingAsItIs) {
  Snapshot s;
  s.now = FromMicros(500);
  s.workloads.push_back(MakeWorkload("v").Build());
  s.workloads[0].admitted = true;
  s.workloads[0].evicting = true;
  s.workloads[0].stop_deadline = FromMicros(200);
  s.workloads[0].yields_to = "p";
  s.workloads[0].yield_count = 2;
  CycleResult r;
  r.preemptions.push_back({0, "v", "q", PreemptionReason::kMakeRoom, 30});
  ApplyCycle(r, &s);
  EXPECT_EQ(s.workloads[0].stop_deadline, FromMicros(200));
  EXPECT_EQ(s.workloads[0].yields_to, "p");
  EXPECT_EQ(s.workloads[0].yield_count, 2);
}

TEST(ApplyCycleTest, RepeatedPreemptionsForOnePreemptorCountUp) {
  Snapshot s;
  s.workloads.push_back(MakeWorkload("v").Build());
  s.workloads[0].admitted = true;
  s.workloads[0].yields_to = "p";
  s.workloads[0].yield_count = 2;
  CycleResult r;
  r.preemptions.push_back({0, "v", "p", PreemptionReason::kInQueuePriority, 0});
  ApplyCycle(r, &s);
  EXPECT_EQ(s.workloads[0].yield_count, 3);
  // Another preemptor starts the count again.
  s.workloads[0].evicting = false;
  r.preemptions[0].preemptor_id = "other";
  ApplyCycle(r, &s);
  EXPECT_EQ(s.workloads[0].yields_to, "other");
  EXPECT_EQ(s.workloads[0].yield_count, 1);
}

TEST(ApplyCycleTest, AnAdmittedPreemptorEndsItsClaimsAndNoOthers) {
  Snapshot s;
  s.now = FromMicros(7);
  s.workloads.push_back(MakeWorkload("victim-of-p").Build());
  s.workloads.push_back(MakeWorkload("victim-of-x").Build());
  s.workloads.push_back(MakeWorkload("p").Build());
  s.workloads[0].yields_to = "p";
  s.workloads[1].yields_to = "x";
  CycleResult r;
  Admission a;
  a.workload = 2;
  a.workload_id = "p";
  r.admissions.push_back(a);
  ApplyCycle(r, &s);
  EXPECT_TRUE(s.workloads[2].admitted);
  EXPECT_EQ(s.workloads[2].admitted_at, FromMicros(7));
  EXPECT_TRUE(s.workloads[0].yields_to.empty());
  EXPECT_EQ(s.workloads[1].yields_to, "x");
}

}  // namespace
}  // namespace abacus::sched
