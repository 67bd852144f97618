// The buyer's acceptance scenario (issue 7), end to end with a real server and real agents on
// fake A100 nodes: three teams share a cluster. Team A's production inference service has
// reserved capacity (a queue quota with lendingLimit 0); team B's large training job borrows
// team C's idle quota; a traffic spike scales A up inside its reservation at once, without
// preempting or waiting for training; team C submits and gets its quota back by preemption of
// B's borrowed job, which checkpoints (SIGTERM, grace) and resumes later with ABACUS_RESUME=1;
// an idle experiment is noticed and reclaimed. Each outcome is asserted, with the event log of
// each workload.
#include <gtest/gtest.h>

#include <algorithm>

#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;

// 8 A100s in all: A 2 reserved, B 2, C 4 lendable; an experiment queue of 1 on its own node.
constexpr char kOrg[] = R"(kind: Tenant
name: team-a
---
kind: Tenant
name: team-b
---
kind: Tenant
name: team-c
---
kind: Project
name: serve
tenant: team-a
---
kind: Project
name: train
tenant: team-b
---
kind: Project
name: research
tenant: team-c
---
kind: Cohort
name: shared
---
kind: Queue
name: qa
tenant: team-a
cohort: shared
quotas:
  - {resource: gpu/nvidia/A100-80G, nominal: 2, lendingLimit: 0}
  - {resource: cpu, nominal: 16, lendingLimit: 0}
  - {resource: memory, nominal: 64Gi, lendingLimit: 0}
---
kind: Queue
name: qb
tenant: team-b
cohort: shared
quotas:
  - {resource: gpu/nvidia/A100-80G, nominal: 2, borrowingLimit: 8}
  - {resource: cpu, nominal: 16, borrowingLimit: 32}
  - {resource: memory, nominal: 64Gi, borrowingLimit: 256Gi}
---
kind: Queue
name: qc
tenant: team-c
cohort: shared
quotas:
  - {resource: gpu/nvidia/A100-80G, nominal: 4}
  - {resource: cpu, nominal: 32}
  - {resource: memory, nominal: 128Gi}
---
kind: Queue
name: qexp
tenant: team-c
quotas:
  - {resource: gpu/nvidia/A100-80G, nominal: 1}
  - {resource: cpu, nominal: 4}
  - {resource: memory, nominal: 16Gi}
)";

std::string Group(int gpus, const std::string& name = "main") {
  return "  taskGroups:\n    - name: " + name + "\n      resources: {cpu: 1, memory: 1Gi, accelerators: "
         "{flavor: gpu/nvidia/A100-80G, count: " + std::to_string(gpus) + "}}\n";
}

// A training job that prints its attempt, checkpoints on SIGTERM and otherwise runs long.
std::string Training(const std::string& name, int gpus) {
  return "kind: TrainingJob\nname: " + name + "\nproject: team-b/train\nqueue: qb\npriorityClass: training\nspec:\n"
         "  command: [\"sh\", \"-c\", \"echo attempt=$ABACUS_ATTEMPT resume=${ABACUS_RESUME:-0}; "
         "trap 'echo checkpointed; exit 0' TERM; sleep 600 & wait\"]\n"
         "  checkpoint: {signal: SIGTERM, graceSeconds: 5}\n" +
         Group(gpus);
}

class AcceptanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(
        dir_.path(), std::vector<std::string>{"--heartbeat", "1", "--node-timeout", "10"});
    ASSERT_EQ(server_->Client().Post("/api/v1/apply", kOrg, "application/yaml").status, 200);
    // Simulated node sizes: this machine's few cores must not be what limits placement.
    const std::vector<std::string> size = {"--cpus", "32", "--memory", "128Gi"};
    for (const char* name : {"gpu-1", "gpu-2"}) {
      agents_.push_back(std::make_unique<AgentProcess>(*server_, name, "gpu:nvidia:A100-80G:4:80Gi@cuda=12.4", size));
    }
    agents_.push_back(std::make_unique<AgentProcess>(*server_, "lab-1", "gpu:nvidia:A100-80G:1:80Gi@cuda=12.4", size));
  }
  std::string Submit(const std::string& yaml) {
    auto r = server_->Client().Post("/api/v1/workloads", yaml, "application/yaml");
    EXPECT_EQ(r.status, 201) << r.text;
    return r.ok() ? r.body["items"][0]["id"].get<std::string>() : "";
  }
  json Get(const std::string& id) { return server_->Client().Get("/api/v1/workloads/" + id).body; }
  std::string State(const std::string& id) { return Get(id).value("state", ""); }
  std::vector<std::string> Events(const std::string& id) {
    std::vector<std::string> types;
    json body = server_->Client().Get("/api/v1/workloads/" + id + "/events").body;
    for (const auto& e : body.value("items", json::array())) types.push_back(e.value("type", ""));
    return types;
  }
  json Event(const std::string& id, const std::string& type) {
    json body = server_->Client().Get("/api/v1/workloads/" + id + "/events").body;
    for (const auto& e : body.value("items", json::array())) {
      if (e.value("type", "") == type) return e;
    }
    return json();
  }
  static bool Has(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  }
  std::string Log(const std::string& id) {
    auto r = server_->Client().Get("/api/v1/workloads/" + id + "/logs");
    return r.ok() ? r.body.value("content", "") : "";
  }
  int Placed(const std::string& id) { return static_cast<int>(Get(id).value("placements", json::array()).size()); }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::vector<std::unique_ptr<AgentProcess>> agents_;
};

TEST_F(AcceptanceTest, ThreeTeamsShareReservedInferenceBorrowingReclaimScalingAndIdleReclaim) {
  // Team A: a production service, 1 replica of 1 GPU, autoscaled on requests per second.
  std::string svc = Submit(
      "kind: InferenceService\nname: chat\nproject: team-a/serve\nqueue: qa\npriorityClass: production\n"
      "labels: {version: \"1.0\"}\nspec:\n  command: [\"sh\", \"-c\", \"echo version=$ABACUS_VERSION; sleep 600\"]\n" +
      Group(1, "server") +
      "  replicas: 1\n  minReplicas: 1\n  maxReplicas: 2\n"
      "  autoscaling: {metric: rps, target: 10, stabilizationSeconds: 0, cooldownSeconds: 0}\n");
  ASSERT_TRUE(WaitFor([&] { return State(svc) == "Running"; }, std::chrono::seconds(30))) << Get(svc).dump();

  // Team B: 2 GPUs within its quota, then 4 more borrowed from team C's idle quota. It cannot
  // take team A's unused reserved GPU (lendingLimit 0).
  std::string base = Submit(Training("b-base", 2));
  ASSERT_TRUE(WaitFor([&] { return State(base) == "Running"; }, std::chrono::seconds(30))) << Get(base).dump();
  std::string big = Submit(Training("b-big", 4));
  ASSERT_TRUE(WaitFor([&] { return State(big) == "Running"; }, std::chrono::seconds(30))) << Get(big).dump();
  EXPECT_TRUE(Event(big, "Admitted")["details"].value("borrowing", false)) << Event(big, "Admitted").dump();
  std::string greedy = Submit(Training("b-more", 1));
  ASSERT_TRUE(WaitFor([&] { return Get(greedy).contains("pendingReason"); }, std::chrono::seconds(10)));
  EXPECT_EQ(State(greedy), "Pending") << "team B must not borrow team A's reserved GPU: " << Get(greedy).dump();

  // A traffic spike: 25 requests/s on the one replica, target 10 → 2 replicas (maxReplicas).
  // The second replica takes A's reserved GPU at once: no training is preempted for it.
  ASSERT_TRUE(WaitFor([&] {
    auto r = server_->Client().Post("/api/v1/workloads/" + svc + "/metrics",
                                    json{{"metric", "rps"}, {"value", 25}, {"replica", 0}}.dump(), "application/json");
    EXPECT_EQ(r.status, 200) << r.text;
    return Placed(svc) == 2;
  }, std::chrono::seconds(30))) << Get(svc).dump();
  // The ledger shows the placement as soon as the loop decides it; its event is readable once
  // the decision's commit is done.
  std::vector<std::string> svc_events;
  EXPECT_TRUE(WaitFor([&] {
    svc_events = Events(svc);
    return Has(svc_events, "ReplicaPlaced");
  }, std::chrono::seconds(10))) << ::testing::PrintToString(svc_events);
  EXPECT_TRUE(Has(svc_events, "Scaled")) << ::testing::PrintToString(svc_events);
  EXPECT_EQ(Event(svc, "Scaled")["details"].value("to", 0), 2) << Event(svc, "Scaled").dump();
  EXPECT_EQ(State(big), "Running");
  EXPECT_EQ(State(base), "Running");
  EXPECT_FALSE(Has(Events(big), "Preempted"));
  // Both replicas run, the new one with the service's version.
  ASSERT_TRUE(WaitFor([&] {
    json w = Get(svc);
    int running = 0;
    for (const auto& p : w["placements"]) running += p.value("phase", "") == "Running";
    return running == 2;
  })) << Get(svc).dump();

  // Team C comes back for its 4 GPUs: B's borrowed job is preempted (reclaim), checkpoints and
  // waits; B's job within its own quota keeps running.
  std::string c = Submit("kind: BatchJob\nname: c-sweep\nproject: team-c/research\nqueue: qc\npriorityClass: training\n"
                         "spec:\n  command: [\"sh\", \"-c\", \"sleep 3\"]\n  tasks: 1\n  parallelism: 1\n" +
                         Group(4));
  ASSERT_TRUE(WaitFor([&] { return Has(Events(big), "Preempted"); }, std::chrono::seconds(30))) << Get(big).dump();
  EXPECT_EQ(Event(big, "Preempted")["details"].value("reason", ""), "ReclaimQuota")
      << Event(big, "Preempted").dump();
  ASSERT_TRUE(WaitFor([&] { return State(c) == "Running" || State(c) == "Succeeded"; }, std::chrono::seconds(30)))
      << Get(c).dump();
  EXPECT_TRUE(WaitFor([&] { return Log(big).find("checkpointed") != std::string::npos; }, std::chrono::seconds(30)))
      << Log(big);
  EXPECT_EQ(State(base), "Running");
  EXPECT_FALSE(Has(Events(base), "Preempted"));
  EXPECT_FALSE(Has(Events(svc), "Preempted"));

  // C's sweep finishes; B's job resumes from its checkpoint as attempt 2.
  ASSERT_TRUE(WaitFor([&] { return State(c) == "Succeeded"; }, std::chrono::seconds(30))) << Get(c).dump();
  ASSERT_TRUE(WaitFor([&] { return State(big) == "Running" && Get(big).value("requeues", 0) == 1; },
                      std::chrono::seconds(30)))
      << Get(big).dump();
  ASSERT_TRUE(WaitFor([&] { return Log(big).find("attempt=2 resume=1") != std::string::npos; }, std::chrono::seconds(30)))
      << Log(big);
  std::vector<std::string> big_events = Events(big);
  for (const char* e : {"Admitted", "Started", "Preempted", "Requeued"}) {
    EXPECT_TRUE(Has(big_events, e)) << e << " in " << ::testing::PrintToString(big_events);
  }
  EXPECT_EQ(std::count(big_events.begin(), big_events.end(), "Admitted"), 2) << ::testing::PrintToString(big_events);
  std::vector<std::string> c_events = Events(c);
  for (const char* e : {"Admitted", "Started", "Succeeded"}) {
    EXPECT_TRUE(Has(c_events, e)) << e << " in " << ::testing::PrintToString(c_events);
  }

  // An experiment sits idle on its GPU (the fake device reports 0%): notice, then reclaim.
  std::string nb = Submit(
      "kind: Experiment\nname: notebook\nproject: team-c/research\nqueue: qexp\npriorityClass: experiment\nspec:\n"
      "  command: [\"sleep\", \"600\"]\n" +
      Group(1, "notebook") + "  idle: {utilizationBelowPercent: 5, windowSeconds: 2, noticeSeconds: 2}\n");
  ASSERT_TRUE(WaitFor([&] { return State(nb) == "Cancelled"; }, std::chrono::seconds(60))) << Get(nb).dump();
  std::vector<std::string> nb_events = Events(nb);
  for (const char* e : {"Admitted", "Started", "IdleNotice", "IdleReclaimed"}) {
    EXPECT_TRUE(Has(nb_events, e)) << e << " in " << ::testing::PrintToString(nb_events);
  }
  EXPECT_EQ(Get(nb).value("failureReason", ""), "");

  // Every decision that touched a user's work is in the audit log.
  std::string dump = server_->Client().Get("/api/v1/audit?limit=100000").text;  // JSON lines
  for (const char* action : {"\"admit\"", "\"preempt\"", "\"scale\"", "\"reclaim\""}) {
    EXPECT_NE(dump.find(action), std::string::npos) << action;
  }
}

// Proof 2, training never squeezes production inference, when the quotas add up but the nodes
// are fragmented: team B's two trainings, each within its own queue's nominal quota, hold 3 of 4
// GPUs on both big nodes. Team A's production service (2 GPUs, inside its never-lent nominal
// quota) fits no node. Without `reservation.reserved` it waits (work within its nominal quota is
// never reclaimed); with it, the newest training is checkpointed and evicted to make room, and
// the service runs. The probe of 2026-12-07 found `reserved: true` did nothing.
TEST_F(AcceptanceTest, ReservedInferenceMakesRoomWhereTrainingWithinItsQuotaFillsTheNodes) {
  ASSERT_EQ(server_->Client()
                .Post("/api/v1/apply",
                      "kind: Queue\nname: qt\ntenant: team-b\nquotas:\n"
                      "  - {resource: gpu/nvidia/A100-80G, nominal: 6}\n  - {resource: cpu, nominal: 32}\n"
                      "  - {resource: memory, nominal: 128Gi}\n",
                      "application/yaml")
                .status,
            200);
  auto in_qt = [](std::string yaml) { return yaml.replace(yaml.find("queue: qb"), 9, "queue: qt"); };
  std::string t1 = Submit(in_qt(Training("t1", 3)));
  ASSERT_TRUE(WaitFor([&] { return State(t1) == "Running"; }, std::chrono::seconds(30))) << Get(t1).dump();
  std::string t2 = Submit(in_qt(Training("t2", 3)));
  ASSERT_TRUE(WaitFor([&] { return State(t2) == "Running"; }, std::chrono::seconds(30))) << Get(t2).dump();
  const std::string t2_node = Get(t2)["placements"][0].value("node", "");
  ASSERT_NE(Get(t1)["placements"][0].value("node", ""), t2_node);

  auto service = [](const std::string& name, const std::string& reservation) {
    return "kind: InferenceService\nname: " + name +
           "\nproject: team-a/serve\nqueue: qa\npriorityClass: production\nspec:\n"
           "  command: [\"sleep\", \"600\"]\n" +
           Group(2, "server") + "  replicas: 1\n" + reservation;
  };
  std::string plain = Submit(service("plain", ""));
  ASSERT_TRUE(WaitFor([&] { return Get(plain).contains("pendingReason"); }, std::chrono::seconds(10)));
  EXPECT_EQ(State(plain), "Pending") << Get(plain).dump();
  EXPECT_FALSE(Has(Events(t1), "Preempted"));
  EXPECT_FALSE(Has(Events(t2), "Preempted"));
  ASSERT_EQ(server_->Client().Post("/api/v1/workloads/" + plain + "/cancel", "{}", "application/json").status, 200);

  std::string svc = Submit(service("reserved", "  reservation: {reserved: true}\n"));
  ASSERT_TRUE(WaitFor([&] { return State(svc) == "Running"; }, std::chrono::seconds(30))) << Get(svc).dump();
  ASSERT_TRUE(Has(Events(t2), "Preempted")) << ::testing::PrintToString(Events(t2));
  EXPECT_EQ(Event(t2, "Preempted")["details"].value("reason", ""), "MakeRoom") << Event(t2, "Preempted").dump();
  EXPECT_FALSE(Has(Events(t1), "Preempted"));  // one eviction is enough: the newest
  EXPECT_EQ(State(t1), "Running");
  EXPECT_TRUE(WaitFor([&] { return Log(t2).find("checkpointed") != std::string::npos; }, std::chrono::seconds(30)))
      << Log(t2);
  EXPECT_EQ(Get(svc)["placements"][0].value("node", ""), t2_node);  // where t2 made room
  // The training waits for room again, within its quota, and is not started on the service's GPUs.
  EXPECT_TRUE(WaitFor([&] { return State(t2) == "Requeued" && Get(t2)["placements"].empty(); },
                      std::chrono::seconds(30)))
      << Get(t2).dump();
  EXPECT_EQ(Get(t2)["pendingReason"].value("code", ""), "Placement") << Get(t2).dump();
}

// An operator restarts an agent (SIGTERM: an upgrade, `systemctl restart`). The probe of
// 2026-12-07 saw the training it stopped requeued and placed back on the same node within a
// millisecond, while its agent was going away, and started there by the next agent whatever
// that one's pool. Now the agent says it is leaving first: the node is NotReady before the
// training's report is read, the training runs on the other node, and the node is Ready again
// once its agent registers.
TEST_F(AcceptanceTest, ATrainingStoppedByItsAgentsShutdownIsNotPlacedBackOnThatNode) {
  std::string filler = Submit(  // lab-1's one GPU, so the training goes to a 4-GPU node
      "kind: BatchJob\nname: filler\nproject: team-b/train\nqueue: qb\npriorityClass: training\nspec:\n"
      "  command: [\"sleep\", \"600\"]\n  tasks: 1\n  parallelism: 1\n" +
      Group(1));
  ASSERT_TRUE(WaitFor([&] { return State(filler) == "Running"; }, std::chrono::seconds(30))) << Get(filler).dump();
  std::string t = Submit(Training("t", 1));
  ASSERT_TRUE(WaitFor([&] { return State(t) == "Running"; }, std::chrono::seconds(30))) << Get(t).dump();
  const std::string first = Get(t)["placements"][0].value("node", "");
  ASSERT_TRUE(first == "gpu-1" || first == "gpu-2") << first;
  AgentProcess& leaving = *agents_[first == "gpu-1" ? 0 : 1];

  EXPECT_EQ(leaving.Terminate(), 0);
  json node = server_->Client().Get("/api/v1/nodes/" + first).body;
  EXPECT_EQ(node.value("state", ""), "NotReady") << node.dump();
  // Running again after its requeue (the stop's report may still be on its way when the agent
  // has exited: the first run's Running would otherwise satisfy the wait).
  ASSERT_TRUE(WaitFor([&] {
    json w = Get(t);
    return w.value("requeues", 0) >= 1 && w.value("state", "") == "Running" && !w["placements"].empty() &&
           w["placements"][0].value("phase", "") == "Running";
  }, std::chrono::seconds(30))) << Get(t).dump();
  EXPECT_NE(Get(t)["placements"][0].value("node", ""), first) << Get(t).dump();
  EXPECT_EQ(Get(t).value("requeues", 0), 1) << Get(t).dump();
  EXPECT_TRUE(Log(t).find("checkpointed") != std::string::npos) << Log(t);

  leaving.Start();  // registers again: the node takes work again
  EXPECT_TRUE(WaitFor([&] {
    return server_->Client().Get("/api/v1/nodes/" + first).body.value("state", "") == "Ready";
  }, std::chrono::seconds(30)));
}

}  // namespace
}  // namespace abacus::testing
