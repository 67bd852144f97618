#include "control/batch.h"

#include <gtest/gtest.h>

#include "control/control_test_util.h"

namespace abacus::control {
namespace {

using namespace testing;  // NOLINT

Workload Batch(int32_t tasks, int32_t parallelism, int32_t max_retries = 2, int32_t backoff = 15) {
  BatchSpec s;
  s.tasks = tasks;
  s.parallelism = parallelism;
  s.restart_policy = {max_retries, backoff};
  return MakeSpec(s);
}

// A view with `slots` placements not yet given an index.
WorkloadView Slots(const Workload& spec, int32_t slots) {
  WorkloadView w = View(spec, WorkloadState::kAdmitted);
  for (int32_t r = 0; r < slots; ++r) {
    TaskView t = Task(r, TaskPhase::kPending);
    t.index = kNoIndex;
    w.tasks.push_back(t);
  }
  return w;
}

// Reconciles, applies the decisions, keeps the state; returns the decisions.
Decisions Step(WorkloadView& w, BatchState& s, Time now) {
  BatchOutcome o = ReconcileBatch(w, s, now);
  s = o.state;
  // Empty slots are filled first, as the server does.
  for (const auto& st : FindAll<StartTask>(o.decisions)) {
    auto slot = std::find_if(w.tasks.begin(), w.tasks.end(), [](const TaskView& t) { return t.index == kNoIndex; });
    if (slot == w.tasks.end()) {
      Apply(w, {st});
      slot = w.tasks.end() - 1;
    }
    slot->index = st.index;
    slot->phase = TaskPhase::kRunning;
    slot->started_at = now;
  }
  Decisions rest;
  for (const Decision& d : o.decisions) {
    if (!std::holds_alternative<StartTask>(d)) rest.push_back(d);
  }
  Apply(w, rest);
  return o.decisions;
}

// A batch whose first `slots` indexes run (placed at T(0), Running from T(1)).
WorkloadView Running(const Workload& spec, int32_t slots, BatchState& s) {
  WorkloadView w = Slots(spec, slots);
  Step(w, s, T(0));
  Step(w, s, T(1));
  return w;
}

std::vector<int32_t> Started(const Decisions& ds) {
  std::vector<int32_t> out;
  for (const auto& s : FindAll<StartTask>(ds)) out.push_back(s.index);
  return out;
}

// Marks the task running array index `i` as exited with `code` at `t`.
void Exit(WorkloadView& w, int32_t i, int32_t code, Time t) {
  for (TaskView& task : w.tasks) {
    if (task.index == i && !task.ended()) {
      task.phase = TaskPhase::kExited;
      task.exit_code = code;
      task.finished_at = t;
    }
  }
}

TEST(BatchTest, StartsTheLowestIndexesUpToParallelism) {
  Workload spec = Batch(5, 2);
  WorkloadView w = Slots(spec, 2);
  BatchState s;
  Decisions ds = Step(w, s, T(0));
  EXPECT_EQ(Started(ds), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(Progress(w, s), (BatchProgress{5, 0, 2, 0, 3}));
  ds = Step(w, s, T(1));
  EXPECT_EQ(Types(ds), "SetState,Event:Started");  // tasks now run
  EXPECT_TRUE(Step(w, s, T(2)).empty());
}

TEST(BatchTest, ADoneTaskFreesItsSlotForTheNextIndex) {
  Workload spec = Batch(3, 2);
  BatchState s;
  WorkloadView w = Running(spec, 2, s);
  Exit(w, 0, 0, T(10));
  Decisions ds = Step(w, s, T(10));
  EXPECT_EQ(Started(ds), (std::vector<int32_t>{2}));
  EXPECT_EQ(Progress(w, s), (BatchProgress{3, 1, 2, 0, 0}));
  EXPECT_TRUE(Step(w, s, T(11)).empty());
}

TEST(BatchTest, AFailedTaskIsRetriedOnItsOwnAfterItsBackoff) {
  Workload spec = Batch(4, 2, 2, 15);
  BatchState s;
  WorkloadView w = Running(spec, 2, s);
  Exit(w, 1, 3, T(10));
  Decisions ds = Step(w, s, T(10));
  const Event* e = FindEvent(ds, "TaskFailed");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->details["index"], 1);
  EXPECT_EQ(e->details["retry"], 1);
  EXPECT_EQ(Started(ds), (std::vector<int32_t>{2}));  // index 1 waits its backoff; 2 goes ahead
  Exit(w, 2, 0, T(12));
  EXPECT_EQ(Started(Step(w, s, T(12))), (std::vector<int32_t>{3}));
  Exit(w, 3, 0, T(20));
  EXPECT_TRUE(Started(Step(w, s, T(24))).empty());
  EXPECT_EQ(Started(Step(w, s, T(25))), (std::vector<int32_t>{1}));
  EXPECT_EQ(s.retries.at(1), 1);
  Exit(w, 1, 1, T(30));
  Step(w, s, T(30));
  EXPECT_EQ(s.not_before.at(1), T(60));  // second retry: 30s
}

TEST(BatchTest, NodeLostDoesNotConsumeATaskRetry) {
  Workload spec = Batch(2, 2, 0);
  BatchState s;
  WorkloadView w = Running(spec, 2, s);
  for (TaskView& t : w.tasks) {
    if (t.index == 0) {
      t.phase = TaskPhase::kLost;
      t.lost_reason = LostReason::kNodeLost;
      t.finished_at = T(5);
    }
  }
  Decisions ds = Step(w, s, T(5));
  EXPECT_EQ(Started(ds), (std::vector<int32_t>{0}));
  EXPECT_EQ(FindEvent(ds, "TaskFailed")->details["retryConsumed"], false);
  EXPECT_EQ(s.retries.count(0) ? s.retries.at(0) : 0, 0);
  EXPECT_EQ(Find<SetState>(ds), nullptr);
}

TEST(BatchTest, AnEndedRunIsCountedOnce) {
  Workload spec = Batch(3, 1, 3);
  BatchState s;
  WorkloadView w = Running(spec, 1, s);
  Exit(w, 0, 1, T(10));
  BatchOutcome first = ReconcileBatch(w, s, T(10));
  BatchOutcome again = ReconcileBatch(w, first.state, T(11));
  EXPECT_EQ(FindEvent(again.decisions, "TaskFailed"), nullptr);
  EXPECT_EQ(again.state.retries.at(0), 1);
}

TEST(BatchTest, AnIndexOutOfRetriesStopsTheOthersThenFails) {
  Workload spec = Batch(4, 2, 1, 0);
  BatchState s;
  WorkloadView w = Running(spec, 2, s);
  Exit(w, 0, 2, T(10));
  EXPECT_EQ(Started(Step(w, s, T(10))), (std::vector<int32_t>{0}));  // retry 1, no backoff
  Exit(w, 0, 2, T(20));
  Decisions ds = Step(w, s, T(20));
  EXPECT_EQ(Types(ds), "Event:TaskFailed,StopTasks,Event:StoppingBatch");
  EXPECT_EQ(Progress(w, s).failed, 1);
  EXPECT_TRUE(Step(w, s, T(21)).empty());
  for (TaskView& t : w.tasks) {
    if (!t.ended()) {
      t.phase = TaskPhase::kExited;
      t.stopped = true;
      t.finished_at = T(25);
    }
  }
  ds = Step(w, s, T(25));
  ASSERT_NE(Find<SetState>(ds), nullptr) << Types(ds);
  EXPECT_EQ(Find<SetState>(ds)->to, WorkloadState::kFailed);
  EXPECT_EQ(Find<SetState>(ds)->reason, "ExitCode");
  EXPECT_EQ(w.state, WorkloadState::kFailed);
}

TEST(BatchTest, SucceedsWhenEveryIndexIsDone) {
  Workload spec = Batch(3, 3);
  BatchState s;
  WorkloadView w = Running(spec, 3, s);
  for (int i = 0; i < 3; ++i) Exit(w, i, 0, T(10 + i));
  Decisions ds = Step(w, s, T(20));
  EXPECT_EQ(Types(ds), "SetState,Event:Succeeded");
  EXPECT_EQ(Progress(w, s), (BatchProgress{3, 3, 0, 0, 0}));
}

TEST(BatchTest, APreemptedBatchKeepsItsDoneTasks) {
  Workload spec = Batch(3, 2);
  BatchState s;
  WorkloadView w = Running(spec, 2, s);
  Exit(w, 0, 0, T(5));
  Step(w, s, T(5));  // 0 done, 2 started
  w.state = WorkloadState::kPreempting;
  w.preempted_at = T(6);
  for (TaskView& t : w.tasks) {
    if (!t.ended()) {
      t.phase = TaskPhase::kExited;
      t.stopped = true;
      t.stop_requested = true;
      t.finished_at = T(7);
    }
  }
  Decisions ds = Step(w, s, T(7));
  ASSERT_NE(Find<Requeue>(ds), nullptr);
  EXPECT_FALSE(Find<Requeue>(ds)->consume_retry);
  // Admitted again with two empty slots: only 1 and 2 run.
  w.state = WorkloadState::kAdmitted;
  w.tasks = Slots(spec, 2).tasks;
  EXPECT_EQ(Started(Step(w, s, T(30))), (std::vector<int32_t>{1, 2}));
}

TEST(BatchTest, StateRoundTripsThroughJson) {
  BatchState s;
  s.status = "PDFP";
  s.retries = {{2, 2}, {3, 1}};
  s.not_before = {{3, T(40)}};
  s.accounted = {{3, T(25)}};
  s.failed_index = 2;
  s.failure_reason = "OOMKilled";
  s.failure_message = "array task 2 failed";
  s.failed_at = T(30);
  auto back = BatchStateFromJson(ToJson(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, s);
  EXPECT_TRUE(BatchStateFromJson(nullptr).ok());
  EXPECT_FALSE(BatchStateFromJson({{"status", "PX"}}).ok());
  EXPECT_FALSE(BatchStateFromJson({{"retries", {{"x", 1}}}}).ok());
  EXPECT_FALSE(BatchStateFromJson({{"failedIndex", "two"}}).ok());
  EXPECT_EQ(ToJson(BatchProgress{4, 1, 1, 1, 1})["pending"], 1);
}

}  // namespace
}  // namespace abacus::control
