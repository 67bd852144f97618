// Operator control (fleet.h) on a manual clock, without HTTP: cordon across heartbeats and
// re-registration, drain of agent and simulated nodes (checkpoint signal, grace, typed requeue
// reason, metering), hold and priority.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "common/ids.h"
#include "meter/usage_ledger.h"
#include "server/agent_api.h"
#include "server/control_plane.h"
#include "server/control_plane_fixture.h"
#include "server/server_test_util.h"
#include "server/read_views_json.h"

namespace abacus::server {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

const std::string kOrg = testing_org::AcmeOrg("train", 2) + R"(---
kind: PriorityClass
name: steady
value: 600
preemptible: false
)";

std::string Job(const std::string& name, const std::string& priority_class = "training",
                const std::string& checkpoint = "") {
  return "kind: TrainingJob\nname: " + name + "\nproject: acme/ml\nqueue: train\npriorityClass: " + priority_class +
         "\nspec:\n  command: [\"true\"]\n" + checkpoint +
         "  taskGroups:\n    - name: w\n"
         "      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: 1}}\n";
}

json Node(const std::string& name, bool simulated) {
  json devices = json::array();
  for (int i = 0; i < 2; ++i) {
    devices.push_back({{"index", i}, {"flavor", "gpu/nvidia/A100-80G"}, {"memoryBytes", int64_t{80} << 30}});
  }
  return {{"name", name}, {"cpuMilli", 64000}, {"memoryBytes", int64_t{256} << 30}, {"devices", devices},
          {"simulated", simulated}};
}

class FleetControlTest : public testing_cp::ControlPlaneFixture {
 protected:
  void SetUp() override {
    ControlPlaneFixture::SetUp();
    Open();
    ApplyOrg(kOrg);
  }
  std::string Submit(const std::string& yaml) { return SubmitYaml(yaml); }
  std::string NodeState(const std::string& name) { return NodeJson(*cp_->GetNode(name))["schedulingState"]; }
  // Lets the loop run its once-a-second work (drains, controllers) after `step` of clock time.
  void Tick(Duration step = 2s) {
    clock_.Advance(step);
    cp_->WaitForCycle();
    cp_->WaitForCycle();
  }
};

// An agent's heartbeats own Ready/NotReady; the cordon is the operator's and outlives both them
// and a re-registration; nothing new is placed meanwhile.
TEST_F(FleetControlTest, CordonOutlivesHeartbeatsAndReregistration) {
  auto reg = cp_->RegisterAgent(Node("gpu-a", false), nullptr);
  ASSERT_TRUE(reg.ok()) << reg.status().ToString();
  ASSERT_TRUE(cp_->CordonNode("gpu-a", true, "ann", "fan", nullptr).ok());
  ASSERT_TRUE(cp_->AgentHeartbeat("gpu-a", json::object()).ok());
  json again = Node("gpu-a", false);
  again["credential"] = reg->node_token;
  ASSERT_TRUE(cp_->RegisterAgent(again, nullptr).ok());
  EXPECT_EQ(NodeState("gpu-a"), "Cordoned");
  json node = NodeJson(*cp_->GetNode("gpu-a"));
  EXPECT_EQ(node["state"], "Ready");
  EXPECT_EQ(node["cordon"]["by"], "ann");
  EXPECT_EQ(node["cordon"]["reason"], "fan");
  std::string id = Submit(Job("waits"));
  EXPECT_EQ(State(id), "Pending");
  ASSERT_TRUE(cp_->CordonNode("gpu-a", false, "ann", "", nullptr).ok());
  cp_->WaitForCycle();
  EXPECT_EQ(State(id), "Admitted");
  EXPECT_EQ(cp_->CordonNode("nope", true, "ann", "", nullptr).status().code(), StatusCode::kNotFound);
}

// Drain of an agent node: the running task is told to stop with its checkpoint signal; once it
// stopped the workload is requeued as Drained (no retry used), its usage ends as Drained, and
// the node is Drained when nothing holds anything there.
TEST_F(FleetControlTest, DrainStopsAgentWorkWithCheckpointSignalAndMetersItAsDrained) {
  ASSERT_TRUE(cp_->RegisterAgent(Node("gpu-a", false), nullptr).ok());
  std::string id = Submit(Job("ft", "training", "  checkpoint: {signal: SIGUSR1, graceSeconds: 60}\n"));
  ASSERT_EQ(State(id), "Admitted");
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  clock_.Advance(60s);
  DrainOrder order;
  order.by = "ann";
  auto drained = cp_->DrainNode("gpu-a", order, nullptr);
  ASSERT_TRUE(drained.ok()) << drained.status().ToString();
  EXPECT_EQ(NodeJson(*drained)["schedulingState"], "Draining");
  EXPECT_EQ(State(id), "Preempting");  // training is preemptible: at once
  json tasks = AssignmentJson(*cp_->WaitAssignments("gpu-a", 0, 0ms), "gpu-a", nullptr)["tasks"];
  ASSERT_EQ(tasks.size(), 1u) << tasks.dump();
  EXPECT_EQ(tasks[0]["stopSignal"], "SIGUSR1") << tasks.dump();
  Report("gpu-a", id + ".0.0.1", {{"phase", "Exited"}, {"stopped", true}, {"signal", 10}});
  json w = WorkloadJson(id);
  EXPECT_EQ(w["state"], "Requeued") << w.dump();
  EXPECT_EQ(w["requeueReason"], "Drained");
  EXPECT_EQ(w.value("failures", 0), 0);
  EXPECT_EQ(w.value("infraRequeues", 0), 0);
  Tick();
  EXPECT_EQ(NodeState("gpu-a"), "Drained");

  ControlPlane::ReportQuery q;
  q.from = "2026-01-01";
  q.to = "2026-01-02";
  q.by = "reason";
  q.format = "json";
  json usage = json::parse(cp_->Report("usage", q)->body);
  std::set<std::string> reasons;
  for (const auto& row : usage["rows"]) reasons.insert(row.value("reason", ""));
  EXPECT_TRUE(reasons.count("Drained")) << usage.dump();
  EXPECT_FALSE(reasons.count("Preempted")) << usage.dump();
}

// Non-preemptible work on a draining (simulated) node runs on until the grace is over, then is
// requeued; the drain is stored, so a restart goes on with it.
TEST_F(FleetControlTest, DrainWaitsForNonPreemptibleWorkUntilTheGraceThenRequeues) {
  ASSERT_TRUE(cp_->PutNode(Node("sim-a", true), nullptr).ok());
  std::string id = Submit(Job("steady", "steady"));
  ASSERT_EQ(State(id), "Admitted");
  DrainOrder order;
  order.grace = 10min;
  order.by = "ann";
  ASSERT_TRUE(cp_->DrainNode("sim-a", order, nullptr).ok());
  Tick(5min);
  EXPECT_EQ(State(id), "Admitted");
  EXPECT_EQ(NodeState("sim-a"), "Draining");
  cp_.reset();  // a restart keeps the drain and its deadline
  Open();
  Tick(6min);
  Tick();
  EXPECT_EQ(State(id), "Requeued");
  EXPECT_EQ(WorkloadJson(id)["requeueReason"], "Drained");
  EXPECT_EQ(NodeState("sim-a"), "Drained");
  // PUT of the simulated node again keeps the operator's state.
  ASSERT_TRUE(cp_->PutNode(Node("sim-a", true), nullptr).ok());
  EXPECT_EQ(NodeState("sim-a"), "Drained");
}

// Work requeued off a simulated node stops being metered at its requeue, and its next admission
// opens one interval, not a second beside the first (the sixth probe: a reclaimed workload kept
// accruing a device while Requeued, two once admitted again, until a restart closed the stale
// interval; utilization read 105 % allocated). The requeue staged its usage against the copy
// whose placements it had cleared, so no held task was seen to end.
TEST_F(FleetControlTest, WorkRequeuedOffASimulatedNodeStopsBeingMeteredAtItsRequeue) {
  ASSERT_TRUE(cp_->PutNode(Node("sim-a", true), nullptr).ok());
  const std::string id = Submit(Job("train-1"));
  ASSERT_EQ(State(id), "Admitted");
  Tick(1min);
  DrainOrder order;
  order.by = "ann";
  ASSERT_TRUE(cp_->DrainNode("sim-a", order, nullptr).ok());
  Tick();
  Tick();
  ASSERT_EQ(State(id), "Requeued");
  const Time requeued = clock_.Now();
  auto intervals = [&] {
    auto usage = meter::ReadUsage(cp_->store(), FromMicros(0), clock_.Now() + 24h);
    EXPECT_TRUE(usage.ok()) << usage.status().ToString();
    std::vector<meter::UsageInterval> mine;
    for (auto& iv : usage.ok() ? *usage : std::vector<meter::UsageInterval>{}) {
      if (iv.workload_id == id) mine.push_back(std::move(iv));
    }
    return mine;
  };
  std::vector<meter::UsageInterval> after_requeue = intervals();
  ASSERT_EQ(after_requeue.size(), 1u);
  EXPECT_FALSE(after_requeue[0].open()) << "still metered while Requeued";
  EXPECT_LE(after_requeue[0].end.value_or(Time::max()), requeued);
  EXPECT_EQ(after_requeue[0].end_reason, meter::EndReason::kDrained);

  // Admitted again elsewhere: one open interval, the new attempt's.
  ASSERT_TRUE(cp_->PutNode(Node("sim-b", true), nullptr).ok());
  Tick();
  ASSERT_EQ(State(id), "Admitted");
  int open = 0;
  for (const auto& iv : intervals()) open += iv.open() ? 1 : 0;
  EXPECT_EQ(open, 1);
}

// Drain of a node that serves one replica of a two-replica service: only that replica is stopped
// (the service keeps running on its other node, nothing requeued), then removed and placed again
// on another node; the drained node ends Drained. (Before, the whole service was stopped and
// requeued.)
TEST_F(FleetControlTest, DrainMovesOnlyTheServicesReplicaOnThatNode) {
  for (const char* name : {"gpu-a", "gpu-b"}) {
    json n = Node(name, false);
    n["devices"].erase(1);  // one GPU each: the replicas land on two nodes
    ASSERT_TRUE(cp_->RegisterAgent(n, nullptr).ok());
  }
  auto r = cp_->Submit(R"(kind: InferenceService
name: chat
project: acme/ml
queue: train
spec:
  command: ["serve"]
  replicas: 2
  taskGroups:
    - name: server
      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: 1}}
)",
                       false, "chat.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  auto task_on = [&](const std::string& node) {
    json tasks = AssignmentJson(*cp_->WaitAssignments(node, 0, 0ms), node, nullptr)["tasks"];
    return tasks.size() == 1 ? tasks[0] : json();
  };
  const json on_a = task_on("gpu-a"), on_b = task_on("gpu-b");
  ASSERT_FALSE(on_a.is_null());
  ASSERT_FALSE(on_b.is_null());
  Report("gpu-a", on_a["taskId"], {{"phase", "Running"}});
  Report("gpu-b", on_b["taskId"], {{"phase", "Running"}});
  json c = Node("gpu-c", false);
  c["devices"].erase(1);
  ASSERT_TRUE(cp_->RegisterAgent(c, nullptr).ok());

  DrainOrder order;
  order.by = "ann";
  order.requeue_all = true;
  ASSERT_TRUE(cp_->DrainNode("gpu-a", order, nullptr).ok());
  Tick();
  EXPECT_EQ(State(id), "Running");
  json stopping = task_on("gpu-a");
  ASSERT_FALSE(stopping.is_null());
  EXPECT_EQ(stopping.value("action", ""), "stop") << stopping.dump();
  EXPECT_EQ(task_on("gpu-b")["taskId"], on_b["taskId"]);  // the other replica is untouched
  EXPECT_EQ(task_on("gpu-b").value("action", ""), "run") << task_on("gpu-b").dump();

  Report("gpu-a", on_a["taskId"], {{"phase", "Exited"}, {"stopped", true}, {"signal", 15}});
  Tick();
  Tick();
  EXPECT_EQ(NodeState("gpu-a"), "Drained");
  json w = WorkloadJson(id);
  EXPECT_EQ(w["state"], "Running") << w.dump();
  EXPECT_FALSE(w.contains("requeueReason")) << w.dump();
  EXPECT_FALSE(task_on("gpu-c").is_null()) << w.dump();  // the replica again, on gpu-c
  bool removed_event = false;
  const json events = *WorkloadEventsJson(cp_->Events(id));
  for (const auto& e : events["items"]) {
    removed_event |= e.value("type", "") == "ReplicasRemoved" && e["details"].value("reason", "") == "Drained";
  }
  EXPECT_TRUE(removed_event) << events.dump();
}

// A held workload stays out of scheduling (its reason says Held and how to release it); hold of
// running work and release of unheld work are refused with what to do instead.
TEST_F(FleetControlTest, HoldKeepsWaitingWorkOutUntilReleased) {
  std::string id = Submit(Job("later"));
  ASSERT_EQ(State(id), "Pending");  // no node yet
  ASSERT_TRUE(cp_->ControlWorkload(id, WorkloadControl::kHold, "max", nullptr).ok());
  ASSERT_TRUE(cp_->PutNode(Node("sim-a", true), nullptr).ok());
  cp_->WaitForCycle();
  EXPECT_EQ(State(id), "Pending");
  json explain = *ExplainJson(cp_->Explain(id));
  EXPECT_EQ(explain["reason"]["code"], "Held");
  EXPECT_NE(explain["text"].get<std::string>().find("abacus release later"), std::string::npos) << explain.dump();
  auto twice = cp_->ControlWorkload(id, WorkloadControl::kResume, "max", nullptr);
  EXPECT_EQ(twice.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(twice.status().message().find("abacus release later"), std::string::npos) << twice.status().message();
  ASSERT_TRUE(cp_->ControlWorkload(id, WorkloadControl::kRelease, "max", nullptr).ok());
  cp_->WaitForCycle();
  EXPECT_EQ(State(id), "Admitted");
  auto hold_running = cp_->ControlWorkload(id, WorkloadControl::kHold, "max", nullptr);
  EXPECT_EQ(hold_running.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(hold_running.status().message().find("abacus suspend later"), std::string::npos);
}

// The probe of 2026-12-07: a second release, resume or requeue answered 409 where a second hold,
// suspend or cordon answers 200. Each now answers the workload as it is when what it asks holds
// already (never held, released, resumed, waiting, on its way back), and records nothing; a verb
// that conflicts (release of suspended work, resume of held work) is still refused with what to
// do instead, and ended work has nothing to act on.
TEST_F(FleetControlTest, ARepeatedReleaseResumeOrRequeueAnswersTheWorkloadAsItIs) {
  std::string id = Submit(Job("again"));
  ASSERT_EQ(State(id), "Pending");  // no node yet
  auto events = [&] {
    auto stored = cp_->Events(id);
    return stored.ok() ? stored->items.size() : 0;
  };
  const size_t before = events();
  for (WorkloadControl v : {WorkloadControl::kRelease, WorkloadControl::kResume, WorkloadControl::kRequeue}) {
    auto r = cp_->ControlWorkload(id, v, "max", nullptr);
    ASSERT_TRUE(r.ok()) << WorkloadControlName(v) << ": " << r.status().ToString();
    EXPECT_EQ(WorkloadViewJson(*r)["state"], "Pending");
  }
  EXPECT_EQ(events(), before);  // nothing was done, nothing recorded
  ASSERT_TRUE(cp_->ControlWorkload(id, WorkloadControl::kHold, "max", nullptr).ok());
  ASSERT_TRUE(cp_->ControlWorkload(id, WorkloadControl::kRelease, "max", nullptr).ok());
  ASSERT_TRUE(cp_->ControlWorkload(id, WorkloadControl::kRelease, "max", nullptr).ok());  // twice
  ASSERT_TRUE(cp_->ControlWorkload(id, WorkloadControl::kSuspend, "max", nullptr).ok());
  auto release = cp_->ControlWorkload(id, WorkloadControl::kRelease, "max", nullptr);
  EXPECT_EQ(release.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(release.status().message().find("abacus resume again"), std::string::npos) << release.status().message();
  ASSERT_TRUE(cp_->ControlWorkload(id, WorkloadControl::kResume, "max", nullptr).ok());
  ASSERT_TRUE(cp_->ControlWorkload(id, WorkloadControl::kResume, "max", nullptr).ok());  // twice
  // Admitted work on an agent's node (it stops when its agent says so): a requeue asked twice
  // stops it once.
  ASSERT_TRUE(cp_->RegisterAgent(Node("gpu-a", false), nullptr).ok());
  cp_->WaitForCycle();
  ASSERT_EQ(State(id), "Admitted");
  ASSERT_TRUE(cp_->ControlWorkload(id, WorkloadControl::kRequeue, "max", nullptr).ok());
  auto twice = cp_->ControlWorkload(id, WorkloadControl::kRequeue, "max", nullptr);
  ASSERT_TRUE(twice.ok()) << twice.status().ToString();
  EXPECT_EQ(WorkloadViewJson(*twice)["state"], "Preempting");
  size_t requested = 0;
  auto stored = cp_->Events(id);
  ASSERT_TRUE(stored.ok()) << stored.status().ToString();
  for (const auto& e : stored->items) requested += e.type == "RequeueRequested" ? 1 : 0;
  EXPECT_EQ(requested, 1u);
  ASSERT_TRUE(cp_->Cancel(id, "done", {}, nullptr).ok());
  EXPECT_EQ(cp_->ControlWorkload(id, WorkloadControl::kRelease, "max", nullptr).status().code(),
            StatusCode::kFailedPrecondition);  // Cancelled: nothing to release
}

// set-priority N replaces the class's value: the raised workload is admitted ahead of an older
// one of the same class.
TEST_F(FleetControlTest, SetPriorityValueOrdersTheQueue) {
  std::string older = Submit(Job("older"));
  std::string newer = Submit(Job("newer"));
  ASSERT_TRUE(cp_->SetWorkloadPriority(newer, "900", "tia", nullptr).ok());
  EXPECT_EQ(WorkloadJson(newer)["priority"], 900);
  EXPECT_EQ(cp_->SetWorkloadPriority(newer, "12x", "tia", nullptr).status().code(), StatusCode::kInvalidArgument);
  json one = Node("sim-a", true);
  one["devices"].erase(1);  // room for one
  ASSERT_TRUE(cp_->PutNode(one, nullptr).ok());
  cp_->WaitForCycle();
  EXPECT_EQ(State(newer), "Admitted");
  EXPECT_EQ(State(older), "Pending");
}

}  // namespace
}  // namespace abacus::server
