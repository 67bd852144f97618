#include "control/inference.h"

#include <gtest/gtest.h>

#include "control/control_test_util.h"

namespace abacus::control {
namespace {

using namespace testing;  // NOLINT

Workload Service(int32_t replicas, std::optional<Rollout> rollout = std::nullopt) {
  InferenceSpec s;
  s.replicas = replicas;
  s.min_replicas = 1;
  s.max_replicas = 8;
  s.probes.readiness = Probe{};
  s.probes.readiness->failure_threshold = 3;
  s.probes.readiness->initial_delay_seconds = 5;
  s.probes.liveness = Probe{};
  s.probes.liveness->failure_threshold = 3;
  s.rollout = std::move(rollout);
  Workload w = MakeSpec(s);
  w.labels["version"] = "1.4";
  return w;
}

WorkloadView Serving(const Workload& spec, int32_t replicas, std::string version = "1.4") {
  WorkloadView w = View(spec, WorkloadState::kRunning);
  for (int32_t r = 0; r < replicas; ++r) {
    w.tasks.push_back(Task(r, TaskPhase::kRunning, T(0)));
    w.tasks.back().version = version;
  }
  return w;
}

void Probes(Signals& sig, int32_t replica, ProbeResult::Kind kind, std::vector<bool> results, int64_t from) {
  for (bool ok : results) sig.probes.push_back({{0, replica}, kind, ok, T(from++)});
}

// Every replica of `w` passed readiness at `t`.
Signals AllReady(const WorkloadView& w, int64_t t) {
  Signals sig;
  for (const TaskView& task : w.tasks) sig.probes.push_back({task.ref(), ProbeResult::Kind::kReadiness, true, T(t)});
  return sig;
}

Decisions Step(WorkloadView& w, InferenceState& s, const Signals& sig, Time now) {
  return StepWith(w, s, [&](const WorkloadView& v, const InferenceState& st) { return ReconcileInference(v, st, sig, now); });
}

TEST(InferenceTest, ReadinessFollowsProbesAfterTheInitialDelay) {
  Workload spec = Service(1);
  WorkloadView w = Serving(spec, 1);
  InferenceState s;
  Signals sig;
  Probes(sig, 0, ProbeResult::Kind::kReadiness, {true}, 2);  // before initialDelaySeconds: ignored
  EXPECT_TRUE(Step(w, s, sig, T(3)).empty());
  Probes(sig, 0, ProbeResult::Kind::kReadiness, {true}, 10);
  Decisions ds = Step(w, s, sig, T(10));
  EXPECT_EQ(Types(ds), "SetReady,Event:ReplicaReady");
  EXPECT_TRUE(std::get<SetReady>(ds[0]).ready);
  Probes(sig, 0, ProbeResult::Kind::kReadiness, {false, false}, 20);
  EXPECT_TRUE(Step(w, s, sig, T(22)).empty());  // 2 < failureThreshold: still ready
  Probes(sig, 0, ProbeResult::Kind::kReadiness, {false}, 22);
  ds = Step(w, s, sig, T(23));
  EXPECT_EQ(Types(ds), "SetReady,Event:ReplicaNotReady");
  EXPECT_TRUE(Step(w, s, sig, T(24)).empty());
}

TEST(InferenceTest, LivenessFailuresRestartTheReplicaWithCrashLoopBackoff) {
  Workload spec = Service(2);
  WorkloadView w = Serving(spec, 2);
  InferenceState s;
  Signals sig;
  Probes(sig, 1, ProbeResult::Kind::kLiveness, {false, false}, 10);
  EXPECT_EQ(Find<RestartReplica>(Step(w, s, sig, T(12))), nullptr);
  Probes(sig, 1, ProbeResult::Kind::kLiveness, {false}, 12);
  Decisions ds = Step(w, s, sig, T(13));
  const RestartReplica* r = Find<RestartReplica>(ds);
  ASSERT_NE(r, nullptr) << Types(ds);
  EXPECT_EQ(r->replica, 1);
  EXPECT_EQ(r->reason, "LivenessFailed");
  EXPECT_EQ(r->not_before, T(13));  // first restart: at once
  ASSERT_NE(FindEvent(ds, "LivenessFailed"), nullptr);
  EXPECT_TRUE(Step(w, s, sig, T(14)).empty());  // restart in progress
  // The new run fails again within minutes: the second restart waits 10s.
  w.tasks[1] = Task(1, TaskPhase::kRunning, T(20));
  w.tasks[1].version = "1.4";
  Probes(sig, 1, ProbeResult::Kind::kLiveness, {false, false, false}, 30);
  ds = Step(w, s, sig, T(33));
  ASSERT_NE(Find<RestartReplica>(ds), nullptr);
  EXPECT_EQ(Find<RestartReplica>(ds)->not_before, T(43));
}

TEST(InferenceTest, AnExitedReplicaIsRestartedAndALostOneReplacedAtOnce) {
  Workload spec = Service(2);
  spec.details = [&] {
    InferenceSpec s = *spec.inference();
    s.probes = {};
    return s;
  }();
  WorkloadView w = Serving(spec, 2);
  w.tasks[0] = Exited(0, 1, T(50));
  w.tasks[1] = Lost(1, LostReason::kNodeLost, T(50));
  InferenceState s;
  s.restarts[1] = {3, T(40)};
  Decisions ds = ReconcileInference(w, s, {}, T(50)).decisions;
  std::vector<RestartReplica> rs = FindAll<RestartReplica>(ds);
  ASSERT_EQ(rs.size(), 2u) << Types(ds);
  EXPECT_EQ(rs[0].reason, "ReplicaExited");
  EXPECT_EQ(rs[1].reason, "ReplicaLost");
  EXPECT_EQ(rs[1].not_before, T(50));
}

TEST(InferenceTest, AutoscaledUpWithShortageWhileReplicasAreMissing) {
  Workload spec = Service(2);
  InferenceSpec is = *spec.inference();
  is.autoscaling = Autoscaling{"qps", Quantity::FromMilli(100'000), 60, 300};
  spec.details = is;
  WorkloadView w = Serving(spec, 2);
  InferenceState s;
  Signals sig;
  sig.metrics = {{0, "qps", 200, T(10)}, {1, "qps", 200, T(10)}};
  Decisions ds = Step(w, s, sig, T(10));
  const ScaleTo* scale = Find<ScaleTo>(ds);
  ASSERT_NE(scale, nullptr) << Types(ds);
  EXPECT_EQ(scale->replicas, 4);
  EXPECT_EQ(FindEvent(ds, "Scaled")->details["to"], 4);
  const RecordShortage* open = Find<RecordShortage>(ds);
  ASSERT_NE(open, nullptr);
  EXPECT_EQ(open->wanted, 4);
  EXPECT_EQ(open->available, 2);
  EXPECT_FALSE(open->end.has_value());
  EXPECT_TRUE(Step(w, s, sig, T(11)).empty());
  for (int32_t r : {2, 3}) w.tasks.push_back(Task(r, TaskPhase::kPending));
  ds = Step(w, s, sig, T(40));
  const RecordShortage* closed = Find<RecordShortage>(ds);
  ASSERT_NE(closed, nullptr) << Types(ds);
  EXPECT_EQ(closed->start, T(10));
  EXPECT_EQ(closed->end, T(40));
  EXPECT_EQ(FindEvent(ds, "ShortageEnded")->details["seconds"], 30);
}

// The fourth probe: a shortage whose cause was the queue's quota was announced as "capacity is
// missing". The controller does not know the cause (the scheduler does, and explain shows it per
// replica), so the event names none.
TEST(InferenceTest, AShortageStartedClaimsNoCauseItCannotKnow) {
  ShortageState s;
  Decisions ds;
  TrackShortage(3, 2, s, T(0), ds);
  const Event* e = FindEvent(ds, "ShortageStarted");
  ASSERT_NE(e, nullptr) << Types(ds);
  EXPECT_EQ(e->message.find("capacity is missing"), std::string::npos) << e->message;
  EXPECT_NE(e->message.find("abacus explain"), std::string::npos) << e->message;
  EXPECT_EQ(e->details["reason"], "ReplicasUnplaced");
}

TEST(InferenceTest, ShortageIntervalsFollowTheNumbers) {
  ShortageState s;
  Decisions ds;
  TrackShortage(4, 2, s, T(0), ds);
  TrackShortage(4, 2, s, T(5), ds);
  EXPECT_EQ(Types(ds), "RecordShortage,Event:ShortageStarted");
  ds.clear();
  TrackShortage(4, 3, s, T(10), ds);
  EXPECT_EQ(Types(ds), "RecordShortage,RecordShortage,Event:ShortageChanged");
  EXPECT_EQ(std::get<RecordShortage>(ds[0]).end, T(10));
  EXPECT_EQ(std::get<RecordShortage>(ds[1]).available, 3);
  ds.clear();
  TrackShortage(3, 3, s, T(20), ds);
  EXPECT_EQ(Types(ds), "RecordShortage,Event:ShortageEnded");
  EXPECT_FALSE(s.open);
}

Rollout Canary(int32_t percent = 25, bool automatic = true) {
  Rollout r;
  r.version = "1.5";
  r.canary_percent = percent;
  r.promote_after_seconds = 300;
  r.automatic_rollback = automatic;
  return r;
}

// A 2-replica service whose canary (replica 0, version 1.5) is ready and healthy from T(20).
WorkloadView HealthyCanary(const Workload& spec, InferenceState& s) {
  WorkloadView w = Serving(spec, 2);
  Step(w, s, AllReady(w, 10), T(10));
  w.tasks[0].started_at = T(15);
  Step(w, s, AllReady(w, 20), T(20));
  EXPECT_EQ(s.rollout.healthy_since, T(20));
  return w;
}

// A service born with a rollout version and no `version` label runs that version: no canary
// against nothing, no restart of its first replicas (the probe of 2026-12-07).
TEST(InferenceTest, AServiceBornWithARolloutVersionAndNoLabelStartsStableOnIt) {
  Workload spec = Service(2, Canary());
  spec.labels.erase("version");
  WorkloadView w = Serving(spec, 2, "1.5");
  InferenceState s;
  Decisions ds = Step(w, s, AllReady(w, 10), T(10));
  EXPECT_EQ(FindEvent(ds, "CanaryStarted"), nullptr) << Types(ds);
  EXPECT_TRUE(FindAll<SetVersion>(ds).empty());
  EXPECT_EQ(s.rollout.stable_version, "1.5");
  EXPECT_EQ(s.rollout.phase, RolloutPhase::kStable);
}

TEST(InferenceTest, CanaryStartsThenIsPromotedAfterStayingHealthy) {
  Workload spec = Service(4, Canary());
  WorkloadView w = Serving(spec, 4);
  InferenceState s;
  Decisions ds = Step(w, s, AllReady(w, 10), T(10));
  const Event* started = FindEvent(ds, "CanaryStarted");
  ASSERT_NE(started, nullptr) << Types(ds);
  EXPECT_EQ(started->details["canaryReplicas"], 1);
  EXPECT_EQ(started->details["stableVersion"], "1.4");
  std::vector<SetVersion> sv = FindAll<SetVersion>(ds);
  ASSERT_EQ(sv.size(), 1u);
  EXPECT_EQ(sv[0].replica, 0);
  EXPECT_EQ(sv[0].version, "1.5");
  EXPECT_EQ(s.rollout.phase, RolloutPhase::kCanary);
  // The canary replica restarted with 1.5 and is ready from T(20) on.
  w.tasks[0].started_at = T(15);
  EXPECT_NE(FindEvent(Step(w, s, AllReady(w, 20), T(20)), "ReplicaReady"), nullptr);
  EXPECT_EQ(s.rollout.healthy_since, T(20));
  EXPECT_TRUE(Step(w, s, AllReady(w, 20), T(319)).empty());
  ds = Step(w, s, AllReady(w, 20), T(320));
  ASSERT_NE(FindEvent(ds, "Promoted"), nullptr) << Types(ds);
  EXPECT_EQ(s.rollout.stable_version, "1.5");
  // A rolling update: one ready replica of four at a time (25%).
  EXPECT_EQ(FindAll<SetVersion>(ds).size(), 1u);
  EXPECT_EQ(FindAll<SetVersion>(Step(w, s, AllReady(w, 20), T(321))).size(), 1u);
  EXPECT_EQ(FindAll<SetVersion>(Step(w, s, AllReady(w, 20), T(322))).size(), 1u);
  for (const TaskView& t : w.tasks) EXPECT_EQ(t.version, "1.5");
  EXPECT_TRUE(FindAll<SetVersion>(Step(w, s, AllReady(w, 20), T(323))).empty());
}

TEST(InferenceTest, ACanaryThatFailsIsRolledBackAndTheOldVersionRestored) {
  Workload spec = Service(4, Canary());
  WorkloadView w = Serving(spec, 4);
  InferenceState s;
  Step(w, s, AllReady(w, 10), T(10));
  ASSERT_EQ(w.tasks[0].version, "1.5");
  w.tasks[0].started_at = T(15);
  Signals sig = AllReady(w, 20);
  Probes(sig, 0, ProbeResult::Kind::kLiveness, {false, false, false}, 30);
  Decisions ds = Step(w, s, sig, T(33));
  const Event* rb = FindEvent(ds, "RolledBack");
  ASSERT_NE(rb, nullptr) << Types(ds);
  EXPECT_EQ(rb->details["version"], "1.5");
  EXPECT_EQ(rb->details["stableVersion"], "1.4");
  ASSERT_NE(Find<SetVersion>(ds), nullptr);
  EXPECT_EQ(Find<SetVersion>(ds)->version, "1.4");
  EXPECT_EQ(Find<RestartReplica>(ds), nullptr);  // replaced by the old version instead
  EXPECT_EQ(s.rollout.phase, RolloutPhase::kRolledBack);
  EXPECT_EQ(w.tasks[0].version, "1.4");
  // The failed version is not tried again; a new one is.
  w.tasks[0].started_at = T(40);
  EXPECT_EQ(FindEvent(Step(w, s, AllReady(w, 50), T(50)), "CanaryStarted"), nullptr);
  InferenceSpec next = *spec.inference();
  next.rollout->version = "1.6";
  spec.details = next;
  EXPECT_NE(FindEvent(Step(w, s, AllReady(w, 60), T(60)), "CanaryStarted"), nullptr);
}

TEST(InferenceTest, VersionChangesWaitWhileTooManyReplicasAreUnavailable) {
  Workload spec = Service(4, Canary());
  WorkloadView w = Serving(spec, 4);
  InferenceState s;
  Signals sig;
  sig.probes.push_back({{0, 1}, ProbeResult::Kind::kReadiness, true, T(10)});  // only replica 1 ready
  Decisions ds = Step(w, s, sig, T(10));
  ASSERT_NE(FindEvent(ds, "CanaryStarted"), nullptr);
  ASSERT_EQ(FindAll<SetVersion>(ds).size(), 1u);  // replica 0 is not ready: it may change
  EXPECT_EQ(Find<SetVersion>(ds)->replica, 0);
  s.rollout.stable_version = "1.3";  // now every replica is behind; 3 of 4 unavailable
  ds = Step(w, s, sig, T(11));
  std::vector<SetVersion> sv = FindAll<SetVersion>(ds);
  ASSERT_EQ(sv.size(), 2u) << Types(ds);  // 2 and 3 (not ready); 1 is ready and must wait
  EXPECT_EQ(sv[0].replica, 2);
  EXPECT_EQ(sv[1].replica, 3);
}

TEST(InferenceTest, ManualRollbackPausesTheRollout) {
  Workload spec = Service(2, Canary(50, false));
  WorkloadView w = Serving(spec, 2);
  InferenceState s;
  Step(w, s, AllReady(w, 10), T(10));
  w.tasks[0] = Exited(0, 1, T(30), T(15));
  w.tasks[0].version = "1.5";
  Decisions ds = Step(w, s, {}, T(30));
  ASSERT_NE(FindEvent(ds, "CanaryFailed"), nullptr) << Types(ds);
  EXPECT_EQ(s.rollout.phase, RolloutPhase::kPaused);
  EXPECT_EQ(Find<SetVersion>(ds), nullptr);
  ASSERT_NE(Find<RestartReplica>(ds), nullptr);  // the canary keeps its version
}

TEST(InferenceTest, CanaryHealthClockRestartsWhenACanaryIsLost) {
  Workload spec = Service(2, Canary(50));
  InferenceState s;
  WorkloadView w = HealthyCanary(spec, s);
  w.tasks[0] = Lost(0, LostReason::kNodeLost, T(100), T(15));
  w.tasks[0].version = "1.5";
  Decisions ds = Step(w, s, {}, T(100));
  EXPECT_EQ(FindEvent(ds, "RolledBack"), nullptr) << Types(ds);  // not the canary's fault
  ASSERT_NE(Find<RestartReplica>(ds), nullptr);
  EXPECT_FALSE(IsSet(s.rollout.healthy_since));
}

TEST(InferenceTest, FlappingReadinessKeepsTheCanaryButItsThresholdRollsBack) {
  Workload spec = Service(2, Canary(50));
  InferenceState s;
  WorkloadView w = HealthyCanary(spec, s);
  Signals sig = AllReady(w, 20);
  Probes(sig, 0, ProbeResult::Kind::kReadiness, {false, false}, 100);
  sig.probes.push_back({{0, 0}, ProbeResult::Kind::kReadiness, true, T(102)});  // flapping, not failing
  Step(w, s, sig, T(102));
  EXPECT_EQ(s.rollout.healthy_since, T(20));
  Probes(sig, 0, ProbeResult::Kind::kReadiness, {false, false, false}, 103);
  Decisions ds = Step(w, s, sig, T(106));
  ASSERT_NE(FindEvent(ds, "RolledBack"), nullptr) << Types(ds);  // readiness threshold reached
}

// Issue 19.5: the server passes one sample per probe per call — the agent's latest run of equal
// results with its count. At the default failureThreshold (3) a run of 3 failures is failing: the
// canary is rolled back and the replica is published not ready; a run of 1 or 2 is not.
TEST(InferenceTest, OneSampleCountingTheAgentsRunReachesTheDefaultThreshold) {
  Workload spec = Service(2, Canary(50));
  InferenceState s;
  WorkloadView w = HealthyCanary(spec, s);
  auto run = [&](int32_t replica, bool ok, int32_t count, int64_t at) {
    Signals sig = AllReady(w, 20);
    std::erase_if(sig.probes, [&](const ProbeResult& p) { return p.task.replica == replica; });
    sig.probes.push_back({{0, replica}, ProbeResult::Kind::kReadiness, ok, T(at), count});
    return sig;
  };
  // Replica 1 (stable, ready) fails twice in a row: still ready; three times: not ready.
  EXPECT_EQ(FindEvent(Step(w, s, run(1, false, 2, 100), T(100)), "ReplicaNotReady"), nullptr);
  Decisions ds = Step(w, s, run(1, false, 3, 101), T(101));
  ASSERT_NE(FindEvent(ds, "ReplicaNotReady"), nullptr) << Types(ds);
  ASSERT_NE(Find<SetReady>(ds), nullptr);
  EXPECT_FALSE(Find<SetReady>(ds)->ready);
  EXPECT_EQ(FindEvent(ds, "RolledBack"), nullptr);  // not a canary replica
  // The canary (replica 0) fails three times in a row: rolled back at the default threshold.
  ds = Step(w, s, run(0, false, 3, 102), T(102));
  ASSERT_NE(FindEvent(ds, "RolledBack"), nullptr) << Types(ds);
  EXPECT_EQ(s.rollout.phase, RolloutPhase::kRolledBack);
}

TEST(InferenceTest, StartsRunningAndRequeuesWhenPreempted) {
  Workload spec = Service(1);
  WorkloadView w = Serving(spec, 1);
  w.state = WorkloadState::kAdmitted;
  EXPECT_NE(Find<SetState>(ReconcileInference(w, {}, {}, T(1)).decisions), nullptr);
  w.state = WorkloadState::kPreempting;
  w.preempted_at = T(0);
  w.tasks[0] = Exited(0, 0, T(5));
  w.tasks[0].stopped = w.tasks[0].stop_requested = true;
  EXPECT_NE(Find<Requeue>(ReconcileInference(w, {}, {}, T(5)).decisions), nullptr);
}

TEST(InferenceTest, StateRoundTripsThroughJson) {
  InferenceState s;
  s.autoscaler = {5, T(10), {{T(5), 4}, {T(10), 5}}};
  s.rollout = {true, RolloutPhase::kCanary, "1.4", "1.5", 1, T(3), T(4), "1.3"};
  s.shortage = {true, T(7), 5, 3};
  s.ready = {{0, T(1)}, {2, T(2)}};
  s.restarts = {{1, {2, T(9)}}};
  auto back = InferenceStateFromJson(ToJson(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, s);
  EXPECT_TRUE(InferenceStateFromJson(nullptr).ok());
  EXPECT_FALSE(InferenceStateFromJson({{"rollout", {{"phase", "Sideways"}}}}).ok());
  EXPECT_FALSE(InferenceStateFromJson({{"ready", {{"x", 1}}}}).ok());
}

}  // namespace
}  // namespace abacus::control
