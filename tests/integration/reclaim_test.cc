// Issue 19.1, as the buyer ran it, with a real server and three real agents (fake A100s): queue
// qb (nominal 8, borrowing limit 16) runs a 24-GPU gang training, 16 of them borrowed from qc's
// idle quota; qc then submits 16 one-GPU batch tasks at the same priority class. The training is
// preempted once (reclaim), checkpoints, and waits; the capacity it gave back goes to qc's work,
// which runs and finishes; then the training resumes. Before, the server re-admitted the training
// on the quota it had just given back and preempted it again, over and over, and qc's work never
// started.
#include <gtest/gtest.h>

#include <algorithm>

#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;

constexpr char kOrg[] = R"(kind: Tenant
name: team-b
---
kind: Tenant
name: team-c
---
kind: Project
name: train
tenant: team-b
---
kind: Project
name: batch
tenant: team-c
---
kind: Cohort
name: shared
---
kind: Queue
name: qb
tenant: team-b
cohort: shared
quotas:
  - {resource: gpu/nvidia/A100-80G, nominal: 8, borrowingLimit: 16}
  - {resource: cpu, nominal: 32}
  - {resource: memory, nominal: 128Gi}
---
kind: Queue
name: qc
tenant: team-c
cohort: shared
quotas:
  - {resource: gpu/nvidia/A100-80G, nominal: 16}
  - {resource: cpu, nominal: 32}
  - {resource: memory, nominal: 128Gi}
)";

constexpr char kTraining[] = R"(kind: TrainingJob
name: big-train
project: team-b/train
queue: qb
priorityClass: training
spec:
  command: ["sh", "-c", "echo attempt=$ABACUS_ATTEMPT; trap 'echo checkpointed; exit 0' TERM; sleep 600 & wait"]
  checkpoint: {signal: SIGTERM, graceSeconds: 3}
  taskGroups:
    - name: worker
      replicas: 3
      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: 8}}
)";

constexpr char kBatch[] = R"(kind: BatchJob
name: c-batch
project: team-c/batch
queue: qc
priorityClass: training
spec:
  command: ["sh", "-c", "sleep 4"]
  tasks: 16
  parallelism: 16
  taskGroups:
    - name: main
      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: 1}}
)";

class ReclaimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(
        dir_.path(), std::vector<std::string>{"--heartbeat", "1", "--node-timeout", "10"});
    ASSERT_EQ(server_->Client().Post("/api/v1/apply", kOrg, "application/yaml").status, 200);
    const std::vector<std::string> size = {"--cpus", "32", "--memory", "128Gi"};
    for (const char* name : {"gpu-1", "gpu-2", "gpu-3"}) {
      agents_.push_back(std::make_unique<AgentProcess>(*server_, name, "gpu:nvidia:A100-80G:8:80Gi@cuda=12.4", size));
    }
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
  int Count(const std::string& id, const std::string& type) {
    auto v = Events(id);
    return static_cast<int>(std::count(v.begin(), v.end(), type));
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::vector<std::unique_ptr<AgentProcess>> agents_;
};

TEST_F(ReclaimTest, CapacityFreedByAReclaimGoesToThePreemptorAndTheVictimWaitsOnce) {
  std::string train = Submit(kTraining);
  ASSERT_TRUE(WaitFor([&] { return State(train) == "Running"; }, std::chrono::seconds(30))) << Get(train).dump();

  std::string batch = Submit(kBatch);
  // qc's work starts on what the training gave back...
  ASSERT_TRUE(WaitFor([&] { return State(batch) == "Running" || State(batch) == "Succeeded"; },
                      std::chrono::seconds(40)))
      << "batch: " << Get(batch).dump() << "\ntraining events: " << ::testing::PrintToString(Events(train));
  // ...while the training, preempted exactly once, waits behind it.
  EXPECT_EQ(Count(train, "Preempted"), 1) << ::testing::PrintToString(Events(train));
  EXPECT_EQ(Count(train, "Admitted"), 1) << ::testing::PrintToString(Events(train));
  const std::string waiting = State(train);
  EXPECT_TRUE(waiting == "Requeued" || waiting == "Pending" || waiting == "Preempting") << Get(train).dump();
  json explain = server_->Client().Get("/api/v1/workloads/" + train + "/explain").body;
  EXPECT_NE(explain.value("text", "").find("borrow"), std::string::npos) << explain.dump();

  // qc's work finishes; the training resumes as attempt 2, and was preempted only that once.
  ASSERT_TRUE(WaitFor([&] { return State(batch) == "Succeeded"; }, std::chrono::seconds(60))) << Get(batch).dump();
  ASSERT_TRUE(WaitFor([&] { return State(train) == "Running"; }, std::chrono::seconds(40))) << Get(train).dump();
  EXPECT_EQ(Count(train, "Preempted"), 1) << ::testing::PrintToString(Events(train));
  EXPECT_EQ(Count(train, "Admitted"), 2) << ::testing::PrintToString(Events(train));
  EXPECT_EQ(Get(train).value("requeues", 0), 1);
  server_->Client().Post("/api/v1/workloads/" + train + "/cancel", "{}", "application/json");
}

}  // namespace
}  // namespace abacus::testing
