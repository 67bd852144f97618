// The heterogeneous proof of concept, end to end with real processes: a server and three agents
// on loopback — fake NVIDIA GPUs of two models and two CUDA versions, fake Ascend NPUs, and a
// CPU-only node. GPU, NPU and CPU work each lands on the right node with the right visibility
// variables (the task prints its environment to its log), runs and completes; work nothing can
// host stays pending with a reason naming what is missing; killing an agent requeues its tasks
// elsewhere.
#include <gtest/gtest.h>

#include "server/server_test_util.h"
#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;

const std::string kOrg = server::testing_org::TeamOrg("lab", "poc", "poc",
                                                     {{"gpu/nvidia/A100-80G", "8"}, {"gpu/nvidia/T4", "8"},
                                                      {"npu/huawei/Ascend910B", "8"}, {"cpu", "256"}, {"memory", "1Ti"}});

// A one-task BatchJob that prints its environment, then sleeps `sleep` seconds.
std::string Job(const std::string& name, const std::string& resources, const std::string& extra = "",
                int sleep = 0) {
  return "kind: BatchJob\nname: " + name +
         "\nproject: lab/poc\nqueue: poc\nspec:\n  command: [\"sh\", \"-c\", \"env | sort; sleep " +
         std::to_string(sleep) + "\"]\n  tasks: 1\n  parallelism: 1\n  taskGroups:\n    - name: main\n" +
         "      resources: " + resources + "\n" + extra;
}

class PocTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(dir_.path(), std::vector<std::string>{"--node-timeout", "3"});
    ASSERT_EQ(server_->Client().Post("/api/v1/apply", kOrg, "application/yaml").status, 200);
    gpu_ = std::make_unique<AgentProcess>(*server_, "gpu-a",
                                          "gpu:nvidia:A100-80G:2:80Gi@cuda=12.4,gpu:nvidia:T4:2:16Gi@cuda=11.8");
    npu_ = std::make_unique<AgentProcess>(*server_, "npu-a", "npu:huawei:Ascend910B:2:64Gi@cann=8.0");
    cpu_ = std::make_unique<AgentProcess>(*server_, "cpu-a", "", std::vector<std::string>{"--labels", "class=cpu"});
  }
  std::string Submit(const std::string& yaml) {
    auto r = server_->Client().Post("/api/v1/workloads", yaml, "application/yaml");
    EXPECT_EQ(r.status, 201) << r.text;
    return r.ok() ? r.body["items"][0]["id"].get<std::string>() : "";
  }
  json Get(const std::string& id) { return server_->Client().Get("/api/v1/workloads/" + id).body; }
  std::string Log(const std::string& id) {
    auto r = server_->Client().Get("/api/v1/workloads/" + id + "/logs");
    return r.ok() ? r.body.value("content", "") : "";
  }
  // Waits until `id` Succeeded with its output shipped; returns the log.
  std::string RunToCompletion(const std::string& id) {
    EXPECT_TRUE(WaitFor([&] { return Get(id).value("state", "") == "Succeeded"; }, std::chrono::seconds(60)))
        << Get(id).dump();
    std::string log;
    EXPECT_TRUE(WaitFor([&] { return (log = Log(id)).find("ABACUS_TASK_ID=") != std::string::npos; }));
    return log;
  }
  static std::string Var(const std::string& log, const std::string& name) {
    size_t at = log.find("\n" + name + "=");
    if (at == std::string::npos && log.rfind(name + "=", 0) == 0) at = 0; else if (at != std::string::npos) ++at;
    if (at == std::string::npos) return "<unset>";
    size_t start = at + name.size() + 1;
    return log.substr(start, log.find('\n', start) - start);
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<AgentProcess> gpu_, npu_, cpu_;
};

TEST_F(PocTest, EachKindOfWorkLandsOnTheRightDeviceAndRuntime) {
  std::string a100 = Submit(Job("a100", "{cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: 1}}",
                                "      runtime: [\"cuda>=12.2\"]\n"));
  std::string t4 = Submit(Job("t4", "{cpu: 1, memory: 1Gi, accelerators: {flavor: \"gpu/nvidia/*\", count: 2}}",
                              "      runtime: [\"cuda<12\"]\n"));
  std::string npu = Submit(Job("ascend", "{cpu: 1, memory: 1Gi, accelerators: {flavor: \"npu/huawei/*\", count: 1}}",
                               "      runtime: [\"cann>=8.0\"]\n"));
  std::string cpu = Submit(Job("cpu", "{cpu: 2, memory: 1Gi}", "      nodeSelector: {class: cpu}\n"));
  std::string never = Submit(Job("cuda13", "{cpu: 1, memory: 1Gi, accelerators: {flavor: \"gpu/nvidia/*\", count: 1}}",
                                 "      runtime: [\"cuda>=13.0\"]\n"));

  std::string log = RunToCompletion(a100);
  EXPECT_EQ(Get(a100)["placements"][0]["node"], "gpu-a");
  EXPECT_EQ(Get(a100)["groupFlavors"][0], "gpu/nvidia/A100-80G");
  EXPECT_EQ(Var(log, "CUDA_VISIBLE_DEVICES").size(), 1u) << log;  // one device index
  EXPECT_EQ(Var(log, "ASCEND_RT_VISIBLE_DEVICES"), "<unset>") << log;

  log = RunToCompletion(t4);
  EXPECT_EQ(Get(t4)["groupFlavors"][0], "gpu/nvidia/T4");
  EXPECT_EQ(Var(log, "CUDA_VISIBLE_DEVICES").size(), 3u) << log;  // "i,j"

  log = RunToCompletion(npu);
  EXPECT_EQ(Get(npu)["placements"][0]["node"], "npu-a");
  EXPECT_EQ(Var(log, "ASCEND_RT_VISIBLE_DEVICES").size(), 1u) << log;
  EXPECT_EQ(Var(log, "CUDA_VISIBLE_DEVICES"), "<unset>") << log;

  log = RunToCompletion(cpu);
  EXPECT_EQ(Get(cpu)["placements"][0]["node"], "cpu-a");
  EXPECT_EQ(Var(log, "CUDA_VISIBLE_DEVICES"), "<unset>") << log;
  EXPECT_EQ(Var(log, "ABACUS_WORKLOAD_ID"), cpu);

  // Nothing offers CUDA 13: it stays pending and says why.
  json w = Get(never);
  EXPECT_EQ(w.value("state", ""), "Pending");
  std::string reason = w["pendingReason"].value("message", "");
  EXPECT_NE(reason.find("cuda"), std::string::npos) << reason;
}

TEST_F(PocTest, KilledAgentsTasksAreRequeuedAndPlacedElsewhere) {
  AgentProcess spare(*server_, "gpu-b", "gpu:nvidia:A100-80G:2:80Gi@cuda=12.4");
  // A training job requeues as a whole (gang) when a node is lost; a batch slot would be
  // placed again on its own (AcceptanceTest, ControlPlaneTest cover that).
  std::string job = Job("long", "{cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: 2}}", "", 300);
  job.replace(job.find("kind: BatchJob"), 14, "kind: TrainingJob");
  const std::string array = "  tasks: 1\n  parallelism: 1\n";
  job.erase(job.find(array), array.size());
  std::string id = Submit(job);
  ASSERT_TRUE(WaitFor([&] { return Get(id).value("state", "") == "Running"; })) << Get(id).dump();
  std::string first = Get(id)["placements"][0]["node"];
  AgentProcess* victim = first == "gpu-a" ? gpu_.get() : &spare;
  victim->Kill9();
  // The node goes silent: NotReady, the task is lost, the workload requeued and placed on the
  // other GPU node as attempt 2.
  ASSERT_TRUE(WaitFor([&] {
    json w = Get(id);
    return w.value("requeues", 0) == 1 && w.value("state", "") == "Running";
  }, std::chrono::seconds(60))) << Get(id).dump();
  EXPECT_NE(Get(id)["placements"][0]["node"], first);
  EXPECT_EQ(server_->Client().Get("/api/v1/nodes/" + first).body.value("state", ""), "NotReady");
  // The killed agent comes back: its lifeline watcher already stopped the task of its previous
  // life; the pid file left behind is cleaned up and the task reported Lost.
  victim->Start();
  server_->Client().Post("/api/v1/workloads/" + id + "/cancel", "{}", "application/json");
}

}  // namespace
}  // namespace abacus::testing
