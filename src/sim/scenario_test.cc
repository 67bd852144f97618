#include "sim/scenario.h"

#include <gtest/gtest.h>

namespace abacus::sim {
namespace {

using sched::PendingCode;

constexpr int64_t kGiB = 1024LL * 1024 * 1024;

Scenario MustParse(std::string_view text) {
  auto s = ParseScenario(text, "t.scn");
  EXPECT_TRUE(s.ok()) << s.status().message();
  return s.ok() ? std::move(s).value() : Scenario{};
}

std::string ParseError(std::string_view text) {
  auto s = ParseScenario(text, "t.scn");
  EXPECT_FALSE(s.ok());
  return s.ok() ? "" : s.status().message();
}

TEST(ScenarioParseTest, NodeFieldsBecomeNodeInfo) {
  Scenario s = MustParse(
      "flavor gpu/nvidia/A100-80G weight=2\n"
      "node a[1-2] cluster=c1 pool=train cpu=32 memory=256Gi devices=gpu/nvidia/A100-80G*4 devmem=40Gi "
      "domains=2,2 numa=0,0,1,1 cuda=12.4 driver=550.54 labels=zone=a,rack=r1 "
      "taints=dedicated=inference:NoSchedule,spot:PreferNoSchedule state=Cordoned unhealthy=3\n");
  ASSERT_EQ(s.cluster.nodes.size(), 2u);
  const sched::NodeInfo& n = s.cluster.nodes[1];
  EXPECT_EQ(n.name, "a2");
  EXPECT_EQ(n.cluster, "c1");
  EXPECT_EQ(n.pool, "train");
  EXPECT_EQ(n.cpu_milli, 32'000);
  EXPECT_EQ(n.memory_bytes, 256 * kGiB);
  ASSERT_EQ(n.devices.size(), 4u);
  EXPECT_EQ(n.devices[2].domain, 1);
  EXPECT_EQ(n.devices[2].numa, 1);
  EXPECT_EQ(n.devices[0].memory_bytes, 40 * kGiB);
  EXPECT_FALSE(n.devices[3].healthy);
  EXPECT_TRUE(n.devices[2].healthy);
  EXPECT_EQ(n.runtime_versions.at("cuda"), (std::vector<int64_t>{12, 4}));
  EXPECT_EQ(n.labels.at("rack"), "r1");
  ASSERT_EQ(n.taints.size(), 2u);
  EXPECT_EQ(n.taints[0].value, "inference");
  EXPECT_EQ(n.taints[1].effect, TaintEffect::kPreferNoSchedule);
  EXPECT_EQ(n.state, NodeState::kCordoned);
  FlavorId a100 = Flavor::Parse("gpu/nvidia/A100-80G")->Intern();
  EXPECT_EQ(s.cluster.flavor_weight_milli.at(a100), 2000);
}

TEST(ScenarioParseTest, QueueQuotasKeepListedOrderAndLimits) {
  Scenario s = MustParse(
      "flavor gpu/nvidia/H100\nflavor gpu/nvidia/T4\n"
      "cohort root\ncohort research parent=root borrow.gpu/nvidia/H100=4\n"
      "pool train tenants=nlp,vision\n"
      "queue nlp tenant=nlp cohort=research weight=1500m strategy=StrictFIFO pools=train "
      "quota.gpu/nvidia/T4=8 quota.gpu/nvidia/H100=2 borrow.gpu/nvidia/H100=4 lend.gpu/nvidia/T4=0 "
      "quota.cpu=64 quota.memory=512Gi\n");
  ASSERT_EQ(s.cluster.queues.size(), 1u);
  const sched::QueueInfo& q = s.cluster.queues[0];
  EXPECT_EQ(q.cohort, 1);
  EXPECT_EQ(s.cluster.cohorts[1].parent, 0);
  EXPECT_EQ(s.cluster.cohorts[1].quotas[0].borrowing_limit, 4000);
  EXPECT_EQ(q.weight_milli, 1500);
  EXPECT_EQ(q.strategy, sched::QueueingStrategy::kStrictFifo);
  EXPECT_EQ(q.allowed_pools, std::vector<std::string>{"train"});
  ASSERT_EQ(q.quotas.size(), 4u);
  EXPECT_EQ(Flavor::FromId(q.quotas[0].resource.flavor).name(), "gpu/nvidia/T4");
  EXPECT_EQ(q.quotas[0].nominal, 8000);
  EXPECT_EQ(q.quotas[0].lending_limit, 0);
  EXPECT_EQ(q.quotas[1].borrowing_limit, 4000);
  EXPECT_EQ(q.quotas[2].resource, ResourceKey::Cpu());
  EXPECT_EQ(q.quotas[2].nominal, 64'000);
  EXPECT_EQ(q.quotas[3].nominal, 512 * kGiB);
  EXPECT_EQ(s.cluster.pool_tenants.at("train"), (std::vector<std::string>{"nlp", "vision"}));
}

TEST(ScenarioParseTest, WorkloadFieldsAndPatternExpansion) {
  Scenario s = MustParse(
      "flavor gpu/nvidia/A100-80G\nflavor gpu/nvidia/T4\nflavor npu/huawei/Ascend910B\n"
      "queue q quota.gpu/nvidia/T4=8\n"
      "now 2h\n"
      "workload w1 queue=q priority=training submit=+5m replicas=2 gang gpus=gpu/nvidia/*:4 devmem=10Gi "
      "cpu=8 memory=32Gi topology=same-interconnect selector=zone=a tolerate=dedicated=inference "
      "runtime=cuda>=12.2,driver!=535 preemptible=false canPreempt=false borrowedOnly grace=2m "
      "maxQueueWait=1h agingStep=100 ceiling=800\n"
      "group helper replicas=3 share=250 gpus=gpu/*\n");
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_EQ(s.steps[0].kind, ScenarioStep::Kind::kNow);
  const sched::WorkloadInfo& w = s.steps[1].workload;
  EXPECT_EQ(w.priority, 500);
  EXPECT_EQ(w.submitted, ScenarioEpoch() + std::chrono::minutes(125));
  EXPECT_TRUE(w.gang);
  EXPECT_FALSE(w.preemptible);
  EXPECT_FALSE(w.can_preempt);
  EXPECT_TRUE(w.borrowed_only);
  EXPECT_EQ(w.grace_seconds, 120);
  EXPECT_EQ(w.max_queue_wait, std::chrono::hours(1));
  EXPECT_EQ(w.aging_step, 100);
  EXPECT_EQ(w.priority_ceiling, 800);
  ASSERT_EQ(w.groups.size(), 2u);
  const sched::TaskRequest& t = w.groups[0].task;
  EXPECT_EQ(w.groups[0].replicas, 2);
  EXPECT_EQ(t.device_count, 4);
  EXPECT_EQ(t.flavors.size(), 2u) << "gpu/nvidia/* expands to the scenario's two NVIDIA flavors";
  EXPECT_EQ(t.device_memory, 10 * kGiB);
  EXPECT_EQ(t.cpu_milli, 8000);
  EXPECT_EQ(t.topology, sched::TopologyRequirement::kSameInterconnect);
  EXPECT_EQ(t.node_selector.at("zone"), "a");
  ASSERT_EQ(t.tolerations.size(), 1u);
  EXPECT_EQ(t.tolerations[0].value, "inference");
  ASSERT_EQ(t.runtime.size(), 2u);
  EXPECT_EQ(t.runtime[0].name, "cuda");
  EXPECT_EQ(t.runtime[0].op, sched::VersionRequirement::Op::kGe);
  EXPECT_EQ(t.runtime[0].version, (std::vector<int64_t>{12, 2}));
  EXPECT_EQ(t.runtime[1].op, sched::VersionRequirement::Op::kNe);
  const sched::TaskRequest& h = w.groups[1].task;
  EXPECT_EQ(w.groups[1].name, "helper");
  EXPECT_EQ(w.groups[1].replicas, 3);
  EXPECT_EQ(h.share_milli, 250);
  EXPECT_EQ(h.device_count, 1);
  EXPECT_EQ(h.flavors.size(), 2u);
}

TEST(ScenarioParseTest, RunningPlacesResolveToDevicePositions) {
  Scenario s = MustParse(
      "flavor gpu/nvidia/A100-80G\n"
      "node a1 devices=gpu/nvidia/A100-80G*8 devmem=80Gi\n"
      "queue q quota.gpu/nvidia/A100-80G=8\n"
      "running r queue=q replicas=2 gpus=gpu/nvidia/A100-80G:2 on=a1:0,1;a1:6,7 admitted=10m\n");
  const sched::WorkloadInfo& w = s.steps[0].workload;
  EXPECT_TRUE(w.admitted);
  EXPECT_EQ(w.admitted_at, ScenarioEpoch() + std::chrono::minutes(10));
  ASSERT_EQ(w.placements.size(), 2u);
  EXPECT_EQ(w.placements[1].replica, 1);
  ASSERT_EQ(w.placements[1].devices.size(), 2u);
  EXPECT_EQ(w.placements[1].devices[1].device, 7);
  EXPECT_EQ(w.placements[1].devices[1].milli, 1000);
  EXPECT_EQ(w.placements[1].devices[1].memory, 80 * kGiB);
  EXPECT_EQ(Flavor::FromId(w.group_flavors[0]).name(), "gpu/nvidia/A100-80G");
}

TEST(ScenarioParseTest, ExpectLines) {
  Scenario s = MustParse(
      "# title line\n"
      "# known-bug: something is off\n"
      "flavor gpu/nvidia/A100-80G\n"
      "expect admitted w1 on a1,a2 borrowing flavor gpu/nvidia/A100-80G devices a1:0,1;a2:3 priority=600\n"
      "expect pending w2 Quota \"needs 8\" \"uses 14\"\n"
      "expect preempted w3 by w1 ReclaimQuota grace=120\n"
      "expect reserved w5 nodes=2 on a1,a2\n"
      "expect count admitted=3 pending=2 preempted=1\n"
      "expect order w1 w2 w3\n");
  EXPECT_EQ(s.title, "title line");
  EXPECT_EQ(s.known_bug, "something is off");
  ASSERT_EQ(s.steps.size(), 6u);
  const ScenarioExpect& a = s.steps[0].expect;
  EXPECT_EQ(a.kind, ScenarioExpect::Kind::kAdmitted);
  EXPECT_EQ(a.line, 4);
  EXPECT_EQ(a.nodes, (std::vector<std::string>{"a1", "a2"}));
  EXPECT_EQ(a.borrowing, true);
  EXPECT_EQ(a.devices.size(), 2u);
  EXPECT_EQ(a.priority, 600);
  const ScenarioExpect& p = s.steps[1].expect;
  EXPECT_EQ(p.code, PendingCode::kQuota);
  EXPECT_EQ(p.texts, (std::vector<std::string>{"needs 8", "uses 14"}));
  const ScenarioExpect& v = s.steps[2].expect;
  EXPECT_EQ(v.by, "w1");
  EXPECT_EQ(v.reason, sched::PreemptionReason::kReclaimQuota);
  EXPECT_EQ(v.grace_seconds, 120);
  EXPECT_EQ(s.steps[3].expect.node_count, 2);
  EXPECT_EQ(s.steps[4].expect.counts.at("preempted"), 1);
  EXPECT_EQ(s.steps[5].expect.order.size(), 3u);
}

TEST(ScenarioParseTest, ContinuationLinesKeepTheFirstLineNumber) {
  Scenario s = MustParse(
      "flavor gpu/nvidia/A100-80G\n"
      "queue q quota.gpu/nvidia/A100-80G=8\n"
      "workload w queue=q \\\n"
      "    gpus=gpu/nvidia/A100-80G:2\n"
      "expect pending w Placement\n");
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_EQ(s.steps[0].line, 3);
  EXPECT_EQ(s.steps[0].workload.groups[0].task.device_count, 2);
  EXPECT_EQ(s.steps[1].line, 5);
}

TEST(ScenarioParseTest, ErrorsNameFileAndLineAndAreAllReported) {
  std::string err = ParseError(
      "flavor gpu/nvidia/A100-80G\n"
      "node a1 devices=gpu/nvidia/A100-80G*8 domains=4,3\n"
      "queue q quota.gpu/nvidia/A100-80G=eight\n"
      "workload w queue=nope gpus=gpu/amd/*:1\n"
      "frobnicate\n"
      "expect pending w \"unterminated\n");
  EXPECT_NE(err.find("t.scn:2: domains: sizes add up to 7 but the node has 8 devices"), std::string::npos) << err;
  EXPECT_NE(err.find("t.scn:3: quota.gpu/nvidia/A100-80G:"), std::string::npos) << err;
  EXPECT_NE(err.find("t.scn:4: queue: queue 'nope' is not declared above"), std::string::npos) << err;
  EXPECT_NE(err.find("t.scn:4: gpus: pattern 'gpu/amd/*' matches no flavor"), std::string::npos) << err;
  EXPECT_NE(err.find("t.scn:5: unknown statement 'frobnicate'"), std::string::npos) << err;
  EXPECT_NE(err.find("t.scn:6: unterminated quoted text"), std::string::npos) << err;
}

TEST(ScenarioParseTest, ATenancyBlockIsTheServersYamlTranslatedByTheServersRule) {
  Scenario s = MustParse(
      "flavor gpu/nvidia/A100-80G\n"
      "cohort lines\n"
      "tenancy\n"
      "kind: Tenant\nname: t1\n---\nkind: Cohort\nname: org\n---\n"
      "kind: Queue\nname: q1\ntenant: t1\ncohort: org\nqueueingStrategy: StrictFIFO\n"
      "quotas:\n  - {resource: gpu/nvidia/A100-80G, nominal: 4, borrowingLimit: 2}\n"
      "end\n"
      "queue q2 cohort=org\n"
      "workload w queue=q1 gpus=gpu/nvidia/A100-80G:1\n");
  ASSERT_EQ(s.cluster.cohorts.size(), 2u);
  EXPECT_EQ(s.cluster.cohorts[1].name, "org");
  ASSERT_EQ(s.cluster.queues.size(), 2u);
  const sched::QueueInfo& q1 = s.cluster.queues[0];
  EXPECT_EQ(q1.name, "q1");
  EXPECT_EQ(q1.tenant, "t1");
  EXPECT_EQ(q1.cohort, 1);
  EXPECT_EQ(q1.strategy, sched::QueueingStrategy::kStrictFifo);
  ASSERT_EQ(q1.quotas.size(), 1u);
  EXPECT_EQ(q1.quotas[0].nominal, 4000);  // milli-devices, as the server's ledger counts
  ASSERT_TRUE(q1.quotas[0].borrowing_limit.has_value());
  EXPECT_EQ(*q1.quotas[0].borrowing_limit, 2000);
  EXPECT_EQ(s.cluster.queues[1].cohort, 1);  // a scenario line may name a cohort of the block
}

TEST(ScenarioParseTest, ATenancyBlocksErrorsNameTheFilesLines) {
  std::string err = ParseError(
      "flavor gpu/nvidia/A100-80G\n"
      "tenancy\n"
      "kind: Queue\n"
      "name: q1\n"
      "tenant: nobody\n"
      "---\n"
      "kind: Tenant\nname: t1\n---\n"
      "kind: TrainingJob\nname: w\nproject: a/b\nqueue: q1\nspec: {command: [x], taskGroups: [{name: w, resources: {cpu: 1, memory: 1Gi}}]}\n"
      "end\n"
      "queue q1\n"
      "tenancy\n"
      "kind: Tenant\n");
  EXPECT_NE(err.find("t.scn:5: tenant: unknown tenant 'nobody'"), std::string::npos) << err;  // at its field
  EXPECT_NE(err.find("t.scn:10: kind: a tenancy block holds"), std::string::npos) << err;
  EXPECT_NE(err.find("t.scn:17: tenancy: the block is not closed by a line 'end'"), std::string::npos) << err;
}

TEST(ScenarioParseTest, RejectsBadValues) {
  const std::string head = "flavor gpu/nvidia/A100-80G\nqueue q quota.gpu/nvidia/A100-80G=8\n";
  EXPECT_NE(ParseError(head + "workload w queue=q gpus=gpu/nvidia/A100-80G:2 share=250\n").find("one device"),
            std::string::npos);
  EXPECT_NE(ParseError(head + "workload w queue=q gpus=gpu/nvidia/*:1 share=1000\n").find("1..999"), std::string::npos);
  EXPECT_NE(ParseError(head + "workload w queue=q runtime=cuda~12\n").find("runtime"), std::string::npos);
  EXPECT_NE(ParseError(head + "workload w queue=q priority=urgent\n").find("priority"), std::string::npos);
  EXPECT_NE(ParseError(head + "workload w queue=q\nworkload w queue=q\n").find("declared twice"), std::string::npos);
  EXPECT_NE(ParseError(head + "expect pending w Quota stray\n").find("unexpected 'stray'"), std::string::npos);
  EXPECT_NE(ParseError(head + "now 1h\nnow 30m\n").find("backwards"), std::string::npos);
  EXPECT_NE(ParseError(head + "node a1 devices=gpu/nvidia/A100-80G*2\nrunning r queue=q gpus=gpu/nvidia/A100-80G:2 on=a1:0\n")
                .find("lists 1 device(s), the task takes 2"),
            std::string::npos);
  EXPECT_NE(ParseError(head + "group g replicas=2\n").find("must follow"), std::string::npos);
}

constexpr std::string_view kSmallCluster =
    "flavor gpu/nvidia/A100-80G\n"
    "node a1 devices=gpu/nvidia/A100-80G*8\n"
    "queue q quota.gpu/nvidia/A100-80G=8\n";

TEST(ScenarioRunTest, PassingScenarioHasNoFailures) {
  Scenario s = MustParse(std::string(kSmallCluster) +
                         "workload w1 queue=q gpus=gpu/nvidia/A100-80G:6\n"
                         "workload w2 queue=q gpus=gpu/nvidia/A100-80G:4 submit=1s\n"
                         "cycle\n"
                         "expect admitted w1 on a1 not-borrowing\n"
                         "expect pending w2 Quota \"uses 6 of nominal 8\"\n"
                         "expect count admitted=1 pending=1 running=1\n"
                         "finish w1\n"
                         "cycle\n"
                         "expect admitted w2\n");
  ScenarioOutcome out = RunScenario(s);
  EXPECT_TRUE(out.ok()) << (out.failures.empty() ? "" : out.failures[0]);
  EXPECT_EQ(out.cycles, 2);
  EXPECT_EQ(out.expectations, 4);
}

TEST(ScenarioRunTest, FailedExpectationShowsLineReasonAndDecisions) {
  Scenario s = MustParse(std::string(kSmallCluster) +
                         "workload big queue=q gpus=gpu/nvidia/A100-80G:16\n"
                         "workload ok queue=q gpus=gpu/nvidia/A100-80G:1\n"
                         "cycle\n"
                         "expect admitted big\n");
  ScenarioOutcome out = RunScenario(s);
  ASSERT_EQ(out.failures.size(), 1u);
  const std::string& f = out.failures[0];
  EXPECT_EQ(f.rfind("t.scn:7: expect admitted big\n", 0), 0u) << f;
  EXPECT_NE(f.find("failed: not admitted by the last cycle"), std::string::npos) << f;
  EXPECT_NE(f.find("big is pending:"), std::string::npos) << f;
  EXPECT_NE(f.find("NeverFits: never fits: needs 16 gpu/nvidia/A100-80G, at most 8 can ever be free to queue q"), std::string::npos) << f;
  EXPECT_NE(f.find("admitted (1):"), std::string::npos) << f;
  EXPECT_NE(f.find("ok on a1:"), std::string::npos) << f;
}

TEST(ScenarioRunTest, RunningWithoutPlacesIsPlacedAtOnceAndVictimsTurnEvicting) {
  Scenario s = MustParse(std::string(kSmallCluster) +
                         "running low queue=q priority=100 gpus=gpu/nvidia/A100-80G:8\n"
                         "expect running low on a1\n"
                         "workload high queue=q priority=900 gpus=gpu/nvidia/A100-80G:8\n"
                         "cycle\n"
                         "expect preempted low by high InQueuePriority\n"
                         "expect evicting low\n"
                         "requeue low\n"
                         "cycle\n"
                         "expect admitted high\n"
                         "expect pending low\n");
  ScenarioOutcome out = RunScenario(s);
  EXPECT_TRUE(out.ok()) << (out.failures.empty() ? "" : out.failures[0]);
}

TEST(ScenarioRunTest, CollidingExplicitPlacesAreReported) {
  Scenario s = MustParse(std::string(kSmallCluster) +
                         "running r1 queue=q gpus=gpu/nvidia/A100-80G:2 on=a1:0,1\n"
                         "running r2 queue=q gpus=gpu/nvidia/A100-80G:2 on=a1:1,2\n"
                         "expect running r1\n");
  ScenarioOutcome out = RunScenario(s);
  ASSERT_EQ(out.failures.size(), 1u);
  EXPECT_NE(out.failures[0].find("t.scn:5: running r2: its place a1:1,2 is taken"), std::string::npos) << out.failures[0];
}

TEST(ScenarioRunTest, ExpectBeforeAnyCycleFails) {
  Scenario s = MustParse(std::string(kSmallCluster) + "workload w queue=q\nexpect pending w\n");
  ScenarioOutcome out = RunScenario(s);
  ASSERT_EQ(out.failures.size(), 1u);
  EXPECT_NE(out.failures[0].find("no cycle has run yet"), std::string::npos);
}

TEST(ScenarioParseTest, HealthLinesAndDeviceReports) {
  Scenario s = MustParse(
      "flavor gpu/nvidia/H100\n"
      "health cordonAfter=2 window=1h cleanWindow=5m\n"
      "node n1 devices=gpu/nvidia/H100*4\n"
      "fault node=n1 device=3 reason=\"XID 79: GPU has fallen off the bus\"\n"
      "recover node=n1 device=3\n"
      "uncordon n1\n"
      "expect node n1 Cordoned unhealthy=3,1\n"
      "expect node n1 unhealthy=none\n");
  EXPECT_EQ(s.health.cordon_after, 2);
  EXPECT_EQ(s.health.window, std::chrono::hours(1));
  EXPECT_EQ(s.health.clean_window, std::chrono::minutes(5));
  ASSERT_EQ(s.steps.size(), 5u);
  EXPECT_EQ(s.steps[0].kind, ScenarioStep::Kind::kFault);
  EXPECT_EQ(s.steps[0].node, "n1");
  EXPECT_EQ(s.steps[0].device, 3);
  EXPECT_EQ(s.steps[0].reason, "XID 79: GPU has fallen off the bus");
  EXPECT_EQ(s.steps[1].kind, ScenarioStep::Kind::kRecover);
  EXPECT_EQ(s.steps[2].kind, ScenarioStep::Kind::kUncordon);
  EXPECT_EQ(s.steps[3].expect.node_state, NodeState::kCordoned);
  EXPECT_EQ(s.steps[3].expect.unhealthy, (std::vector<int>{1, 3}));
  EXPECT_FALSE(s.steps[4].expect.node_state.has_value());
  EXPECT_EQ(s.steps[4].expect.unhealthy, std::vector<int>{});

  std::string err = ParseError(
      "flavor gpu/nvidia/H100\nnode n1 devices=gpu/nvidia/H100*4\n"
      "fault node=n2 device=0\nfault node=n1 device=9\nrecover node=n1 device=0 reason=x\n"
      "health cordonAfter=-1\nexpect node n1\nfault node=n1 device=1 reason=\"open\n");
  EXPECT_NE(err.find("t.scn:3:"), std::string::npos) << err;
  EXPECT_NE(err.find("no node 'n2'"), std::string::npos) << err;
  EXPECT_NE(err.find("t.scn:4: fault: node n1 has no device 9"), std::string::npos) << err;
  EXPECT_NE(err.find("t.scn:5: recover: unknown field 'reason'"), std::string::npos) << err;
  EXPECT_NE(err.find("t.scn:6:"), std::string::npos) << err;
  EXPECT_NE(err.find("t.scn:7: expect node: give a state"), std::string::npos) << err;
  EXPECT_NE(err.find("t.scn:8:"), std::string::npos) << err;
}

TEST(ScenarioRunTest, AFaultRequeuesTheWorkOnTheDeviceAndCordonsAfterEnough) {
  Scenario s = MustParse(
      "flavor gpu/nvidia/H100\n"
      "health cordonAfter=2 cleanWindow=0s\n"
      "node n1 devices=gpu/nvidia/H100*2\n"
      "queue q quota.gpu/nvidia/H100=2\n"
      "running a queue=q gpus=gpu/nvidia/H100:1 on=n1:0\n"
      "running b queue=q gpus=gpu/nvidia/H100:1 on=n1:1\n"
      "fault node=n1 device=0 reason=\"XID 79\"\n");
  ScenarioRunner runner(s);
  runner.RunAll();
  ASSERT_TRUE(runner.outcome().ok());
  const auto& st = runner.state();
  EXPECT_FALSE(st.workloads[0].admitted);  // a: on the faulty device
  EXPECT_TRUE(st.workloads[0].placements.empty());
  EXPECT_TRUE(st.workloads[1].admitted);   // b: on a healthy one
  EXPECT_FALSE(st.nodes[0].devices[0].healthy);
  EXPECT_EQ(st.nodes[0].state, NodeState::kReady);  // one fault of two

  Scenario more = MustParse(
      "flavor gpu/nvidia/H100\n"
      "health cordonAfter=2 cleanWindow=0s\n"
      "node n1 devices=gpu/nvidia/H100*2\n"
      "fault node=n1 device=0\nrecover node=n1 device=0\nfault node=n1 device=0\n"
      "expect node n1 Cordoned unhealthy=0\n"
      "recover node=n1 device=0\nnow +1s\n"
      "expect node n1 Ready unhealthy=none\n");
  ScenarioOutcome o = RunScenario(more);
  EXPECT_TRUE(o.ok()) << (o.failures.empty() ? "" : o.failures[0]);
}

}  // namespace
}  // namespace abacus::sim
