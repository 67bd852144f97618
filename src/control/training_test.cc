#include "control/training.h"

#include <gtest/gtest.h>

#include "control/control_test_util.h"

namespace abacus::control {
namespace {

using namespace testing;  // NOLINT

Workload Training(int32_t replicas, int32_t max_retries = 3, int32_t backoff = 10) {
  TrainingSpec s;
  s.restart_policy = {max_retries, backoff};
  s.checkpoint = CheckpointPolicy{"SIGUSR1", 120};
  return MakeSpec(s, replicas);
}

TEST(TrainingTest, StartsWhenATaskRuns) {
  Workload spec = Training(2);
  WorkloadView w = View(spec, WorkloadState::kAdmitted, {Task(0, TaskPhase::kRunning), Task(1, TaskPhase::kPending)});
  Decisions ds = ReconcileTraining(w, T(5));
  EXPECT_EQ(Types(ds), "SetState,Event:Started");
  EXPECT_EQ(std::get<SetState>(ds[0]).to, WorkloadState::kRunning);
  Apply(w, ds);
  EXPECT_TRUE(ReconcileTraining(w, T(6)).empty());
}

TEST(TrainingTest, SucceedsWhenEveryTaskExitsZero) {
  Workload spec = Training(2);
  WorkloadView w = View(spec, WorkloadState::kRunning, {Exited(0, 0, T(100)), Task(1, TaskPhase::kRunning)});
  EXPECT_TRUE(ReconcileTraining(w, T(100)).empty());
  w.tasks[1] = Exited(1, 0, T(101));
  Decisions ds = ReconcileTraining(w, T(101));
  EXPECT_EQ(Types(ds), "SetState,Event:Succeeded");
  EXPECT_EQ(std::get<SetState>(ds[0]).to, WorkloadState::kSucceeded);
}

TEST(TrainingTest, UserErrorConsumesARetryAndWaitsTheBackoff) {
  Workload spec = Training(1);
  WorkloadView w = View(spec, WorkloadState::kRunning, {Exited(0, 3, T(100))});
  Decisions ds = ReconcileTraining(w, T(100));
  const Requeue* r = Find<Requeue>(ds);
  ASSERT_NE(r, nullptr) << Types(ds);
  EXPECT_TRUE(r->consume_retry);
  EXPECT_EQ(r->reason, "ExitCode");
  EXPECT_EQ(r->not_before, T(110));
  const Event* e = FindEvent(ds, "TaskFailed");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->details["reason"], "ExitCode");
  EXPECT_EQ(e->details["exitCode"], 3);
  EXPECT_EQ(e->details["retry"], 1);
}

TEST(TrainingTest, BackoffDoubles10s20s40sAndIsCapped) {
  Workload spec = Training(1, 10, 10);
  WorkloadView w = View(spec, WorkloadState::kRunning);
  std::vector<int64_t> waits;
  for (int i = 0; i < 3; ++i) {
    w.state = WorkloadState::kRunning;
    w.tasks = {Exited(0, 1, T(1000))};
    Decisions ds = ReconcileTraining(w, T(1000));
    ASSERT_NE(Find<Requeue>(ds), nullptr);
    waits.push_back(std::chrono::duration_cast<std::chrono::seconds>(Find<Requeue>(ds)->not_before - T(1000)).count());
    Apply(w, ds);
  }
  EXPECT_EQ(waits, (std::vector<int64_t>{10, 20, 40}));
  EXPECT_EQ(w.failures, 3);
  EXPECT_EQ(RetryBackoff({10, 300}, 3), std::chrono::minutes(10));  // 1200s capped at 600s
  EXPECT_EQ(RetryBackoff({10, 0}, 5), Duration{0});
}

TEST(TrainingTest, NodeLostDoesNotConsumeARetry) {
  Workload spec = Training(1, 1);
  WorkloadView w = View(spec, WorkloadState::kRunning, {Lost(0, LostReason::kNodeLost, T(50))});
  w.failures = 1;  // retries already used up: infrastructure failures still requeue
  Decisions ds = ReconcileTraining(w, T(50));
  const Requeue* r = Find<Requeue>(ds);
  ASSERT_NE(r, nullptr) << Types(ds);
  EXPECT_FALSE(r->consume_retry);
  EXPECT_EQ(r->reason, "NodeLost");
  EXPECT_EQ(r->not_before, T(50));
  EXPECT_EQ(FindEvent(ds, "Requeued")->details["retryConsumed"], false);
}

TEST(TrainingTest, DeviceErrorDoesNotConsumeARetry) {
  Workload spec = Training(1, 0);
  WorkloadView w = View(spec, WorkloadState::kRunning, {Lost(0, LostReason::kDeviceError, T(50))});
  Decisions ds = ReconcileTraining(w, T(50));
  ASSERT_NE(Find<Requeue>(ds), nullptr) << Types(ds);
  EXPECT_FALSE(Find<Requeue>(ds)->consume_retry);
  EXPECT_EQ(Find<Requeue>(ds)->reason, "DeviceError");
}

TEST(TrainingTest, ClassifiesFailures) {
  TaskView oom = Exited(0, 137, T(1));
  oom.oom_killed = true;
  oom.signal = 9;
  TaskView sig = Exited(0, 0, T(1));
  sig.signal = 11;
  TaskView interrupted = Exited(0, 0, T(1));
  interrupted.stopped = true;
  interrupted.signal = 15;
  TaskView asked = interrupted;
  asked.stop_requested = true;
  EXPECT_EQ(ClassifyFailure(Exited(0, 2, T(1))), FailureClass::kExitCode);
  EXPECT_EQ(ClassifyFailure(oom), FailureClass::kOOMKilled);
  EXPECT_EQ(ClassifyFailure(sig), FailureClass::kSignal);
  EXPECT_EQ(ClassifyFailure(interrupted), FailureClass::kInterrupted);
  EXPECT_EQ(ClassifyFailure(asked), FailureClass::kNone);
  EXPECT_EQ(ClassifyFailure(Lost(0, LostReason::kAgentRestart, T(1))), FailureClass::kAgentRestart);
  EXPECT_EQ(ClassifyFailure(Lost(0, LostReason::kNone, T(1))), FailureClass::kNodeLost);
  EXPECT_EQ(ClassifyFailure(Exited(0, 0, T(1))), FailureClass::kNone);
  EXPECT_EQ(ClassifyFailure(Task(0, TaskPhase::kRunning)), FailureClass::kNone);
  EXPECT_TRUE(ConsumesRetry(FailureClass::kOOMKilled));
  EXPECT_FALSE(ConsumesRetry(FailureClass::kInterrupted));
  EXPECT_EQ(FailureClassName(FailureClass::kOOMKilled), "OOMKilled");
}

TEST(TrainingTest, OomKillWithRetriesExhaustedFails) {
  Workload spec = Training(1, 2);
  TaskView t = Exited(0, 137, T(10));
  t.oom_killed = true;
  WorkloadView w = View(spec, WorkloadState::kRunning, {t});
  w.failures = 2;
  Decisions ds = ReconcileTraining(w, T(10));
  EXPECT_EQ(Types(ds), "SetState,Event:Failed");
  EXPECT_EQ(std::get<SetState>(ds[0]).to, WorkloadState::kFailed);
  EXPECT_EQ(std::get<SetState>(ds[0]).reason, "OOMKilled");
  EXPECT_EQ(FindEvent(ds, "Failed")->details["oomKilled"], true);
}

TEST(TrainingTest, NoRetriesFailsOnTheFirstUserError) {
  Workload spec = Training(1, 0);
  WorkloadView w = View(spec, WorkloadState::kRunning, {Exited(0, 1, T(10))});
  Decisions ds = ReconcileTraining(w, T(10));
  ASSERT_NE(Find<SetState>(ds), nullptr);
  EXPECT_EQ(Find<SetState>(ds)->reason, "ExitCode");
}

TEST(TrainingTest, OneGangTaskFailingStopsTheOthersWithTheCheckpointSignal) {
  Workload spec = Training(3);
  WorkloadView w = View(spec, WorkloadState::kRunning,
                        {Task(0, TaskPhase::kRunning), Exited(1, 1, T(100)), Task(2, TaskPhase::kRunning)});
  Decisions ds = ReconcileTraining(w, T(100));
  EXPECT_EQ(Types(ds), "StopTasks,Event:StoppingGang");
  const StopTasks& stop = std::get<StopTasks>(ds[0]);
  EXPECT_EQ(stop.tasks, (std::vector<TaskRef>{{0, 0}, {0, 2}}));
  EXPECT_EQ(stop.signal, "SIGUSR1");
  EXPECT_EQ(stop.grace_seconds, 120);
  Apply(w, ds);
  EXPECT_TRUE(ReconcileTraining(w, T(110)).empty());  // waiting for the stops
  for (int r : {0, 2}) {
    w.tasks[r].phase = TaskPhase::kExited;
    w.tasks[r].stopped = true;
    w.tasks[r].signal = 10;
    w.tasks[r].finished_at = T(150);
  }
  ds = ReconcileTraining(w, T(150));
  ASSERT_NE(Find<Requeue>(ds), nullptr) << Types(ds);
  EXPECT_TRUE(Find<Requeue>(ds)->consume_retry);
  EXPECT_EQ(FindEvent(ds, "TaskFailed")->details["task"], "0/1");
}

TEST(TrainingTest, GangStopNotConfirmedRequeuesAfterGraceAndSlack) {
  Workload spec = Training(2);
  WorkloadView w = View(spec, WorkloadState::kRunning, {Task(0, TaskPhase::kStopping), Exited(1, 1, T(100))});
  w.tasks[0].stop_requested = true;
  EXPECT_TRUE(ReconcileTraining(w, T(100 + 120 + 59)).empty());
  EXPECT_NE(Find<Requeue>(ReconcileTraining(w, T(100 + 120 + 60))), nullptr);
}

TEST(TrainingTest, MaxRuntimeSendsCheckpointSignalThenFails) {
  Workload spec = Training(2);
  std::get<TrainingSpec>(spec.details).max_runtime = std::chrono::hours(1);
  WorkloadView w = View(spec, WorkloadState::kRunning, {Task(0, TaskPhase::kRunning), Task(1, TaskPhase::kRunning)});
  EXPECT_TRUE(ReconcileTraining(w, T(3599)).empty());
  Decisions ds = ReconcileTraining(w, T(3600));
  EXPECT_EQ(Types(ds), "StopTasks,Event:MaxRuntimeExceeded");
  EXPECT_EQ(std::get<StopTasks>(ds[0]).signal, "SIGUSR1");
  EXPECT_EQ(std::get<StopTasks>(ds[0]).grace_seconds, 120);
  Apply(w, ds);
  EXPECT_TRUE(ReconcileTraining(w, T(3601)).empty());
  for (TaskView& t : w.tasks) {
    t.phase = TaskPhase::kExited;
    t.stopped = true;
    t.finished_at = T(3650);
  }
  ds = ReconcileTraining(w, T(3650));
  ASSERT_NE(Find<SetState>(ds), nullptr) << Types(ds);
  EXPECT_EQ(Find<SetState>(ds)->to, WorkloadState::kFailed);
  EXPECT_EQ(Find<SetState>(ds)->reason, "MaxRuntimeExceeded");
}

TEST(TrainingTest, MaxRuntimeCountsEarlierAttemptsAndIsForcedAfterGrace) {
  Workload spec = Training(1);
  std::get<TrainingSpec>(spec.details).max_runtime = std::chrono::hours(1);
  WorkloadView w = View(spec, WorkloadState::kRunning, {Task(0, TaskPhase::kRunning, T(1000))});
  w.prior_runtime = std::chrono::minutes(50);
  EXPECT_EQ(TrainingRuntime(w, T(1300)), std::chrono::minutes(55));
  EXPECT_TRUE(ReconcileTraining(w, T(1599)).empty());
  Decisions ds = ReconcileTraining(w, T(1600));
  ASSERT_NE(Find<StopTasks>(ds), nullptr);
  Apply(w, ds);
  EXPECT_TRUE(ReconcileTraining(w, T(1600 + 120 + 59)).empty());
  ds = ReconcileTraining(w, T(1600 + 120 + 60));  // the agent never confirmed the stop
  ASSERT_NE(Find<SetState>(ds), nullptr);
  EXPECT_EQ(Find<SetState>(ds)->reason, "MaxRuntimeExceeded");
}

TEST(TrainingTest, PreemptedJobRequeuesWithResumeEnvOnceTasksStop) {
  Workload spec = Training(2);
  TaskView stopped = Exited(0, 0, T(500));
  stopped.stopped = true;
  stopped.stop_requested = true;
  WorkloadView w = View(spec, WorkloadState::kPreempting, {stopped, Task(1, TaskPhase::kStopping)});
  w.preempted_at = T(480);
  EXPECT_TRUE(ReconcileTraining(w, T(500)).empty());
  w.tasks[1] = stopped;
  w.tasks[1].replica = 1;
  Decisions ds = ReconcileTraining(w, T(510));
  const Requeue* r = Find<Requeue>(ds);
  ASSERT_NE(r, nullptr) << Types(ds);
  EXPECT_FALSE(r->consume_retry);
  EXPECT_EQ(r->reason, "Preempted");
  EXPECT_EQ(r->env.at("ABACUS_RESUME"), "1");
  EXPECT_EQ(r->env.at("ABACUS_ATTEMPT"), "2");
  Apply(w, ds);
  EXPECT_EQ(w.state, WorkloadState::kRequeued);
  EXPECT_TRUE(ReconcileTraining(w, T(511)).empty());
}

TEST(TrainingTest, PreemptionGraceOverdueRequeuesAnyway) {
  Workload spec = Training(1);
  WorkloadView w = View(spec, WorkloadState::kPreempting, {Task(0, TaskPhase::kStopping)});
  w.preempted_at = T(0);
  EXPECT_TRUE(ReconcileTraining(w, T(179)).empty());
  EXPECT_NE(Find<Requeue>(ReconcileTraining(w, T(180))), nullptr);
}

// An operator's stop (abacus drain, requeue, suspend) is requeued under its own typed reason, so
// that metering ends the usage as Drained/Requeued rather than Preempted; no retry is used.
TEST(TrainingTest, AnOperatorsStopIsRequeuedUnderItsOwnReason) {
  Workload spec = Training(1);
  TaskView stopped = Task(0, TaskPhase::kExited);
  stopped.stopped = true;
  WorkloadView w = View(spec, WorkloadState::kPreempting, {stopped});
  w.preempted_at = T(0);
  w.evict_reason = "Drained";
  Decisions ds = ReconcileTraining(w, T(1));
  const Requeue* r = Find<Requeue>(ds);
  ASSERT_NE(r, nullptr) << Types(ds);
  EXPECT_EQ(r->reason, "Drained");
  EXPECT_FALSE(r->consume_retry);
}

TEST(TrainingTest, InfrastructureRequeuesAreCapped) {
  Workload spec = Training(1);
  WorkloadView w = View(spec, WorkloadState::kRunning, {Lost(0, LostReason::kNodeLost, T(5))});
  w.infra_requeues = 2;
  Decisions ds = ReconcileTraining(w, T(5), {.max_infra_requeues = 2});
  ASSERT_NE(Find<SetState>(ds), nullptr) << Types(ds);
  EXPECT_EQ(Find<SetState>(ds)->reason, "NodeLost");
}

TEST(TrainingTest, TaskLostBeforeAdmittedWorkloadStartedGoesBackToPending) {
  Workload spec = Training(1);
  WorkloadView w = View(spec, WorkloadState::kAdmitted, {Lost(0, LostReason::kNodeLost, T(5))});
  w.tasks[0].started_at = Time{};
  Decisions ds = ReconcileTraining(w, T(5));
  ASSERT_NE(Find<Requeue>(ds), nullptr) << Types(ds);
  Apply(w, ds);
  EXPECT_EQ(w.state, WorkloadState::kPending);
}

}  // namespace
}  // namespace abacus::control
