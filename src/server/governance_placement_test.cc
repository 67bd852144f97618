// What admission policies decide reaches placement and the agents: the pools of a tenant's
// policies constrain the scheduler's choice of nodes (not only the pools a workload names), and
// the network class travels in the assignment of each task.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "server/agent_api.h"
#include "server/control_plane.h"
#include "server/desired_tasks.h"
#include "server/read_views_json.h"

namespace abacus::server {
namespace {

using nlohmann::json;

constexpr char kOrg[] = R"(kind: Pool
name: train
---
kind: Pool
name: test
---
kind: Tenant
name: t1
---
kind: Project
name: p1
tenant: t1
---
kind: Queue
name: q1
tenant: t1
quotas:
  - {resource: cpu, nominal: 1000}
  - {resource: memory, nominal: 4Ti}
---
kind: AdmissionPolicy
name: t1-test-only
tenants: [t1]
spec:
  pools: [test]
  network: isolated
)";

std::string Job(const std::string& name, int cpu) {
  return "kind: TrainingJob\nname: " + name + "\nproject: t1/p1\nqueue: q1\nspec:\n  command: [\"true\"]\n"
         "  taskGroups:\n    - name: w\n      resources: {cpu: " + std::to_string(cpu) + ", memory: 1Gi}\n";
}

class AdmissionPlacementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("abacus-admit-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    ControlPlaneOptions o;
    o.data_dir = dir_.string();
    o.store_url = "memory://";
    auto cp = ControlPlane::Open(o);
    ASSERT_TRUE(cp.ok()) << cp.status().ToString();
    cp_ = std::move(*cp);
    auto applied = cp_->Apply(kOrg, false, "org.yaml", nullptr, {}, false, nullptr);
    ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  }
  // Opens (or reopens) a server on the default store, SQLite in the data folder.
  void OpenDurable() {
    cp_.reset();
    ControlPlaneOptions o;
    o.data_dir = (dir_ / "durable").string();
    auto cp = ControlPlane::Open(o);
    ASSERT_TRUE(cp.ok()) << cp.status().ToString();
    cp_ = std::move(*cp);
  }
  void TearDown() override {
    cp_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Node(const std::string& name, const std::string& pool, int cpu) {
    auto r = cp_->PutNode({{"name", name}, {"pool", pool}, {"cpu", std::to_string(cpu)}, {"memory", "64Gi"}}, nullptr);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
  }
  std::string Submit(const std::string& yaml) {
    auto r = cp_->Submit(yaml, false, "job.yaml", nullptr, {}, false, nullptr);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->answer.submitted[0].id : "";
  }
  json Get(const std::string& id) { return WorkloadViewJson(cp_->GetWorkload(id)).value_or(json()); }
  // Registers agent-1, an 8-CPU agent node of pool test.
  void RegisterTestAgent() {
    json reg = {{"name", "agent-1"}, {"pool", "test"}, {"cpuMilli", 8000}, {"memoryBytes", int64_t{16} << 30},
                {"devices", json::array()}, {"agentVersion", "test"}};
    auto registered = cp_->RegisterAgent(reg, nullptr);
    ASSERT_TRUE(registered.ok()) << registered.status().ToString();
  }
  // The network class in agent-1's one assignment ("<none>" when it has not exactly one task).
  std::string NetworkOfTheOnlyTask() {
    auto tasks = cp_->WaitAssignments("agent-1", 0, std::chrono::milliseconds(0));
    if (!tasks.ok() || tasks->tasks.size() != 1) return "<none>";
    return AssignmentJson(*tasks, "agent-1", nullptr)["tasks"][0].value("network", "");
  }

  std::filesystem::path dir_;
  std::unique_ptr<ControlPlane> cp_;
};

TEST_F(AdmissionPlacementTest, PolicyPoolsConstrainPlacement) {
  // The train node is larger and empty; only the test pool is open to t1's workloads.
  Node("big-train", "train", 64);
  Node("small-test", "test", 8);
  std::string a = Submit(Job("a", 4));
  std::string b = Submit(Job("b", 4));
  std::string c = Submit(Job("c", 4));
  cp_->WaitForCycle();
  std::set<std::string> nodes;
  int admitted = 0;
  for (const std::string& id : {a, b, c}) {
    json w = Get(id);
    EXPECT_EQ(w["spec"]["labels"]["abacus.io/allowed-pools"], "test") << w.dump();
    if (w.value("state", "") == "Pending") continue;
    ++admitted;
    for (const auto& p : w["placements"]) nodes.insert(p.value("node", ""));
  }
  EXPECT_EQ(admitted, 2);  // 8 CPUs of the test pool; the third waits although train is free
  EXPECT_EQ(nodes, (std::set<std::string>{"small-test"}));
  json waiting = Get(c).value("state", "") == "Pending" ? Get(c) : Get(b).value("state", "") == "Pending" ? Get(b) : Get(a);
  EXPECT_EQ(waiting.value("state", ""), "Pending") << waiting.dump();
  EXPECT_NE(waiting.dump().find("pool"), std::string::npos) << waiting.dump();  // the reason names the pool filter

  // A second node in the allowed pool takes the waiting one.
  Node("test-2", "test", 8);
  cp_->WaitForCycle();
  EXPECT_NE(Get(waiting.value("id", "")).value("state", ""), "Pending");
}

TEST_F(AdmissionPlacementTest, TheOutcomeIsTypedAndSurvivesARestart) {
  OpenDurable();
  auto applied = cp_->Apply(kOrg, false, "org.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  // The submitter's own admission labels are not the outcome: the policy's are.
  std::string id = Submit("kind: TrainingJob\nname: x\nproject: t1/p1\nqueue: q1\n"
                          "labels: {abacus.io/allowed-pools: train, abacus.io/network: internet}\nspec:\n"
                          "  command: [\"true\"]\n  taskGroups:\n    - name: w\n      resources: {cpu: 4, memory: 1Gi}\n");
  ASSERT_FALSE(id.empty());
  EXPECT_EQ(Get(id)["spec"]["labels"]["abacus.io/allowed-pools"], "test");
  EXPECT_EQ(Get(id)["spec"]["labels"]["abacus.io/network"], "isolated");
  OpenDurable();  // the records are read back from the store
  // After the restart the pools still constrain placement: a free train node is not used.
  Node("big-train", "train", 64);
  cp_->WaitForCycle();
  EXPECT_EQ(Get(id).value("state", ""), "Pending") << Get(id).dump();
  // … and the network class still reaches the agent of the test pool.
  RegisterTestAgent();
  cp_->WaitForCycle();
  ASSERT_EQ(Get(id).value("state", ""), "Admitted") << Get(id).dump();
  EXPECT_EQ(NetworkOfTheOnlyTask(), "isolated");
}

TEST_F(AdmissionPlacementTest, NetworkClassTravelsInTheAssignment) {
  RegisterTestAgent();
  std::string id = Submit(Job("n", 1));
  cp_->WaitForCycle();
  ASSERT_EQ(Get(id).value("state", ""), "Admitted") << Get(id).dump();
  EXPECT_EQ(NetworkOfTheOnlyTask(), "isolated");
}

}  // namespace
}  // namespace abacus::server
