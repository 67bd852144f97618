#include "sched/placement_rules.h"

#include <gtest/gtest.h>

#include <map>

#include "sched/apply_cycle.h"
#include "sched/builders.h"
#include "sched/invariants.h"
#include "sched/scheduler.h"

namespace abacus::sched {
namespace {

QueueInfo Unlimited() {
  QueueInfo q;
  q.name = "q";
  q.tenant = "t";
  return q;
}

// Tasks per node name of the admission of `id`.
std::map<std::string, int> TasksPerNode(const Snapshot& s, const CycleResult& r, const std::string& id) {
  std::map<std::string, int> out;
  for (const auto& a : r.admissions) {
    if (a.workload_id != id) continue;
    for (const auto& p : a.placements) ++out[s.nodes[p.node].name];
  }
  return out;
}

TEST(PlacementRulesTest, MaxPerNodeSpreadsReplicasThatBinpackWouldStack) {
  Snapshot s;
  for (const char* n : {"n1", "n2", "n3"}) s.nodes.push_back(MakeNode(n).Build());
  s.queues.push_back(Unlimited());
  s.workloads.push_back(MakeWorkload("app").Queue(0).Replicas(4).MaxPerNode(2).Build());
  CycleResult r = Schedule(s, {});
  ASSERT_EQ(r.admissions.size(), 1u);
  for (const auto& [node, tasks] : TasksPerNode(s, r, "app")) EXPECT_LE(tasks, 2) << node;
  EXPECT_TRUE(CheckInvariants(s, r).ok());
  // Without the rule binpack stacks all four on one node (what the rule exists for).
  s.workloads[0].groups[0].rules = {};
  CycleResult plain = Schedule(s, {});
  EXPECT_EQ(TasksPerNode(s, plain, "app").size(), 1u);
}

TEST(PlacementRulesTest, MaxPerNodeCountsAdmittedTasksOfTheSameKeyAndExplainsWithNumbers) {
  Snapshot s;
  s.nodes.push_back(MakeNode("node-7").Build());
  s.queues.push_back(Unlimited());
  WorkloadInfo running = MakeWorkload("app-82#0").Name("app-82").Queue(0).Replicas(2).MaxPerNode(2).Build();
  running.groups[0].rules.count_key = "app-82";
  s.workloads.push_back(running);
  CycleResult first = Schedule(s, {});
  ASSERT_EQ(first.admissions.size(), 1u);
  ApplyCycle(first, &s);
  // A slice of the same service (same count key) finds the node full of it.
  WorkloadInfo slice = running;
  slice.id = "app-82#1";
  slice.admitted = false;
  slice.placements.clear();
  slice.groups[0].replicas = 1;
  s.workloads.push_back(slice);
  CycleResult r = Schedule(s, {});
  EXPECT_TRUE(r.admissions.empty());
  ASSERT_EQ(r.pending.size(), 1u);
  const std::string text = DescribePending(r.pending[0]);
  EXPECT_NE(text.find("2 of app-82 already on node-7, maxPerNode 2"), std::string::npos) << text;
  EXPECT_NE(text.find("1 by maxPerNode"), std::string::npos) << text;
}

TEST(PlacementRulesTest, MoreReplicasThanNodesTimesMaxPerNodeNeverFits) {
  Snapshot s;
  s.nodes.push_back(MakeNode("n1").Build());
  s.nodes.push_back(MakeNode("n2").Build());
  s.queues.push_back(Unlimited());
  s.workloads.push_back(MakeWorkload("app").Queue(0).Replicas(3).MaxPerNode(1).Build());
  CycleResult r = Schedule(s, {});
  ASSERT_EQ(r.pending.size(), 1u);
  EXPECT_EQ(r.pending[0].code, PendingCode::kInvalid);
  EXPECT_NE(r.pending[0].message.find("needs 3 tasks at maxPerNode 1, but only 2 node(s)"), std::string::npos)
      << r.pending[0].message;
}

TEST(PlacementRulesTest, SpreadOverZonesKeepsSkewWithinMaxSkew) {
  Snapshot s;
  // Zone a has four nodes, zone b one: binpack alone would fill zone a.
  for (int i = 0; i < 4; ++i) s.nodes.push_back(MakeNode("a" + std::to_string(i)).Label("zone", "a").Build());
  s.nodes.push_back(MakeNode("b0").Label("zone", "b").Build());
  s.nodes.push_back(MakeNode("x0").Build());  // no zone label: outside the spread
  s.queues.push_back(Unlimited());
  s.workloads.push_back(MakeWorkload("web").Queue(0).Replicas(4).Spread("zone", 1).Build());
  CycleResult r = Schedule(s, {});
  ASSERT_EQ(r.admissions.size(), 1u);
  std::map<std::string, int> zones;
  for (const auto& p : r.admissions[0].placements) {
    const auto& labels = s.nodes[p.node].labels;
    ASSERT_TRUE(labels.count("zone")) << s.nodes[p.node].name;
    ++zones[labels.at("zone")];
  }
  EXPECT_EQ(zones["a"], 2);
  EXPECT_EQ(zones["b"], 2);
  EXPECT_TRUE(CheckInvariants(s, r).ok());
}

TEST(PlacementRulesTest, SpreadBlockedByAFullZoneSaysSo) {
  Snapshot s;
  s.nodes.push_back(MakeNode("a0").Label("zone", "a").Build());
  s.nodes.push_back(MakeNode("b0").Label("zone", "b").Cpu(500).Build());  // too small for a task
  s.queues.push_back(Unlimited());
  s.workloads.push_back(MakeWorkload("web").Queue(0).Replicas(2).Spread("zone", 1).Build());
  CycleResult r = Schedule(s, {});
  EXPECT_TRUE(r.admissions.empty());
  ASSERT_EQ(r.pending.size(), 1u);
  const std::string text = DescribePending(r.pending[0]);
  EXPECT_NE(text.find("1 of web already in zone=a, the least loaded has 0, maxSkew 1"), std::string::npos) << text;
}

TEST(PlacementRulesTest, SpreadOverNodesWithSkewOneIsRoundRobin) {
  Snapshot s;
  for (const char* n : {"n1", "n2", "n3"}) s.nodes.push_back(MakeNode(n).Build());
  s.queues.push_back(Unlimited());
  s.workloads.push_back(MakeWorkload("web").Queue(0).Replicas(6).Spread("node", 1).Build());
  CycleResult r = Schedule(s, {});
  ASSERT_EQ(r.admissions.size(), 1u);
  for (const auto& [node, tasks] : TasksPerNode(s, r, "web")) EXPECT_EQ(tasks, 2) << node;
}

TEST(PlacementRulesTest, AntiAffinityKeepsServicesApartBothWays) {
  Snapshot s;
  s.nodes.push_back(MakeNode("n1").Build());
  s.nodes.push_back(MakeNode("n2").Build());
  s.queues.push_back(Unlimited());
  s.workloads.push_back(MakeWorkload("db").Queue(0).Build());
  CycleResult first = Schedule(s, {});
  ASSERT_EQ(first.admissions.size(), 1u);
  ApplyCycle(first, &s);
  const NodeIndex db_node = s.workloads[0].placements[0].node;
  // The new service keeps away from db: it lands on the other node (binpack would pick db's).
  s.workloads.push_back(MakeWorkload("cache").Queue(0).AntiAffinity("db").Build());
  CycleResult r = Schedule(s, {});
  ASSERT_EQ(r.admissions.size(), 1u);
  EXPECT_NE(r.admissions[0].placements[0].node, db_node);
  ApplyCycle(r, &s);
  // The rule binds the other way too: another db task avoids cache's node.
  s.workloads.push_back(MakeWorkload("db-2").Name("db").Queue(0).Build());
  CycleResult back = Schedule(s, {});
  ASSERT_EQ(back.admissions.size(), 1u);
  EXPECT_EQ(back.admissions[0].placements[0].node, db_node);
  EXPECT_TRUE(CheckInvariants(s, back).ok());
}

TEST(PlacementRulesTest, AntiAffinityWithNoOtherNodeExplains) {
  Snapshot s;
  s.nodes.push_back(MakeNode("n1").Build());
  s.queues.push_back(Unlimited());
  s.workloads.push_back(MakeWorkload("db").Queue(0).Build());
  ApplyCycle(Schedule(s, {}), &s);
  s.workloads.push_back(MakeWorkload("cache").Queue(0).AntiAffinity("db").Build());
  CycleResult r = Schedule(s, {});
  ASSERT_EQ(r.pending.size(), 1u);
  const std::string text = DescribePending(r.pending[0]);
  EXPECT_NE(text.find("n1 runs 1 task(s) of db, which antiAffinity keeps away"), std::string::npos) << text;
}

TEST(PlacementRulesTest, CountsFollowAllocateAndRelease) {
  std::vector<NodeInfo> nodes = {MakeNode("n1").Label("zone", "a").Build(), MakeNode("n2").Label("zone", "b").Build()};
  WorkloadInfo w = MakeWorkload("w").Replicas(3).MaxPerNode(2).Spread("zone", 1).Build();
  ClusterState state(nodes);
  state.SetRules({w});
  RuleProbe probe = state.rules().Resolve(w, 0);
  TaskPlacement p;
  p.node = 0;
  p.cpu_milli = 1000;
  state.Allocate(w, p);
  EXPECT_EQ(state.rules().OnNode(probe, 0), 1);
  EXPECT_EQ(state.rules().Check(probe, 0).kind, RuleKind::kSpread);  // 2 in a vs 0 in b: skew 2
  EXPECT_FALSE(state.rules().Check(probe, 1).blocks());
  state.Allocate(w, p);  // skew is a placement rule; counts still follow
  EXPECT_EQ(state.rules().Check(probe, 0).kind, RuleKind::kMaxPerNode);
  state.Release(w, p);
  state.Release(w, p);
  EXPECT_EQ(state.rules().OnNode(probe, 0), 0);
  EXPECT_FALSE(state.rules().Check(probe, 0).blocks());
}

TEST(PlacementRulesTest, ViolationCounterFindsBrokenRules) {
  std::vector<NodeInfo> nodes = {MakeNode("n1").Build(), MakeNode("n2").Build()};
  WorkloadInfo app = MakeWorkload("app").Replicas(3).MaxPerNode(2).Build();
  app.admitted = true;
  for (int r = 0; r < 3; ++r) app.placements.push_back({0, r, 0, 1000, kGiB, {}, {}});
  WorkloadInfo other = MakeWorkload("other").AntiAffinity("app").Build();
  other.admitted = true;
  other.placements.push_back({0, 0, 0, 1000, kGiB, {}, {}});
  RuleViolations v = CountRuleViolations(nodes, {app, other});
  EXPECT_EQ(v.max_per_node, 1);
  EXPECT_EQ(v.anti_affinity, 1);
  ASSERT_FALSE(v.examples.empty());
  EXPECT_EQ(v.examples[0], "3 of app on n1, maxPerNode 2");
}

TEST(PlacementRulesTest, PreemptionMayEvictTheBlockerOfAnAntiAffinityRule) {
  Snapshot s;
  s.nodes.push_back(MakeNode("n1").Build());
  s.queues.push_back(Unlimited());
  s.workloads.push_back(MakeWorkload("batch").Queue(0).Priority(100).Build());
  ApplyCycle(Schedule(s, {}), &s);
  s.workloads.push_back(MakeWorkload("serve").Queue(0).Priority(900).AntiAffinity("batch").Build());
  CycleResult r = Schedule(s, {});
  ASSERT_EQ(r.preemptions.size(), 1u);
  EXPECT_EQ(r.preemptions[0].victim_id, "batch");
}

}  // namespace
}  // namespace abacus::sched
