// The NVML health path end to end (issue 26): a real `abacus agent --nvml-library` over the
// stand-in libnvidia-ml (tests/fake_nvml; the production dlopen, discovery and
// NvmlHealthWatcher code) discovers its GPUs and samples their utilization; faults the stand-in delivers through NVML's event
// API while the agent runs — an application XID, XID 79, a double-bit ECC error — reach the
// real `abacus server`: the device is Unhealthy with the XID in the reason, the task on it is
// requeued onto a healthy GPU, nothing new goes to the failed one, and the second fault cordons
// the node by the health rule; node events, metrics and the audit chain show it.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "device_health_util.h"
#include "server/server_test_util.h"
#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;

constexpr char kH100[] = "gpu/nvidia/H100-80G";  // the stand-in's "NVIDIA H100 80GB HBM3"
constexpr char kNode[] = "nvml-a";


// Sets an environment variable for the processes this test starts, and unsets it at the end.
class ScopedEnv {
 public:
  ScopedEnv(std::string name, const std::string& value) : name_(std::move(name)) { ::setenv(name_.c_str(), value.c_str(), 1); }
  ~ScopedEnv() { ::unsetenv(name_.c_str()); }

 private:
  std::string name_;
};

std::string Health(cli::ApiClient& api, int index) { return NodeDevice(api, kNode, index).value("health", ""); }

TEST(NvmlAgentHealthTest, XidAndEccEventsFromNvmlMoveTheWorkAndCordonTheNode) {
  TempDir data, faults;
  const std::string fault_file = faults.path() + "/nvml-faults";
  std::ofstream(fault_file) << "";
  ScopedEnv gpus("FAKE_NVML_GPUS", "2"), file("FAKE_NVML_FILE", fault_file);
  ServerProcess server(data.path(), {"--heartbeat", "1", "--health-cordon-after", "2"});
  auto api = server.Client();
  ASSERT_EQ(api.Post("/api/v1/apply", server::testing_org::AcmeOrg("train", 2, kH100), "application/yaml").status, 200);
  AgentProcess agent(server, kNode, "", {"--nvml-library", ABACUS_FAKE_NVML, "--cpus", "8", "--memory", "32Gi"});

  // Discovered through NVML: two H100s, healthy, with the stand-in's UUIDs.
  json node = api.Get(std::string("/api/v1/nodes/") + kNode).body;
  ASSERT_EQ(node.value("devices", json::array()).size(), 2u) << node.dump();
  for (int i = 0; i < 2; ++i) {
    const json d = NodeDevice(api, kNode, i);
    EXPECT_EQ(d.value("flavor", ""), kH100) << d.dump();
    EXPECT_EQ(d.value("uuid", ""), "GPU-fake-" + std::to_string(i)) << d.dump();
    EXPECT_EQ(d.value("health", ""), "Healthy") << d.dump();
  }
  // Sampled through the same library at every heartbeat: the stand-in's 25 % and 50 %.
  EXPECT_TRUE(WaitFor([&] {
    return NodeDevice(api, kNode, 0).value("utilization", -1.0) == 0.25 &&
           NodeDevice(api, kNode, 1).value("utilization", -1.0) == 0.5;
  })) << api.Get(std::string("/api/v1/nodes/") + kNode).text;

  auto sub = api.Post("/api/v1/workloads", GpuSleepJob("victim", kH100), "application/yaml");
  ASSERT_EQ(sub.status, 201) << sub.text;
  const std::string id = sub.body["items"][0]["id"];
  int bad = -1;
  ASSERT_TRUE(WaitFor([&] { return (bad = HeldDevice(api, id)) >= 0; })) << api.Get("/api/v1/workloads/" + id).text;
  const int good = 1 - bad;

  // 1. NVML delivers an application XID (13) on the free GPU, then XID 79 on the busy one, in one
  //    drain: the free GPU stays healthy, the busy one is Unhealthy with the XID as the reason.
  std::ofstream(fault_file, std::ios::app) << "xid " << good << " 13\nxid " << bad << " 79\n";
  ASSERT_TRUE(WaitFor([&] { return Health(api, bad) == "Unhealthy"; }))
      << api.Get(std::string("/api/v1/nodes/") + kNode).text;
  EXPECT_EQ(Health(api, good), "Healthy");
  EXPECT_TRUE(WaitFor([&] { return CountNodeEvents(api, kNode, "DevicesChanged", "XID 79: GPU has fallen off the bus") > 0; }))
      << api.Get(std::string("/api/v1/nodes/") + kNode + "/events").text;
  // The task is requeued and placed on the healthy GPU.
  EXPECT_TRUE(WaitFor([&] { return HeldDevice(api, id) == good; }))
      << api.Get("/api/v1/workloads/" + id + "/events").text;
  // Its attempt on the failed GPU ended Lost for the device (the job's failure policy requeued it).
  const std::string events = api.Get("/api/v1/workloads/" + id + "/events").text;
  EXPECT_NE(events.find("its device is gone or unhealthy"), std::string::npos) << events;
  EXPECT_NE(events.find("DeviceError"), std::string::npos) << events;
  // Nothing new goes to the failed GPU: a second job waits.
  auto second = api.Post("/api/v1/workloads", GpuSleepJob("waits", kH100), "application/yaml");
  ASSERT_EQ(second.status, 201) << second.text;
  const std::string second_id = second.body["items"][0]["id"];
  json waiting;
  ASSERT_TRUE(WaitFor([&] {  // a cycle looked at it and left it waiting
    waiting = api.Get("/api/v1/workloads/" + second_id).body;
    return waiting.value("state", "") == "Pending" && waiting.contains("pendingReason");
  })) << waiting.dump();

  // 2. A double-bit ECC event on the other GPU: the second fault cordons the node by the rule.
  std::ofstream(fault_file, std::ios::app) << "dbe " << good << "\n";
  ASSERT_TRUE(WaitFor([&] { return Health(api, good) == "Unhealthy"; }));
  // The fault and the cordon it brings are one event.
  EXPECT_TRUE(WaitFor([&] { return CountNodeEvents(api, kNode, "CordonedForHealth", "double-bit ECC error") > 0; }))
      << api.Get(std::string("/api/v1/nodes/") + kNode + "/events").text;
  ASSERT_TRUE(WaitFor([&] {
    return api.Get(std::string("/api/v1/nodes/") + kNode).body.value("schedulingState", "") == "Cordoned";
  }));
  node = api.Get(std::string("/api/v1/nodes/") + kNode).body;
  const json cordon = node.value("cordon", json::object());
  EXPECT_EQ(cordon.value("by", ""), "abacus/health") << node.dump();
  EXPECT_NE(cordon.value("reason", "").find("2 device fault(s)"), std::string::npos) << node.dump();
  // No healthy GPU is left: neither job runs.
  EXPECT_TRUE(WaitFor([&] { return HeldDevice(api, id) < 0; })) << api.Get("/api/v1/workloads/" + id).text;
  EXPECT_LT(HeldDevice(api, second_id), 0);
  // Counted and audited: both faults and the cordon.
  const std::string metrics = api.Get("/metrics").text;
  EXPECT_NE(metrics.find(R"(abacus_device_faults_total{cluster="default",pool="default",flavor="gpu/nvidia/H100-80G"} 2)"),
            std::string::npos)
      << metrics;
  EXPECT_TRUE(WaitFor([&] {  // decisions reach the chain through the audit writer
    return CountAudit(api, "device-fault") == 2 && CountAudit(api, "cordon", "abacus/health") == 1;
  })) << api.Get("/api/v1/audit?since=1h").text;
}

}  // namespace
}  // namespace abacus::testing
