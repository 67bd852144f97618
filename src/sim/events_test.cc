#include "sim/events.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <sstream>

#include "model/extended_resource.h"
#include "sim/events_report.h"
#include "sim/events_rules.h"
#include "sim/fault_schedule.h"
#include "sim/scenario.h"
#include "workload/documents.h"

namespace abacus::sim {
namespace {

// One node with 2 GPUs. "a" (1 GPU, 100 s) at 0; "b" (2 GPUs, 50 s) at 10 waits for "a" and
// starts at 100; "c" (1 GPU, 20 s) at 20 starts at once next to "a" (best-effort FIFO) and ends
// at 40; "big" (3 GPUs) never fits.
constexpr const char* kTrace = R"(
nodes:
  - {name: n1, cpu: 16, memory: 64Gi, devices: ["gpu:nvidia:A100-80G:2:80Gi"]}
workloads:
  - {name: a, kind: BatchJob, tenant: t1, queue: q1, submit: 0, duration: 100, cpu: 1, memory: 1Gi,
     accelerators: {flavor: "gpu/*", count: 1}}
  - {name: b, kind: BatchJob, tenant: t1, queue: q1, submit: 10, duration: 50, cpu: 1, memory: 1Gi,
     accelerators: {flavor: "gpu/*", count: 2}}
  - {name: c, kind: BatchJob, tenant: t2, queue: q2, submit: 20, duration: 20, cpu: 1, memory: 1Gi,
     accelerators: {flavor: "gpu/*", count: 1}}
  - {name: big, kind: BatchJob, tenant: t2, queue: q2, submit: 30, duration: 10, cpu: 1, memory: 1Gi,
     accelerators: {flavor: "gpu/*", count: 3}}
)";

EventInput Input(const char* yaml, const TenancyConfig* config = nullptr) {
  auto trace = ParseGenericTraceYaml(yaml, "t.yaml");
  EXPECT_TRUE(trace.ok()) << trace.status().ToString();
  auto in = BuildEventInput(*trace, config);
  EXPECT_TRUE(in.ok()) << in.status().ToString();
  return *in;
}

const JobOutcome& Job(const EventSimResult& r, const std::string& id) {
  for (const auto& j : r.jobs) {
    if (j.id == id) return j;
  }
  static JobOutcome none;
  ADD_FAILURE() << "no job " << id;
  return none;
}

// Options that replay until `until_s` (past the trace's last departure: to completion).
EventSimOptions Until(int64_t until_s) {
  EventSimOptions o;
  o.until_s = until_s;
  return o;
}

TEST(EventSim, TimesQueueingAndReasons) {
  EventSimResult r = RunEventSim(Input(kTrace), Until(150));
  EXPECT_EQ(Job(r, "a").first_start_s, 0);
  EXPECT_EQ(Job(r, "a").finish_s, 100);
  EXPECT_EQ(Job(r, "c").first_start_s, 20);
  EXPECT_EQ(Job(r, "c").finish_s, 40);
  EXPECT_EQ(Job(r, "b").first_start_s, 100);
  EXPECT_EQ(Job(r, "b").finish_s, 150);
  EXPECT_FALSE(Job(r, "big").first_start_s.has_value());
  ASSERT_EQ(r.queues.size(), 2u);
  const GroupReport& q1 = r.queues[0];
  EXPECT_EQ(q1.name, "q1");
  EXPECT_EQ(q1.completed, 2);
  EXPECT_EQ(q1.queueing.count, 2);
  EXPECT_DOUBLE_EQ(q1.queueing.mean, 45);  // (0 + 90) / 2
  EXPECT_DOUBLE_EQ(q1.queueing.p99, 90);
  EXPECT_DOUBLE_EQ(q1.completion.mean, 120);  // (100 + 140) / 2
  EXPECT_EQ(r.queues[1].pending_at_end, 1);
  ASSERT_EQ(r.unplaced.size(), 1u);
  EXPECT_EQ(r.unplaced[0].workload, "big");
  EXPECT_FALSE(r.unplaced[0].reason.empty());
  // GPU allocation: 1 of 2 over [0,20), 2 of 2 over [20,40), 1 of 2 over [40,100), 2 of 2 over [100,150).
  EXPECT_NEAR(r.mean_gpu_pct, 100.0 * (10 + 20 + 30 + 50) / 150.0, 1e-9);
  EXPECT_EQ(r.total.submitted, 4);
  EXPECT_NE(EventsTable(r).find("q1"), std::string::npos);
  EXPECT_NE(EventsCsv(r).find("queue,q2,t2"), std::string::npos);
  EXPECT_TRUE(EventsJson(r)["unplaced"].is_array());
  EXPECT_NE(EventsSvg("x", r).find("<polyline"), std::string::npos);
}

TEST(EventSim, Deterministic) {
  EventInput in = Input(kTrace);
  auto a = EventsJson(RunEventSim(in, {}));
  auto b = EventsJson(RunEventSim(in, {}));
  a.erase("seconds");
  b.erase("seconds");
  EXPECT_EQ(a.dump(), b.dump());
}

// Tenants t1 and t2 with queues q1 and q2 in cohort `shared`, each with 8 cores, 32 GiB and one
// A100 of nominal quota.
constexpr const char* kTwoTeamsInACohort = R"(
kind: Tenant
name: t1
---
kind: Tenant
name: t2
---
kind: Cohort
name: shared
---
kind: Queue
name: q1
tenant: t1
cohort: shared
quotas:
  - {resource: cpu, nominal: 8}
  - {resource: memory, nominal: 32Gi}
  - {resource: gpu/nvidia/A100-80G, nominal: 1}
---
kind: Queue
name: q2
tenant: t2
cohort: shared
quotas:
  - {resource: cpu, nominal: 8}
  - {resource: memory, nominal: 32Gi}
  - {resource: gpu/nvidia/A100-80G, nominal: 1}
)";

// With a config: q2 lends its idle nominal to q1 in a cohort, then reclaims it by preemption;
// the victim leaves after its grace period and requeues with the run time it had left.
TEST(EventSim, BorrowingReclaimAndRequeue) {
  constexpr const char* kConfig = kTwoTeamsInACohort;
  constexpr const char* kBorrow = R"(
nodes:
  - {name: n1, cpu: 16, memory: 64Gi, devices: ["gpu:nvidia:A100-80G:2:80Gi"]}
workloads:
  - {name: wide, kind: Experiment, tenant: t1, queue: q1, submit: 0, duration: 1000, cpu: 1, memory: 1Gi,
     accelerators: {flavor: "gpu/*", count: 2}}
  - {name: owner, kind: Experiment, tenant: t2, queue: q2, submit: 100, duration: 50, cpu: 1, memory: 1Gi,
     accelerators: {flavor: "gpu/*", count: 1}}
)";
  ParsedDocuments docs = ParseDocuments(kConfig, "org.yaml");
  ASSERT_TRUE(docs.diagnostics.empty()) << docs.diagnostics.ToString();
  TenancyConfig config;
  Diagnostics diags;
  AddToTenancyConfig(docs.documents, config, diags);
  ASSERT_TRUE(diags.empty()) << diags.ToString();
  EventSimResult r = RunEventSim(Input(kBorrow, &config), Until(1050));
  const GroupReport& q1 = r.queues[0];
  EXPECT_EQ(q1.borrowing_admissions, 2);  // first run and the resumed run both borrow
  EXPECT_EQ(q1.preempted, 1);
  EXPECT_EQ(q1.reclaimed, 1);
  EXPECT_EQ(Job(r, "wide").preemptions, 1);
  // The victim stops at 100 (grace 0) and requeues with 900 s left. Its capacity is held for its
  // preemptor, which is offered it first: "owner" starts at 100 although the requeued "wide" was
  // submitted earlier; "wide" resumes when "owner" leaves at 150 and finishes at 150 + 900.
  EXPECT_EQ(Job(r, "owner").first_start_s, 100);
  EXPECT_EQ(Job(r, "owner").finish_s, 150);
  EXPECT_EQ(Job(r, "wide").finish_s, 1050);
  EXPECT_EQ(r.total.completed, 2);
  EXPECT_EQ(r.cycle_kinds.nominated, 1);
  // Without the claim (what the server does today) the victim wins the race at t=100.
  EventSimOptions no_claims = Until(1050);
  no_claims.preemptor_claims = false;
  EventSimResult race = RunEventSim(Input(kBorrow, &config), no_claims);
  EXPECT_EQ(Job(race, "wide").finish_s, 1000);
  EXPECT_EQ(Job(race, "owner").first_start_s, 1000);
}

TenancyConfig Config(const char* yaml) {
  ParsedDocuments docs = ParseDocuments(yaml, "org.yaml");
  EXPECT_TRUE(docs.diagnostics.empty()) << docs.diagnostics.ToString();
  TenancyConfig config;
  Diagnostics diags;
  AddToTenancyConfig(docs.documents, config, diags);
  EXPECT_TRUE(diags.empty()) << diags.ToString();
  return config;
}

// One queue on one A100 node; "steady" (350) is preemptible but may not preempt.
constexpr const char* kAgingConfig = R"(
kind: Tenant
name: t
---
kind: Queue
name: q
tenant: t
quotas:
  - {resource: cpu, nominal: 16}
  - {resource: memory, nominal: 64Gi}
  - {resource: gpu/nvidia/A100-80G, nominal: 1}
---
kind: PriorityClass
name: steady
value: 350
preemptible: true
canPreempt: false
)";

// Priority aging with no other event: "late" (experiment: 300, +100 every 4 h up to 400) waits
// behind "early" (steady, 350, admitted). Only its first aging step, at 10 + 4 h, lets it
// preempt "early"; nothing else happens until then.
TEST(EventSim, AgingStepTriggersACycle) {
  constexpr const char* kAging = R"(
nodes:
  - {name: n1, cpu: 16, memory: 64Gi, devices: ["gpu:nvidia:A100-80G:1:80Gi"]}
workloads:
  - {name: early, kind: Experiment, tenant: t, queue: q, priorityClass: steady, submit: 0, duration: 100000,
     cpu: 1, memory: 1Gi, accelerators: {flavor: "gpu/*", count: 1}}
  - {name: late, kind: Experiment, tenant: t, queue: q, submit: 10, duration: 100, cpu: 1, memory: 1Gi,
     accelerators: {flavor: "gpu/*", count: 1}}
)";
  TenancyConfig config = Config(kAgingConfig);
  EventSimResult r = RunEventSim(Input(kAging, &config), Until(200000));
  EXPECT_EQ(Job(r, "late").first_start_s, 10 + 4 * 3600);
  EXPECT_EQ(Job(r, "late").finish_s, 10 + 4 * 3600 + 100);
  EXPECT_EQ(Job(r, "early").preemptions, 1);
  // "early" resumes when "late" leaves, with the run time it had left.
  EXPECT_EQ(Job(r, "early").finish_s, 10 + 4 * 3600 + 100 + (100000 - (10 + 4 * 3600)));
  EXPECT_EQ(r.cycle_kinds.aging_steps, 1);
  EXPECT_TRUE(r.unplaced.empty());
  EXPECT_TRUE(r.warnings.empty());
}

// Two experiments that may both preempt: once "late" has aged past "early" and evicted it, the
// requeued "early" (aged as well, from its own earlier submit) outranks the running "late",
// which runs at its base priority — they would evict each other at that instant forever. The
// driver stops applying preemptions at that instant after max_rounds_per_instant and says so.
// Two aged workloads of one queue used to evict each other at one instant (the waiting one
// competed with its aged priority, the running one with its base priority). Aging now stops at
// admission: the late one takes the device once, at its aging step, and keeps it.
TEST(EventSim, AgedWorkloadsDoNotEvictEachOtherInTurn) {
  constexpr const char* kPingPong = R"(
nodes:
  - {name: n1, cpu: 16, memory: 64Gi, devices: ["gpu:nvidia:A100-80G:1:80Gi"]}
workloads:
  - {name: early, kind: Experiment, tenant: t, queue: q, submit: 0, duration: 100000, cpu: 1, memory: 1Gi,
     accelerators: {flavor: "gpu/*", count: 1}}
  - {name: late, kind: Experiment, tenant: t, queue: q, submit: 10, duration: 100, cpu: 1, memory: 1Gi,
     accelerators: {flavor: "gpu/*", count: 1}}
)";
  EventSimOptions o = Until(200000);
  o.max_rounds_per_instant = 50;
  EventSimResult r = RunEventSim(Input(kPingPong), o);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings[0];
  EXPECT_EQ(Job(r, "early").preemptions, 1);
  EXPECT_EQ(Job(r, "late").preemptions, 0);
  EXPECT_EQ(r.total.completed, 2);
}

// Aging steps that cannot change a decision run no cycle and do not stretch the run: a
// workload too big for every node ages to its ceiling while nothing else happens.
TEST(EventSim, IdleAgingStepsRunNoCycle) {
  constexpr const char* kIdle = R"(
nodes:
  - {name: n1, cpu: 16, memory: 64Gi, devices: ["gpu:nvidia:A100-80G:1:80Gi"]}
workloads:
  - {name: huge, kind: TrainingJob, queue: q, submit: 0, duration: 10, cpu: 1, memory: 1Gi,
     accelerators: {flavor: "gpu/*", count: 2}}
)";
  EventSimResult r = RunEventSim(Input(kIdle), {});
  EXPECT_EQ(r.end_s, 10);  // the horizon: the trace's last departure (0 + 10 s)
  EXPECT_EQ(r.cycles, 1);
  EXPECT_EQ(r.cycle_kinds.aging_steps, 0);
  ASSERT_EQ(r.unplaced.size(), 1u);
  EXPECT_EQ(r.unplaced[0].workload, "huge");
}

// The incremental cycles (fresh arrivals only, bounded after a completion, full after a
// requeue) decide what one full cycle per instant decides, on a trace with three queues, four
// priorities (in-queue preemption, preemptor claims) and best-effort work that can never run.
// Not gangs: a full cycle per instant tries a parked gang with the others in its queue's order,
// while incremental cycles try a gang holding nodes first (its hold persists, issue 20.12).
TEST(EventSim, IncrementalCyclesDecideLikeFullCycles) {
  std::string yaml = "nodes:\n";
  for (int n = 0; n < 6; ++n) {
    yaml += "  - {name: n" + std::to_string(n) + ", cpu: 64, memory: 256Gi, devices: [\"" +
            (n % 2 ? "gpu:nvidia:A100-80G:8:80Gi" : "gpu:nvidia:T4:4:16Gi") + "\"]}\n";
  }
  yaml += "workloads:\n";
  const char* kinds[] = {"TrainingJob", "Experiment", "BatchJob", "Evaluation"};
  for (int i = 0; i < 120; ++i) {
    const int count = 1 + (i * 7) % 8;
    yaml += "  - {name: w" + std::to_string(100 + i) + ", kind: " + kinds[i % 4] + ", queue: q" + std::to_string(i % 3) +
            ", submit: " + std::to_string((i * 37) % 900) + ", duration: " + std::to_string(50 + (i * 53) % 400) +
            ", cpu: 2, memory: 4Gi, accelerators: {flavor: \"" + (i % 5 ? "gpu/*" : "gpu/nvidia/T4") +
            "\", count: " + std::to_string(i % 5 ? count : 1 + count % 4) + "}";
    if (i % 11 == 0) yaml += ", priorityClass: best-effort";
    yaml += ", gang: false}\n";
  }
  EventInput in = Input(yaml.c_str());
  EventSimOptions full;
  full.incremental = false;
  EventSimResult a = RunEventSim(in, {});
  EventSimResult b = RunEventSim(in, full);
  EXPECT_GT(a.cycle_kinds.fresh + a.cycle_kinds.bounded, 0);
  EXPECT_GT(a.cycle_kinds.nominated, 0);
  EXPECT_GT(a.total.preempted, 0);
  EXPECT_LT(a.cycles, b.cycles);
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  int started = 0;
  for (size_t j = 0; j < a.jobs.size(); ++j) {
    EXPECT_EQ(a.jobs[j].first_start_s, b.jobs[j].first_start_s) << a.jobs[j].id;
    EXPECT_EQ(a.jobs[j].finish_s, b.jobs[j].finish_s) << a.jobs[j].id;
    EXPECT_EQ(a.jobs[j].first_nodes, b.jobs[j].first_nodes) << a.jobs[j].id;
    started += a.jobs[j].first_start_s.has_value();
  }
  EXPECT_GT(started, 60);
  EXPECT_EQ(a.total.pending_at_end, b.total.pending_at_end);
  EXPECT_EQ(a.unplaced.size(), b.unplaced.size());
}

// Issue 20.15: openb's best-effort pods in a queue without a cohort (the simulator's own queue
// when no config is given) can never run — best-effort runs only on borrowed capacity — and say
// so; before, the reason was a false quota shortage ("queue default uses 0 of nominal 16").
TEST(EventSim, OpenbBestEffortPodsWithoutACohortSayWhyTheyNeverRun) {
  std::vector<TraceNode> nodes = {{"n1", 16000, 65536, 2, "T4"}};
  TracePod be;
  be.name = "be-pod";
  be.cpu_milli = 4000;
  be.memory_mib = 1024;
  be.qos = TraceQos::kBE;
  be.creation_time = 0;
  be.deletion_time = 100;
  TracePod ls = be;
  ls.name = "ls-pod";
  ls.qos = TraceQos::kLS;
  auto in = BuildOpenbEventInput(nodes, {be, ls}, nullptr, "default");
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  EventSimResult r = RunEventSim(*in, {});
  EXPECT_TRUE(Job(r, "ls-pod").first_start_s.has_value());
  ASSERT_EQ(r.unplaced.size(), 1u);
  EXPECT_EQ(r.unplaced[0].workload, "be-pod");
  EXPECT_EQ(r.unplaced[0].code, "NeverFits");
  EXPECT_NE(r.unplaced[0].reason.find("best-effort"), std::string::npos) << r.unplaced[0].reason;
  EXPECT_NE(r.unplaced[0].reason.find("queue default is in no cohort"), std::string::npos) << r.unplaced[0].reason;
  EXPECT_EQ(r.unplaced[0].reason.find("uses 0 of nominal"), std::string::npos) << r.unplaced[0].reason;
}

// Issue 20.19: a run ends at its horizon — by default the trace's last arrival or departure —
// and what runs then (a service that never ends, a job that started late) counts up to it, so
// runs of one trace compare across policies; each pool reports its own allocation.
TEST(EventSim, TheHorizonEndsTheRunAndEachPoolReportsItsAllocation) {
  constexpr const char* kPools = R"(
nodes:
  - {name: n1, pool: train, cpu: 16, memory: 64Gi, devices: ["gpu:nvidia:A100-80G:2:80Gi"]}
  - {name: n2, pool: serve, cpu: 16, memory: 64Gi, devices: ["gpu:nvidia:A100-80G:2:80Gi"]}
workloads:
  - {name: job, kind: BatchJob, queue: q, submit: 0, duration: 100, cpu: 1, memory: 1Gi,
     accelerators: {flavor: "gpu/*", count: 1}}
  - {name: svc, kind: BatchJob, queue: q, submit: 0, cpu: 1, memory: 1Gi,
     accelerators: {flavor: "gpu/*", count: 1}}
  - {name: late, kind: BatchJob, queue: q, submit: 60, duration: 1000, cpu: 1, memory: 1Gi,
     accelerators: {flavor: "gpu/*", count: 2}}
)";
  EventInput in = Input(kPools);
  EXPECT_EQ(TraceHorizon(in), 1060);
  EventSimResult r = RunEventSim(in, {});
  EXPECT_EQ(r.end_s, 1060);
  EXPECT_EQ(r.total.completed, 2);       // job, and late (started at 60, ends at the horizon)
  EXPECT_EQ(r.total.running_at_end, 1);  // svc never ends: counted up to the horizon
  // Device-hours up to the horizon: job 100 s, svc 1060 s, late 2 × 1000 s.
  EXPECT_NEAR(r.total.device_hours, (100.0 + 1060.0 + 2000.0) / 3600.0, 1e-9);
  ASSERT_EQ(r.pools.size(), 2u);
  EXPECT_EQ(r.pools[0].pool, "serve");
  EXPECT_EQ(r.pools[1].pool, "train");
  double pool_hours = 0;
  for (const auto& p : r.pools) {
    EXPECT_EQ(p.nodes, 1);
    EXPECT_EQ(p.device_milli, 2000);
    pool_hours += p.device_hours;
    EXPECT_NEAR(p.mean_device_pct, 100.0 * p.device_hours * 3600.0 / 2.0 / 1060.0, 1e-6) << p.pool;
  }
  EXPECT_NEAR(pool_hours, r.total.device_hours, 1e-9);
  EXPECT_NEAR(r.mean_gpu_pct, 100.0 * (100.0 + 1060.0 + 2000.0) / 4.0 / 1060.0, 1e-9);
  // An earlier horizon: the same run cut at 50 s.
  EventSimResult cut = RunEventSim(in, Until(50));
  EXPECT_EQ(cut.end_s, 50);
  EXPECT_EQ(cut.total.submitted, 2);  // "late" arrives after it
  EXPECT_EQ(cut.total.completed, 0);
  EXPECT_NEAR(cut.total.device_hours, 2 * 50.0 / 3600.0, 1e-9);
  auto json = EventsJson(cut);
  EXPECT_EQ(json["pools"].size(), 2u);
  EXPECT_NE(EventsTable(cut).find("POOL"), std::string::npos);
}

}  // namespace
}  // namespace abacus::sim

namespace abacus::sim {
namespace {

// A DLRM-style serving replay with per-app max_instance_per_node (issue 24): binpack stacks each
// app's instances on the fullest nodes; with maxPerNode honoured no node holds more than the limit.
constexpr char kPerNodeLimits[] = R"(
nodes:
  - {name: n1, cpu: 64, memory: 256Gi, devices: ["gpu:nvidia:A100-80G:8"]}
  - {name: n2, cpu: 64, memory: 256Gi, devices: ["gpu:nvidia:A100-80G:8"]}
  - {name: n3, cpu: 64, memory: 256Gi, devices: ["gpu:nvidia:A100-80G:8"]}
workloads:
  - {name: app-1, kind: InferenceService, submit: 0, replicas: 6, cpu: 2, memory: 8Gi, maxPerNode: 2,
     accelerators: {flavor: "gpu/*", count: 1}}
  - {name: app-2, kind: InferenceService, submit: 5, replicas: 3, cpu: 2, memory: 8Gi, maxPerNode: 1,
     accelerators: {flavor: "gpu/*", count: 1}}
  - {name: app-3, kind: InferenceService, submit: 10, replicas: 4, cpu: 1, memory: 4Gi, maxPerNode: 2}
)";

TEST(EventSim, PerNodeLimitsReplayWithZeroViolations) {
  EventInput in = Input(kPerNodeLimits);
  EventSimOptions ignored = Until(100);
  ignored.placement_rules = false;  // what a scheduler that cannot express the rule does
  EventSimResult before = RunEventSim(in, ignored);
  EXPECT_GT(before.violations.max_per_node, 0);
  EventSimResult after = RunEventSim(in, Until(100));
  EXPECT_EQ(after.violations.max_per_node, 0);
  for (const char* app : {"app-1", "app-2", "app-3"}) {
    const JobOutcome& j = Job(after, app);
    ASSERT_TRUE(j.first_start_s.has_value()) << app;
    std::map<std::string, int> per_node;
    for (const auto& n : j.first_nodes) ++per_node[n];
    const int max = std::string(app) == "app-2" ? 1 : 2;
    for (const auto& [node, tasks] : per_node) EXPECT_LE(tasks, max) << app << " on " << node;
  }
  EXPECT_EQ(EventsJson(after, false)["placement_rule_violations"]["max_per_node"], 0);
}

// The DLRM-style serving replay of issue 24 with every rule the trace carries: per-app limits,
// zone spread, one anti-affinity pair and RDMA requests. Binpack without the rules stacks each
// app on the fullest node; with them the replay breaks none, counted from its own placements.
constexpr char kServingRules[] = R"(
nodes:
  - {name: n1, cpu: 64, memory: 256Gi, labels: {zone: a}, devices: ["gpu:nvidia:A100-80G:8"], extended: {rdma/hca: 2}}
  - {name: n2, cpu: 64, memory: 256Gi, labels: {zone: a}, devices: ["gpu:nvidia:A100-80G:8"], extended: {rdma/hca: 2}}
  - {name: n3, cpu: 64, memory: 256Gi, labels: {zone: b}, devices: ["gpu:nvidia:A100-80G:8"], extended: {rdma/hca: 2}}
  - {name: n4, cpu: 64, memory: 256Gi, labels: {zone: b}, devices: ["gpu:nvidia:A100-80G:8"], extended: {rdma/hca: 2}}
workloads:
  - {name: ranker, kind: InferenceService, submit: 0, replicas: 4, cpu: 2, memory: 8Gi, maxPerNode: 2,
     accelerators: {flavor: "gpu/*", count: 1}}
  - {name: embed, kind: InferenceService, submit: 5, replicas: 4, cpu: 2, memory: 8Gi,
     spread: [{topologyKey: zone, maxSkew: 1}], accelerators: {flavor: "gpu/*", count: 1}}
  - {name: feature, kind: InferenceService, submit: 10, replicas: 2, cpu: 1, memory: 4Gi}
  - {name: recall, kind: InferenceService, submit: 15, replicas: 2, cpu: 1, memory: 4Gi, antiAffinity: [feature]}
  - {name: dlrm-train, kind: TrainingJob, submit: 20, duration: 50, replicas: 4, cpu: 4, memory: 16Gi,
     extended: {rdma/hca: 1}, accelerators: {flavor: "gpu/*", count: 1}}
)";

TEST(EventSim, SpreadAntiAffinityAndExtendedReplayWithZeroViolations) {
  EventInput in = Input(kServingRules);
  EventSimOptions ignored = Until(100);
  ignored.placement_rules = false;  // a scheduler that cannot express them
  EventSimResult before = RunEventSim(in, ignored);
  EXPECT_GT(before.violations.max_per_node, 0);
  EXPECT_GT(before.violations.spread, 0);
  EXPECT_GT(before.violations.anti_affinity, 0);
  EXPECT_GT(before.violations.extended, 0);
  EventSimResult after = RunEventSim(in, Until(100));
  EXPECT_EQ(after.violations.total(), 0);
  EXPECT_EQ(after.total.completed + after.total.running_at_end, 5);  // every workload started
  // Check the placements directly too: zones within one, feature and recall apart, RDMA within 2.
  std::map<std::string, int> zone;
  for (const auto& n : Job(after, "embed").first_nodes) ++zone[n == "n1" || n == "n2" ? "a" : "b"];
  EXPECT_LE(std::abs(zone["a"] - zone["b"]), 1);
  for (const auto& f : Job(after, "feature").first_nodes) {
    for (const auto& r : Job(after, "recall").first_nodes) EXPECT_NE(f, r);
  }
  std::map<std::string, int> rdma;
  for (const auto& n : Job(after, "dlrm-train").first_nodes) ++rdma[n];
  for (const auto& [node, held] : rdma) EXPECT_LE(held, 2) << node;
  auto json = EventsJson(before, false)["placement_rule_violations"];
  EXPECT_EQ(json["total"], before.violations.total());
  EXPECT_EQ(json["spread"], before.violations.spread);
  EXPECT_NE(EventsTable(before).find("antiAffinity " + std::to_string(before.violations.anti_affinity)), std::string::npos);
}

// examples/traces/dlrm-serving (both forms, docs/simulator.md §2): the same trace, every rule
// kept when honoured, each kind broken when not.
TEST(EventSim, DlrmServingExampleKeepsEveryRule) {
  const std::string dir = std::string(ABACUS_SOURCE_DIR) + "/examples/traces/";
  auto yaml = LoadGenericTrace(dir + "dlrm-serving.yaml");
  ASSERT_TRUE(yaml.ok()) << yaml.status().ToString();
  auto csv = LoadGenericTrace(dir + "dlrm-serving");
  ASSERT_TRUE(csv.ok()) << csv.status().ToString();
  EXPECT_EQ(yaml->nodes, csv->nodes);
  EXPECT_EQ(yaml->workloads, csv->workloads);
  auto in = BuildEventInput(*yaml, nullptr);
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  EventSimOptions ignored;
  ignored.placement_rules = false;
  EventSimResult before = RunEventSim(*in, ignored);
  EXPECT_GT(before.violations.max_per_node, 0);
  EXPECT_GT(before.violations.spread, 0);
  EXPECT_GT(before.violations.anti_affinity, 0);
  EXPECT_GT(before.violations.extended, 0);
  EventSimResult after = RunEventSim(*in, {});
  EXPECT_EQ(after.violations.total(), 0);
  EXPECT_TRUE(after.unplaced.empty()) << after.unplaced.front().workload << ": " << after.unplaced.front().reason;
}

// The replay counts anti-affinity both ways (a start next to a service its rule names, and next
// to a service whose rule names it) and gives back what a finished workload held.
TEST(EventSim, ReplayRuleTallyCountsBothDirectionsAndReleases) {
  std::vector<sched::NodeInfo> nodes(1);
  nodes[0].name = "n1";
  auto rdma = *ExtendedResource::Parse("rdma/hca");
  sched::SetExtended(&nodes[0].extended, rdma.Intern(), 1);
  auto workload = [&](const std::string& name, std::vector<std::string> avoid, int64_t hca) {
    sched::WorkloadInfo w;
    w.id = w.name = name;
    sched::TaskGroupRequest g;
    g.rules.anti_affinity = std::move(avoid);
    if (hca > 0) sched::SetExtended(&g.task.extended, rdma.Intern(), hca);
    w.groups.push_back(std::move(g));
    return w;
  };
  std::vector<sched::TaskPlacement> on_n1(1);
  on_n1[0].node = 0;
  ReplayRuleTally tally(nodes);
  tally.Start(0, workload("a", {}, 1), on_n1);
  EXPECT_EQ(tally.violations().total(), 0);
  tally.Start(1, workload("b", {"a"}, 0), on_n1);   // b's rule names a
  EXPECT_EQ(tally.violations().anti_affinity, 1);
  tally.Start(2, workload("c", {}, 1), on_n1);      // a second HCA on a node that has one
  EXPECT_EQ(tally.violations().extended, 1);
  tally.Stop(2);
  tally.Stop(1);
  tally.Start(3, workload("d", {"b"}, 0), on_n1);   // b is gone: nothing to keep apart
  EXPECT_EQ(tally.violations().anti_affinity, 1);
  tally.Stop(0);
  tally.Start(4, workload("a", {}, 1), on_n1);      // d's rule names b, not a; the HCA is free again
  EXPECT_EQ(tally.violations().extended, 1);
  tally.Start(5, workload("b", {}, 0), on_n1);      // d's rule names b: reverse direction
  EXPECT_EQ(tally.violations().anti_affinity, 2);
}

TEST(EventSim, MaxPerNodeColumnIsReadAndChecked) {
  auto csv = ParseGenericTraceCsv("name,cpu,memory\nn1,8,8Gi\n", "nodes.csv",
                                  "name,kind,submit,replicas,maxPerNode\na,InferenceService,0,2,2\nb,BatchJob,0,1,x\n",
                                  "workloads.csv");
  ASSERT_FALSE(csv.ok());
  EXPECT_NE(csv.status().message().find("workloads.csv:3: maxPerNode: expected a whole number of replicas per node"),
            std::string::npos)
      << csv.status().message();
  auto ok = ParseGenericTraceCsv("name,cpu,memory\nn1,8,8Gi\n", "nodes.csv",
                                 "name,kind,submit,replicas,maxPerNode\na,InferenceService,0,2,2\n", "workloads.csv");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->workloads[0].max_per_node, 2);
}

}  // namespace
}  // namespace abacus::sim

namespace abacus::sim {
namespace {

// Fair share over time (docs/scheduler.md): examples/traces/fair-share — team-a bursts on
// borrowed capacity on day 0; from day 1 both teams want the 16 borrowable GPUs. Without fair
// share they split it; with it, team-b (no past usage) goes first on day 1.
TEST(EventSim, FairShareOverTimePrefersTheQueueThatDidNotBurst) {
  EventInputOptions io;
  io.trace = std::string(ABACUS_SOURCE_DIR) + "/examples/traces/fair-share/trace.yaml";
  io.config = std::string(ABACUS_SOURCE_DIR) + "/examples/traces/fair-share/org.yaml";
  auto in = LoadEventInput(io);
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  auto day = [](const EventSimResult& r, const std::string& queue, size_t d) {
    for (const auto& q : r.queues) {
      if (q.name == queue) return d < q.device_hours_by_day.size() ? q.device_hours_by_day[d] : 0.0;
    }
    ADD_FAILURE() << "no queue " << queue;
    return 0.0;
  };
  EventSimOptions off = Until(4 * 86400);
  EventSimOptions on = Until(4 * 86400);
  on.config.fair_share_half_life = std::chrono::hours(24 * 7);
  EventSimResult without = RunEventSim(*in, off), with = RunEventSim(*in, on);
  // Day 0: only team-a, 24 GPUs (8 nominal + 16 borrowed) around the clock, either way.
  EXPECT_DOUBLE_EQ(day(without, "team-a", 0), 576.0);
  EXPECT_DOUBLE_EQ(day(with, "team-a", 0), 576.0);
  // Day 1: without fair share the borrowed 16 are split; with it team-b takes them.
  EXPECT_NEAR(day(without, "team-a", 1), day(without, "team-b", 1), 8.0 * 2);
  EXPECT_GT(day(with, "team-b", 1), day(with, "team-a", 1) + 100);
  EXPECT_GT(day(with, "team-b", 1), day(without, "team-b", 1));
  // Capacity is used as fully either way.
  for (size_t d = 0; d < 4; ++d) {
    EXPECT_DOUBLE_EQ(day(with, "team-a", d) + day(with, "team-b", d), day(without, "team-a", d) + day(without, "team-b", d))
        << "day " << d;
  }
  std::string table = EventsTable(with);
  EXPECT_NE(table.find("device-hours per day:"), std::string::npos) << table;
}


// ------------------------------------------------------------------ device faults

// Two nodes of 4 GPUs each; the workloads of each test are added to it.
std::string FaultTrace(const std::string& workloads) {
  return R"(
nodes:
  - {name: n1, cpu: 16, memory: 64Gi, devices: ["gpu:nvidia:A100-80G:4:80Gi"]}
  - {name: n2, cpu: 16, memory: 64Gi, devices: ["gpu:nvidia:A100-80G:4:80Gi"]}
workloads:
)" + workloads;
}

std::string Gpus(const std::string& name, int64_t submit, int64_t duration, int count) {
  return "  - {name: " + name + ", kind: BatchJob, queue: q, submit: " + std::to_string(submit) +
         ", duration: " + std::to_string(duration) + ", cpu: 1, memory: 1Gi, accelerators: {flavor: \"gpu/*\", count: " +
         std::to_string(count) + "}}\n";
}

EventSimOptions WithFaults(int64_t until_s, const EventInput& in, const std::string& schedule) {
  EventSimOptions o = Until(until_s);
  auto faults = ParseFaultSchedule(schedule, "faults.txt", in.cluster.nodes);
  EXPECT_TRUE(faults.ok()) << faults.status().ToString();
  if (faults.ok()) o.faults = *faults;
  return o;
}

std::string Other(const std::string& node) { return node == "n1" ? "n2" : "n1"; }

// A fault on the device a running workload uses: the attempt is lost (its run time thrown away),
// the workload requeues and restarts from zero on the other node at once.
TEST(EventSimFaults, FaultOnABusyDeviceRequeuesItsWorkloadWhichRunsElsewhere) {
  // "a" takes all 4 GPUs of a node, so whichever device faults is one of its.
  EventInput in = Input(FaultTrace(Gpus("a", 0, 100, 4)).c_str());
  const std::string first = Job(RunEventSim(in, Until(500)), "a").first_nodes.at(0);
  EventSimResult r = RunEventSim(in, WithFaults(500, in, "30 " + first + " 2 fault XID 79\n"));
  EXPECT_EQ(Job(r, "a").first_start_s, 0);
  EXPECT_EQ(Job(r, "a").fault_requeues, 1);
  EXPECT_EQ(Job(r, "a").finish_s, 130);  // restarted at 30 on the other node, 100 s again
  EXPECT_EQ(r.faults.device_faults, 1);
  EXPECT_EQ(r.faults.requeued, 1);
  EXPECT_EQ(r.faults.cordons, 0);
  EXPECT_NEAR(r.faults.lost_device_hours, 4 * 30 / 3600.0, 1e-9);
  EXPECT_NEAR(r.faults.unhealthy_device_hours, (500 - 30) / 3600.0, 1e-9);  // never recovered
  EXPECT_EQ(r.queues.at(0).fault_requeued, 1);
  EXPECT_NEAR(r.total.fault_lost_device_hours, 4 * 30 / 3600.0, 1e-9);
  EXPECT_NEAR(r.total.device_hours, 4 * (30 + 100) / 3600.0, 1e-9);  // the lost run was allocated too
  EXPECT_EQ(EventsJson(r)["faults"]["requeued"], 1);
  EXPECT_NE(EventsTable(r).find("workloads requeued by faults: 1"), std::string::npos) << EventsTable(r);
  EXPECT_NE(EventsCsv(r).find("fault_requeued,fault_lost_device_hours\n"), std::string::npos);
  // Nowhere to go (both nodes' devices faulted): it waits and restarts once a device is back.
  r = RunEventSim(in, WithFaults(2000, in,
                                 "30 n1 0 fault\n30 n2 0 fault\n100 n1 0 recover\n100 n2 0 recover\n"));
  EXPECT_EQ(Job(r, "a").fault_requeues, 1);
  EXPECT_EQ(Job(r, "a").finish_s, 700 + 100);  // probation (the clean window, 10m) ends at 700
}

// A fault on a free device takes only its capacity: nothing requeues, and work that needed it waits.
TEST(EventSimFaults, FaultOnAFreeDeviceChangesNothingButCapacity) {
  EventInput in = Input(FaultTrace(Gpus("small", 0, 1000, 1) + Gpus("big", 50, 100, 4) + Gpus("big2", 60, 100, 4)).c_str());
  EventSimResult before = RunEventSim(in, Until(2000));
  const std::string busy = Job(before, "small").first_nodes.at(0);
  EXPECT_EQ(Job(before, "big").first_start_s, 50);
  EXPECT_EQ(Job(before, "big").first_nodes.at(0), Other(busy));
  EXPECT_EQ(Job(before, "big2").first_start_s, 150);
  // Fault a device of the node "small" does not run on: neither node has 4 healthy free GPUs
  // until "small" is done; then "big" and "big2" take its node in turn.
  EventSimResult r = RunEventSim(in, WithFaults(2000, in, "10 " + Other(busy) + " 3 fault XID 48\n"));
  EXPECT_EQ(r.faults.requeued, 0);
  EXPECT_EQ(r.faults.device_faults, 1);
  EXPECT_EQ(Job(r, "small").fault_requeues, 0);
  EXPECT_EQ(Job(r, "small").finish_s, 1000);
  EXPECT_EQ(Job(r, "big").first_start_s, 1000);
  EXPECT_EQ(Job(r, "big").first_nodes.at(0), busy);
  EXPECT_EQ(Job(r, "big2").first_start_s, 1100);
  EXPECT_NEAR(r.faults.unhealthy_device_hours, (2000 - 10) / 3600.0, 1e-9);
}

// cordon_after faults within the window cordon the node (new work goes elsewhere although it has a
// healthy device); once the devices are back, the clean window uncordons it, and the driver wakes
// at that instant to place what waited for it.
TEST(EventSimFaults, FaultsCordonTheNodeAndTheCleanWindowBringsItBack) {
  EventInput probe = Input(FaultTrace(Gpus("x", 40, 10000, 1)).c_str());
  const std::string home = Job(RunEventSim(probe, Until(20000)), "x").first_nodes.at(0);
  EventInput in = Input(FaultTrace(Gpus("x", 40, 10000, 1) + Gpus("y", 100, 100, 4)).c_str());
  const std::string faults = "10 " + home + " 0 fault XID 79\n20 " + home + " 1 fault XID 48\n30 " + home +
                             " 2 fault XID 94\n50 " + home + " 0 recover\n50 " + home + " 1 recover\n50 " + home +
                             " 2 recover\n";
  EventSimResult r = RunEventSim(in, WithFaults(20000, in, faults));
  EXPECT_EQ(r.faults.device_faults, 3);
  EXPECT_EQ(r.faults.cordons, 1);
  EXPECT_EQ(r.faults.uncordons, 1);
  EXPECT_EQ(Job(r, "x").first_nodes.at(0), Other(home));  // device 3 of `home` was healthy, but it is cordoned
  // y needs a whole node: `home`, back at 50 + 10m (probation, and 10m after the last fault).
  EXPECT_EQ(Job(r, "y").first_start_s, 650);
  EXPECT_EQ(Job(r, "y").first_nodes.at(0), home);
  ASSERT_GE(r.faults.log.size(), 2u);
  bool cordoned = false, uncordoned = false;
  for (const auto& c : r.faults.log) {
    if (c.kind == HealthChange::Kind::kCordoned) cordoned = c.t_s == 30 && c.node == home;
    if (c.kind == HealthChange::Kind::kUncordoned) uncordoned = c.t_s == 650 && c.node == home;
  }
  EXPECT_TRUE(cordoned);
  EXPECT_TRUE(uncordoned);
  // The same faults spread wider than the window never cordon.
  EventSimOptions narrow = WithFaults(20000, in, faults);
  narrow.health.window = std::chrono::seconds(15);
  r = RunEventSim(in, narrow);
  EXPECT_EQ(r.faults.cordons, 0);
  // An operator's uncordon ends the cordon and the probations at once.
  r = RunEventSim(in, WithFaults(20000, in, faults + "200 " + home + " uncordon\n"));
  EXPECT_EQ(r.faults.operator_uncordons, 1);
  EXPECT_EQ(r.faults.uncordons, 0);
  EXPECT_EQ(Job(r, "y").first_start_s, 200);
}

// A fault during a victim's grace period ends it at once without its checkpoint: it requeues with
// the run time it had when the attempt started, and its preemptor gets what is left at once.
TEST(EventSimFaults, FaultDuringTheGracePeriodLosesTheCheckpoint) {
  TenancyConfig config = Config(kTwoTeamsInACohort);
  EventInput in = Input(R"(
nodes:
  - {name: n1, cpu: 16, memory: 64Gi, devices: ["gpu:nvidia:A100-80G:2:80Gi"]}
workloads:
  - {name: wide, kind: Experiment, tenant: t1, queue: q1, submit: 0, duration: 1000, cpu: 1, memory: 1Gi,
     accelerators: {flavor: "gpu/*", count: 2}}
  - {name: owner, kind: Experiment, tenant: t2, queue: q2, submit: 100, duration: 50, cpu: 1, memory: 1Gi,
     accelerators: {flavor: "gpu/*", count: 1}}
)", &config);
  for (auto& j : in.jobs) j.workload.grace_seconds = 50;  // "wide" would checkpoint until 150
  EventSimResult calm = RunEventSim(in, Until(5000));
  EXPECT_EQ(Job(calm, "owner").first_start_s, 150);
  EXPECT_EQ(Job(calm, "wide").finish_s, 200 + 850);  // resumed when "owner" left, with 850 s left
  EventSimResult r = RunEventSim(in, WithFaults(5000, in, "120 n1 0 fault\n200 n1 0 recover\n"));
  EXPECT_EQ(Job(r, "wide").preemptions, 1);
  EXPECT_EQ(Job(r, "wide").fault_requeues, 1);
  EXPECT_EQ(Job(r, "owner").first_start_s, 120);  // the claim resolved when the fault stopped "wide"
  EXPECT_NEAR(r.faults.lost_device_hours, 2 * 120 / 3600.0, 1e-9);
  // Both devices again once device 0's probation ends (200 + 10m): the whole 1000 s again.
  EXPECT_EQ(Job(r, "wide").finish_s, 800 + 1000);
}

TEST(EventSimFaults, BadScheduleLinesSayFileLineAndField) {
  EventInput in = Input(FaultTrace(Gpus("a", 0, 100, 1)).c_str());
  auto error = [&](const std::string& text) {
    auto r = ParseFaultSchedule(text, "f.txt", in.cluster.nodes);
    EXPECT_FALSE(r.ok()) << text;
    return r.ok() ? std::string() : r.status().message();
  };
  EXPECT_NE(error("# c\n\n10 n9 0 fault\n").find("f.txt:3: node: expected a node of the trace"), std::string::npos);
  EXPECT_NE(error("10 n1 4 fault\n").find("f.txt:1: device: expected a device index of node n1 (0,1,2,3)"), std::string::npos);
  EXPECT_NE(error("1x n1 0 fault\n").find("f.txt:1: time: expected seconds"), std::string::npos);
  EXPECT_NE(error("10 n1 0 broke\n").find("f.txt:1: event: expected fault or recover, got 'broke'"), std::string::npos);
  EXPECT_NE(error("10 n1 0\n").find("f.txt:1: event: expected fault or recover"), std::string::npos);
  EXPECT_NE(error("10 n1\n").find("f.txt:1: expected 'TIME NODE DEVICE fault"), std::string::npos);
  EXPECT_NE(error("10 n1 uncordon now\n").find("f.txt:1: uncordon: expected nothing"), std::string::npos);
  EXPECT_NE(error("10 n1 0 recover soon\n").find("f.txt:1: recover: expected nothing"), std::string::npos);
  // Out of order: applied in time order, same-time lines in file order; reasons and comments.
  auto ok = ParseFaultSchedule("2h n2 1 recover\n90m n2 1 fault XID 79: off the bus # a comment\n5400 n1 uncordon\n",
                               "f.txt", in.cluster.nodes);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  ASSERT_EQ(ok->size(), 3u);
  EXPECT_EQ((*ok)[0].t_s, 5400);
  EXPECT_EQ((*ok)[0].kind, FaultEvent::Kind::kFault);
  EXPECT_EQ((*ok)[0].reason, "XID 79: off the bus");
  EXPECT_EQ((*ok)[0].where, "f.txt:2");
  EXPECT_EQ((*ok)[1].kind, FaultEvent::Kind::kUncordon);
  EXPECT_EQ((*ok)[2].t_s, 7200);
}

TEST(EventSimFaults, RandomFaultsAreSeededAndRecoverAfterTheRepairTime) {
  EventInput in = Input(FaultTrace(Gpus("a", 0, 100, 1)).c_str());
  FaultRateOptions fr;
  fr.per_device_day = 2;
  fr.repair = std::chrono::hours(1);
  fr.to_s = 10 * 86400;
  std::vector<FaultEvent> a = RandomFaults(in.cluster.nodes, fr), b = RandomFaults(in.cluster.nodes, fr);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].t_s, b[i].t_s);
  // About 2 per device-day over 8 devices and 10 days (each followed by its recovery).
  EXPECT_GT(a.size(), 2u * 80);
  EXPECT_LT(a.size(), 2u * 240);
  fr.seed = 7;
  EXPECT_NE(RandomFaults(in.cluster.nodes, fr).front().t_s, a.front().t_s);
}

// The simulator and a scenario file reach the same decisions for the same fault sequence: both
// run the server's health rule (sched/health_rule.h). The scenario's expectations are written
// from the simulator's log.
TEST(EventSimFaults, SimulatorAndScenarioCordonAlike) {
  EventInput in = Input(FaultTrace(Gpus("a", 0, 7200, 1)).c_str());
  struct Step {
    int64_t t;
    std::string line;  // the fault schedule's line, or empty for a check only
  };
  const std::vector<Step> steps = {
      {0, "n1 0 fault"},      {4200, "n1 1 fault"},   {4800, "n1 2 fault"},  // the first is forgotten by 70m
      {5400, "n1 0 recover"}, {5400, "n1 1 recover"}, {5400, "n1 2 recover"},
      {5500, ""},             {5700, ""},             {6000, "n1 3 fault"},  {6060, "n1 2 fault"},
      {6300, ""},             {7000, "n1 uncordon"},  {7100, ""}};
  std::string schedule;
  for (const auto& s : steps) {
    if (!s.line.empty()) schedule += std::to_string(s.t) + " " + s.line + "\n";
  }
  EventSimOptions o = WithFaults(7200, in, schedule);
  o.health.cordon_after = 2;
  o.health.window = std::chrono::hours(1);
  o.health.clean_window = std::chrono::minutes(5);
  EventSimResult r = RunEventSim(in, o);
  // The simulator's view of n1 after everything at or before t.
  auto state_at = [&](int64_t t) {
    bool cordoned = false;
    std::set<int32_t> out;
    for (const auto& c : r.faults.log) {
      if (c.t_s > t || c.node != "n1") continue;
      if (c.kind == HealthChange::Kind::kFault) out.insert(c.device);
      if (c.kind == HealthChange::Kind::kRecovered) out.erase(c.device);
      if (c.kind == HealthChange::Kind::kCordoned) cordoned = true;
      if (c.kind == HealthChange::Kind::kUncordoned) cordoned = false;
      if (c.kind == HealthChange::Kind::kOperatorUncordon) {
        cordoned = false;
        for (auto it = out.begin(); it != out.end();) {  // probations end at once
          bool recovering = false;
          for (const auto& p : r.faults.log) {
            if (p.t_s <= t && p.node == "n1" && p.device == *it) recovering = p.kind == HealthChange::Kind::kRecovering || (recovering && p.kind != HealthChange::Kind::kFault);
          }
          it = recovering ? out.erase(it) : std::next(it);
        }
      }
    }
    std::string unhealthy;
    for (int32_t d : out) unhealthy += (unhealthy.empty() ? "" : ",") + std::to_string(d);
    return std::string(cordoned ? "Cordoned" : "Ready") + " unhealthy=" + (unhealthy.empty() ? "none" : unhealthy);
  };
  EXPECT_EQ(r.faults.cordons, 2);
  std::string scn =
      "flavor gpu/nvidia/A100-80G\n"
      "health cordonAfter=2 window=1h cleanWindow=5m\n"
      "node n1 devices=gpu/nvidia/A100-80G*4\n"
      "node n2 devices=gpu/nvidia/A100-80G*4\n"
      "queue q quota.gpu/nvidia/A100-80G=8\n";
  for (const auto& s : steps) {
    scn += "now " + std::to_string(s.t) + "s\n";
    if (!s.line.empty()) {
      std::istringstream f(s.line);
      std::string node, device, verb;
      f >> node >> device >> verb;
      scn += device == "uncordon" ? "uncordon " + node + "\n" : verb + " node=" + node + " device=" + device + "\n";
    }
    scn += "expect node n1 " + state_at(s.t) + "\n";
  }
  auto parsed = ParseScenario(scn, "alike.scn");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString() << "\n" << scn;
  ScenarioOutcome outcome = ScenarioRunner(*parsed).RunAll();
  EXPECT_TRUE(outcome.ok()) << scn << "\n" << (outcome.failures.empty() ? "" : outcome.failures.front());
  EXPECT_EQ(outcome.expectations, static_cast<int>(steps.size()));
}

}  // namespace
}  // namespace abacus::sim
