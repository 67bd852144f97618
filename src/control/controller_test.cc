#include "control/controller.h"

#include <gtest/gtest.h>

#include "control/batch.h"
#include "control/control_test_util.h"

namespace abacus::control {
namespace {

using namespace testing;  // NOLINT

TEST(ControllerTest, DispatchesByKindAndCarriesTheStateAsJson) {
  BatchSpec b;
  b.tasks = 3;
  b.parallelism = 1;
  Workload spec = MakeSpec(b);
  WorkloadView w = View(spec, WorkloadState::kAdmitted, {Task(0, TaskPhase::kPending)});
  w.tasks[0].index = kNoIndex;
  auto o = Reconcile(w, nullptr, {}, T(0));
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(Types(o->decisions), "StartTask");
  EXPECT_EQ(o->state["status"], "PPP");
  w.tasks[0] = Exited(0, 0, T(5));
  w.state = WorkloadState::kRunning;
  auto next = Reconcile(w, o->state, {}, T(5));
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->state["status"], "DPP");
  EXPECT_EQ(Describe(w, next->state)["progress"]["done"], 1);
  EXPECT_EQ(Describe(w, nullptr)["progress"]["pending"], 3);
}

TEST(ControllerTest, KindsWithoutStateReturnNull) {
  Workload training = MakeSpec(TrainingSpec{});
  WorkloadView w = View(training, WorkloadState::kRunning, {Exited(0, 0, T(5))});
  auto o = Reconcile(w, nullptr, {}, T(5));
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->state.is_null());
  EXPECT_EQ(Types(o->decisions), "SetState,Event:Succeeded");
  EXPECT_EQ(Describe(w, nullptr), nlohmann::json::object());
}

TEST(ControllerTest, AnUnreadableStateIsAnError) {
  Workload svc = MakeSpec(InferenceSpec{});
  WorkloadView w = View(svc, WorkloadState::kRunning);
  auto o = Reconcile(w, "not an object", {}, T(0));
  EXPECT_EQ(o.status().code(), StatusCode::kInvalidArgument);
  WorkloadView none;
  EXPECT_FALSE(Reconcile(none, nullptr, {}, T(0)).ok());
}

TEST(ControllerTest, DescribesInferenceAndExperimentState) {
  InferenceSpec is;
  is.replicas = 2;
  is.max_replicas = 4;
  Workload svc = MakeSpec(is);
  WorkloadView w = View(svc, WorkloadState::kRunning, {Task(0, TaskPhase::kRunning)});
  auto o = Reconcile(w, nullptr, {}, T(1));
  ASSERT_TRUE(o.ok());
  nlohmann::json d = Describe(w, o->state);
  EXPECT_EQ(d["desiredReplicas"], 2);
  EXPECT_EQ(d["readyReplicas"], 1);
  EXPECT_EQ(d["shortage"]["available"], 1);
  EXPECT_EQ(d["rollout"]["phase"], "Stable");
  Workload exp = MakeSpec(ExperimentSpec{});
  WorkloadView e = View(exp, WorkloadState::kRunning);
  EXPECT_EQ(Describe(e, nullptr), nlohmann::json::object());
}

TEST(ControllerTest, DecisionsHaveAJsonForm) {
  StopTasks stop{{{0, 1}}, "SIGUSR1", 120, "MaxRuntimeExceeded"};
  nlohmann::json j = ToJson(Decision{stop});
  EXPECT_EQ(j["type"], "StopTasks");
  EXPECT_EQ(j["tasks"][0]["replica"], 1);
  EXPECT_EQ(j["graceSeconds"], 120);
  EXPECT_EQ(ToJson(Decision{SetState{WorkloadState::kFailed, "OOMKilled", "x"}})["to"], "Failed");
  EXPECT_EQ(ToJson(Decision{RecordShortage{4, 2, T(0), T(10)}})["end"], FormatTime(T(10)));
  EXPECT_EQ(DecisionName(Decision{Event{}}), "Event");
  EXPECT_EQ(MakeEvent("X", "m", {}, "Why").details["reason"], "Why");
}

TEST(ControllerTest, TaskPhaseAndLostReasonNamesRoundTrip) {
  for (TaskPhase p : {TaskPhase::kPending, TaskPhase::kRunning, TaskPhase::kStopping, TaskPhase::kExited, TaskPhase::kLost}) {
    EXPECT_EQ(*ParseTaskPhase(TaskPhaseName(p)), p);
  }
  for (LostReason r : {LostReason::kNone, LostReason::kNodeLost, LostReason::kDeviceError, LostReason::kAgentRestart}) {
    EXPECT_EQ(*ParseLostReason(LostReasonName(r)), r);
  }
  EXPECT_FALSE(ParseTaskPhase("Zombie").ok());
  EXPECT_FALSE(ParseLostReason("Gone").ok());
}

}  // namespace
}  // namespace abacus::control
