#include "sched/scheduler.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "sched/apply_cycle.h"
#include "sched/builders.h"
#include "sched/invariants.h"

namespace abacus::sched {
namespace {

FlavorId Fl(const char* name) { return Flavor::Parse(name)->Intern(); }

const PendingReason* FindPending(const CycleResult& r, const std::string& id) {
  for (const auto& p : r.pending) {
    if (p.workload_id == id) return &p;
  }
  return nullptr;
}

TEST(SchedulerTest, AdmitsWithinNominalAndLeavesSnapshotUnchanged) {
  FlavorId a100 = Fl("gpu/nvidia/A100-80G");
  Snapshot s;
  s.nodes.push_back(MakeNode("a1").Devices(a100, 8).Build());
  s.queues.push_back(MakeQueue("q", {{a100, 8000}}));
  s.workloads.push_back(MakeWorkload("w1").Queue(0).Gpus({a100}, 4).Build());
  s.workloads.push_back(MakeWorkload("w2").Queue(0).Gpus({a100}, 4).Build());
  s.workloads.push_back(MakeWorkload("w3").Queue(0).Gpus({a100}, 1).Build());
  Snapshot before = s;
  CycleResult r = Schedule(s, {});
  ASSERT_EQ(r.admissions.size(), 2u);
  ASSERT_EQ(r.pending.size(), 1u);
  EXPECT_EQ(r.pending[0].workload_id, "w3");
  EXPECT_EQ(r.pending[0].code, PendingCode::kQuota);
  EXPECT_NE(r.pending[0].message.find("uses 8 of nominal 8"), std::string::npos) << r.pending[0].message;
  EXPECT_TRUE(CheckInvariants(s, r).ok());
  // Pure: the input is untouched.
  EXPECT_EQ(s.workloads.size(), before.workloads.size());
  EXPECT_FALSE(s.workloads[0].admitted);
}

TEST(SchedulerTest, BorrowsIdleQuotaAndReclaimsItWhenTheOwnerReturns) {
  FlavorId a100 = Fl("gpu/nvidia/A100-80G");
  Snapshot s = BorrowerFillsTheOwnersIdleQuota(a100);
  CycleResult r1 = Schedule(s, {});
  EXPECT_EQ(r1.admissions.size(), 8u) << "borrower takes the owner's idle quota";
  int borrowing = 0;
  for (const auto& a : r1.admissions) borrowing += a.borrowing;
  EXPECT_EQ(borrowing, 4);
  ApplyCycle(r1, &s);
  s.now = FromMicros(100);
  s.workloads.push_back(MakeWorkload("o1").Queue(0).Gpus({a100}, 2).Priority(500).Submitted(FromMicros(50)).Build());
  CycleResult r2 = Schedule(s, {});
  EXPECT_TRUE(r2.admissions.empty());
  ASSERT_EQ(r2.preemptions.size(), 2u) << "exactly what the owner needs";
  for (const auto& p : r2.preemptions) {
    EXPECT_EQ(p.reason, PreemptionReason::kReclaimQuota);
    EXPECT_EQ(p.preemptor_id, "o1");
  }
  const PendingReason* o1 = FindPending(r2, "o1");
  ASSERT_NE(o1, nullptr);
  EXPECT_EQ(o1->code, PendingCode::kWaitingForPreemption);
  EXPECT_TRUE(CheckInvariants(s, r2).ok());
}

TEST(SchedulerTest, QuotaGrantAdmitsItsWorkloadAloneAboveTheQueuesQuota) {
  FlavorId a100 = Fl("gpu/nvidia/A100-80G");
  Snapshot s;
  s.nodes.push_back(MakeNode("a1").Devices(a100, 8).Build());
  s.queues.push_back(MakeQueue("q", {{a100, 2000}}));
  s.workloads.push_back(MakeWorkload("full").Queue(0).Gpus({a100}, 2).Submitted(FromMicros(1)).Build());
  // Granted 2 extra devices: admitted although the queue's 2 are taken.
  s.workloads.push_back(MakeWorkload("granted").Queue(0).Gpus({a100}, 2).Submitted(FromMicros(2))
                            .QuotaGrant(ResourceKey::Devices(a100), 2000).Build());
  // The grant is not the queue's: a third workload still waits on quota.
  s.workloads.push_back(MakeWorkload("plain").Queue(0).Gpus({a100}, 1).Submitted(FromMicros(3)).Build());
  CycleResult r = Schedule(s, {});
  std::set<std::string> admitted;
  for (const auto& a : r.admissions) admitted.insert(a.workload_id);
  EXPECT_EQ(admitted, (std::set<std::string>{"full", "granted"}));
  ASSERT_EQ(r.pending.size(), 1u);
  EXPECT_EQ(r.pending[0].workload_id, "plain");
  EXPECT_EQ(r.pending[0].code, PendingCode::kQuota);
  EXPECT_TRUE(CheckInvariants(s, r).ok());
  // A grant smaller than the request covers only its part: 3 asked, 2 granted, 1 charged.
  s.workloads.resize(1);
  s.workloads.push_back(MakeWorkload("partly").Queue(0).Gpus({a100}, 3).Submitted(FromMicros(2))
                            .QuotaGrant(ResourceKey::Devices(a100), 2000).Build());
  r = Schedule(s, {});
  ASSERT_EQ(r.pending.size(), 1u);
  EXPECT_EQ(r.pending[0].workload_id, "partly");
  EXPECT_EQ(WorkloadUsage(s.workloads[1], {a100}).Get(ResourceKey::Devices(a100)), 1000);
}

// Places every admission of `r` and returns workload id → the cluster of its first task.
std::map<std::string, std::string> ClusterOf(const Snapshot& s, const CycleResult& r) {
  std::map<std::string, std::string> out;
  for (const auto& a : r.admissions) out[a.workload_id] = s.nodes[a.placements.at(0).node].cluster;
  return out;
}

TEST(SchedulerTest, AGangNeverSpansClusters) {
  FlavorId a100 = Fl("gpu/nvidia/A100-80G");
  Snapshot s;
  // 8 free A100s in all, 4 per cluster: a gang of 2 × 4 fits only by spanning them.
  s.nodes.push_back(MakeNode("east-1").Cluster("east").Devices(a100, 4).Build());
  s.nodes.push_back(MakeNode("west-1").Cluster("west").Devices(a100, 4).Build());
  s.queues.push_back(MakeQueue("q", {{a100, 16000}}));
  s.workloads.push_back(MakeWorkload("wide").Queue(0).Gpus({a100}, 4).Replicas(2).Gang().Build());
  CycleResult r = Schedule(s, {});
  EXPECT_TRUE(r.admissions.empty());
  ASSERT_EQ(r.pending.size(), 1u);
  EXPECT_EQ(r.pending[0].code, PendingCode::kPlacement) << r.pending[0].message;
  // Two tasks of 2: both land in one cluster.
  s.workloads[0] = MakeWorkload("fits").Queue(0).Gpus({a100}, 2).Replicas(2).Gang().Build();
  r = Schedule(s, {});
  ASSERT_EQ(r.admissions.size(), 1u);
  EXPECT_EQ(s.nodes[r.admissions[0].placements[0].node].cluster, s.nodes[r.admissions[0].placements[1].node].cluster);
  EXPECT_TRUE(CheckInvariants(s, r).ok());
}

TEST(SchedulerTest, ClustersAreChosenByQueueLimitPreferenceDataAndRoom) {
  FlavorId a100 = Fl("gpu/nvidia/A100-80G");
  Snapshot s;
  s.nodes.push_back(MakeNode("east-1").Cluster("east").Devices(a100, 8).Build());
  s.nodes.push_back(MakeNode("west-1").Cluster("west").Devices(a100, 8).Build());
  s.nodes.push_back(MakeNode("west-2").Cluster("west").Devices(a100, 8).Build());
  s.clusters.push_back({"east", {{"data.abacus.io/imagenet", "true"}}});
  s.clusters.push_back({"west", {}});
  s.queues.push_back(MakeQueue("plain", {{a100, 64000}}));
  s.queues.push_back(MakeQueue("east-only", {{a100, 64000}}));
  s.queues.back().allowed_clusters = {"east"};
  s.queues.push_back(MakeQueue("likes-east", {{a100, 64000}}));
  s.queues.back().preferred_clusters = {"east"};
  // Room: west has 16 free, east 8 — a plain job goes west.
  s.workloads.push_back(MakeWorkload("room").Queue(0).Gpus({a100}, 2).Submitted(FromMicros(1)).Build());
  // Data locality: east holds imagenet.
  s.workloads.push_back(MakeWorkload("data").Queue(0).Gpus({a100}, 2).Submitted(FromMicros(2))
                            .DataLabel("data.abacus.io/imagenet", "true").Build());
  // Queue limit and preference.
  s.workloads.push_back(MakeWorkload("limited").Queue(1).Gpus({a100}, 2).Submitted(FromMicros(3)).Build());
  s.workloads.push_back(MakeWorkload("preferring").Queue(2).Gpus({a100}, 2).Submitted(FromMicros(4)).Build());
  CycleResult r = Schedule(s, {});
  auto where = ClusterOf(s, r);
  EXPECT_EQ(where["room"], "west");
  EXPECT_EQ(where["data"], "east");
  EXPECT_EQ(where["limited"], "east");
  EXPECT_EQ(where["preferring"], "east");
  EXPECT_TRUE(CheckInvariants(s, r).ok());
  // A queue limited to east waits when east is full, even with west free.
  s.workloads.clear();
  s.workloads.push_back(MakeWorkload("too-big").Queue(1).Gpus({a100}, 8).Replicas(2).Gang().Build());
  r = Schedule(s, {});
  EXPECT_TRUE(r.admissions.empty());
  // A preferred cluster without room is passed over: the work goes where it fits.
  s.workloads.clear();
  s.workloads.push_back(MakeWorkload("big").Queue(2).Gpus({a100}, 8).Replicas(2).Gang().Build());
  r = Schedule(s, {});
  ASSERT_EQ(r.admissions.size(), 1u);
  EXPECT_EQ(ClusterOf(s, r)["big"], "west");
}

// FGD-Plus keeps CPU-only work off nodes whose free GPUs it would strand. n1 has two free A100s
// and 24 cores; n2's two A100s are taken and 60 of its 64 cores are free. The typical GPU task
// brings 8 cores per GPU. A 16-core CPU-only task: binpack takes n1 (least CPU free), leaving 8
// cores for two free GPUs; fgd-plus takes n2, where no GPU is free to strand.
TEST(SchedulerTest, FgdPlusPutsCpuOnlyWorkWhereNoGpuIsStranded) {
  FlavorId a100 = Fl("gpu/nvidia/A100-80G");
  for (auto [policy, node] : {std::pair{ScoringPolicy::kBinpack, 0}, std::pair{ScoringPolicy::kFgdPlus, 1}}) {
    SCOPED_TRACE(std::string(ScoringPolicyName(policy)));
    Snapshot s;
    s.nodes.push_back(MakeNode("n1").Cpu(24'000).Devices(a100, 2).Build());
    s.nodes.push_back(MakeNode("n2").Cpu(64'000).Devices(a100, 2).Label("role", "train").Build());
    s.queues.push_back(MakeQueue("q", {{a100, 8000}}));
    s.workloads.push_back(MakeWorkload("train").Queue(0).Gpus({a100}, 2).Cpu(4000).Selector("role", "train").Build());
    SchedulerConfig config;
    config.policy = policy;
    config.fgd_distribution = {{frag::TaskShape{8000, 0, 1, frag::kMilliPerGpu, 0}, 1.0}};
    CycleResult r1 = Schedule(s, config);
    ASSERT_EQ(r1.admissions.size(), 1u);
    ApplyCycle(r1, &s);
    s.workloads.push_back(MakeWorkload("etl").Queue(0).Cpu(16'000).Submitted(FromMicros(10)).Build());
    CycleResult r2 = Schedule(s, config);
    ASSERT_EQ(r2.admissions.size(), 1u);
    ASSERT_EQ(r2.admissions[0].placements.size(), 1u);
    EXPECT_EQ(r2.admissions[0].placements[0].node, node);
    EXPECT_TRUE(CheckInvariants(s, r2).ok());
  }
}

TEST(SchedulerTest, GangIsAllOrNothing) {
  FlavorId h100 = Fl("gpu/nvidia/H100-80G");
  Snapshot s;
  s.nodes.push_back(MakeNode("h1").Devices(h100, 8).Build());
  s.nodes.push_back(MakeNode("h2").Devices(h100, 4).Build());
  s.queues.push_back(MakeQueue("q", {{h100, 64000}}));
  s.workloads.push_back(MakeWorkload("g").Queue(0).Gpus({h100}, 8).Replicas(2).Gang().Build());
  CycleResult r = Schedule(s, {});
  EXPECT_TRUE(r.admissions.empty());
  ASSERT_EQ(r.pending.size(), 1u);
  // 16 H100 on a cluster of 12: it can never run, and says so (issue 20.13).
  EXPECT_EQ(r.pending[0].code, PendingCode::kInvalid);
  EXPECT_EQ(r.pending[0].placement->tasks_placeable, 1);
}

TEST(SchedulerTest, EffectivePriorityAgesByMaxQueueWaitUpToTheCeiling) {
  WorkloadInfo w = MakeWorkload("w").Priority(300).Submitted(FromMicros(0)).Build();
  w.max_queue_wait = std::chrono::hours(1);
  w.aging_step = 100;
  w.priority_ceiling = 450;
  EXPECT_EQ(EffectivePriority(w, FromMicros(0) + std::chrono::minutes(59)), 300);
  EXPECT_EQ(EffectivePriority(w, FromMicros(0) + std::chrono::minutes(61)), 400);
  EXPECT_EQ(EffectivePriority(w, FromMicros(0) + std::chrono::hours(5)), 450);
}

// Property test: random heterogeneous clusters and workloads; after every cycle the invariants
// hold, and applying decisions never double-allocates.
TEST(SchedulerTest, AgedWorkloadsDoNotEvictEachOtherInTurn) {
  FlavorId a100 = Fl("gpu/nvidia/A100-80G");
  const Time t0 = FromMicros(0);
  auto aging = [&](WorkloadBuilder b) {
    WorkloadInfo w = b.Queue(0).Gpus({a100}, 1).Priority(500).Build();
    w.max_queue_wait = std::chrono::hours(1);
    w.aging_step = 100;
    w.priority_ceiling = 700;
    return w;
  };
  Snapshot s;
  s.now = t0 + std::chrono::minutes(90);
  s.nodes.push_back(MakeNode("a1").Devices(a100, 1).Build());
  s.queues.push_back(MakeQueue("q", {{a100, 1000}}));
  // A runs since just after it was submitted (admitted at base 500); B waited 90 min (aged 600).
  WorkloadInfo a = aging(MakeWorkload("a").Submitted(t0));
  a.admitted = true;
  a.admitted_at = t0 + std::chrono::seconds(1);
  a.group_flavors = {a100};
  a.placements.push_back({0, 0, 0, 1000, kGiB, {{0, 1000, 80 * kGiB}}, {}});
  s.workloads.push_back(a);
  s.workloads.push_back(aging(MakeWorkload("b").Submitted(t0 + std::chrono::seconds(2))));
  CycleResult r = Schedule(s, {});
  ASSERT_EQ(r.preemptions.size(), 1u);
  EXPECT_EQ(r.preemptions[0].victim_id, "a");
  // B now runs with the priority it won with (600); A waits again and has aged to 600 too: it
  // must not take the device back (that was the thrash).
  s.workloads[0] = aging(MakeWorkload("a").Submitted(t0));
  s.workloads[1].admitted = true;
  s.workloads[1].admitted_at = s.now;
  s.workloads[1].group_flavors = {a100};
  s.workloads[1].placements = {{0, 0, 0, 1000, kGiB, {{0, 1000, 80 * kGiB}}, {}}};
  r = Schedule(s, {});
  EXPECT_TRUE(r.preemptions.empty());
  EXPECT_TRUE(r.admissions.empty());
}

TEST(SchedulerPropertyTest, InvariantsHoldOnRandomClustersAcrossCycles) {
  std::mt19937_64 rng(20261202);
  std::vector<FlavorId> flavors = {Fl("gpu/nvidia/A100-80G"), Fl("gpu/nvidia/T4"), Fl("npu/huawei/Ascend910B")};
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    Snapshot s;
    int nodes = 2 + static_cast<int>(rng() % 12);
    for (int n = 0; n < nodes; ++n) {
      auto b = MakeNode("n" + std::to_string(n)).Cpu(16'000 + static_cast<int64_t>(rng() % 4) * 16'000);
      if (rng() % 4 != 0) b.Devices(flavors[rng() % flavors.size()], 1 + static_cast<int>(rng() % 8), 80 * kGiB, 1 + static_cast<int>(rng() % 4));
      if (rng() % 10 == 0) b.State(NodeState::kCordoned);
      if (round % 2 == 1) b.Cluster(rng() % 2 ? "east" : "west");  // odd rounds: two clusters
      s.nodes.push_back(b.Build());
    }
    int cohorts = 1 + static_cast<int>(rng() % 2);
    for (int c = 0; c < cohorts; ++c) s.cohorts.push_back({"c" + std::to_string(c), c == 0 ? kNone : 0, {}});
    int queues = 1 + static_cast<int>(rng() % 4);
    for (int q = 0; q < queues; ++q) {
      QueueInfo qi = MakeQueue("q" + std::to_string(q), {}, rng() % 3 == 0 ? kNone : static_cast<CohortIndex>(rng() % cohorts));
      for (FlavorId f : flavors) {
        QuotaInfo e{ResourceKey::Devices(f), static_cast<int64_t>(rng() % 9) * 1000, std::nullopt, std::nullopt};
        if (rng() % 2) e.borrowing_limit = static_cast<int64_t>(rng() % 5) * 1000;
        if (rng() % 2) e.lending_limit = static_cast<int64_t>(rng() % 5) * 1000;
        qi.quotas.push_back(e);
      }
      if (rng() % 3 == 0) qi.strategy = QueueingStrategy::kStrictFifo;
      s.queues.push_back(qi);
    }
    int workloads = 5 + static_cast<int>(rng() % 40);
    for (int i = 0; i < workloads; ++i) {
      auto b = MakeWorkload("w" + std::to_string(i)).Queue(static_cast<QueueIndex>(rng() % queues))
                   .Priority(100 * static_cast<int32_t>(1 + rng() % 9)).Submitted(FromMicros(static_cast<int64_t>(rng() % 1000)))
                   .Cpu(static_cast<int64_t>(1 + rng() % 8) * 1000);
      int kind = static_cast<int>(rng() % 4);
      std::vector<FlavorId> accept = {flavors[rng() % flavors.size()]};
      if (rng() % 3 == 0) accept = flavors;
      if (kind == 0) b.Gpus(accept, 1).Share(static_cast<int32_t>(100 + rng() % 800));
      if (kind == 1) b.Gpus(accept, 1 + static_cast<int32_t>(rng() % 8));
      if (kind == 2) b.Gpus(accept, 1 + static_cast<int32_t>(rng() % 4)).Replicas(1 + static_cast<int32_t>(rng() % 3)).Gang();
      if (rng() % 5 == 0) b.Topology(TopologyRequirement::kSameInterconnect);
      if (rng() % 6 == 0) b.Preemptible(false);
      if (rng() % 8 == 0) b.BorrowedOnly();
      s.workloads.push_back(b.Build());
    }
    SchedulerConfig config;
    config.policy = static_cast<ScoringPolicy>(rng() % 4);
    for (int cycle = 0; cycle < 4; ++cycle) {
      CycleResult r = Schedule(s, config);
      Status st = CheckInvariants(s, r);
      ASSERT_TRUE(st.ok()) << st.ToString();
      // Every workload is either admitted or has a reason.
      size_t admitted_before = 0;
      for (const auto& w : s.workloads) admitted_before += w.admitted;
      EXPECT_EQ(admitted_before + r.admissions.size() + r.pending.size(), s.workloads.size());
      ApplyCycle(r, &s);
      // Victims stop: remove them so their capacity frees for the next cycle.
      std::vector<WorkloadInfo> kept;
      std::vector<int> remap(s.workloads.size(), -1);
      for (auto& w : s.workloads) {
        if (w.evicting) {
          w.admitted = false;
          w.evicting = false;
          w.placements.clear();
          w.group_flavors.clear();
        }
      }
      s.now += std::chrono::seconds(10);
    }
  }
}

}  // namespace
}  // namespace abacus::sched

namespace abacus::sched {
namespace {

// Work admitted before a node was cordoned (or a device failed) keeps running there — the
// health rule and `abacus cordon` allow it — so the invariants hold; a new admission onto the
// same node or device breaks them.
TEST(SchedulerTest, InvariantsLetEarlierWorkStayOnACordonedNodeButNotNewWork) {
  FlavorId a100 = Fl("gpu/nvidia/A100-80G");
  Snapshot s;
  s.nodes.push_back(MakeNode("a1").Devices(a100, 2).Build());
  s.queues.push_back(MakeQueue("q", {{a100, 8000}}));
  s.workloads.push_back(MakeWorkload("running").Queue(0).Gpus({a100}, 1).Build());
  s.workloads.push_back(MakeWorkload("new").Queue(0).Gpus({a100}, 1).Build());
  CycleResult first = Schedule(s, {});
  ASSERT_EQ(first.admissions.size(), 2u);
  // Keep only "running" admitted, then cordon its node and fail its device.
  CycleResult only_running, second_admission;
  for (const auto& a : first.admissions) {
    (s.workloads[a.workload].id == "running" ? only_running : second_admission).admissions.push_back(a);
  }
  ASSERT_EQ(only_running.admissions.size(), 1u);
  ApplyCycle(only_running, &s);
  s.nodes[0].state = NodeState::kCordoned;
  const int32_t its_device = s.workloads[0].placements[0].devices[0].device;
  s.nodes[0].devices[its_device].healthy = false;
  EXPECT_TRUE(CheckInvariants(s, CycleResult{}).ok()) << CheckInvariants(s, CycleResult{}).ToString();
  Status refused = CheckInvariants(s, second_admission);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("new: placed on a1 which its filters exclude"), std::string::npos) << refused.ToString();
}

}  // namespace
}  // namespace abacus::sched
