// Device health drives placement (issue 26), with real `abacus server` and `abacus agent`
// processes: a fault injected on the agent (--fault-file) marks the device Unhealthy with the
// agent's reason, the task on it is requeued and placed on a healthy device, the device comes
// back only after the clean window, a node whose devices keep failing is cordoned by the
// health rule, and an operator's uncordon returns it; faults are audited and counted in /metrics.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "device_health_util.h"
#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;

constexpr char kA100[] = "gpu/nvidia/A100-80G";

json Device(cli::ApiClient& api, int index) { return NodeDevice(api, "gpu-a", index); }

int CountNodeEvents(cli::ApiClient& api, const std::string& type, const std::string& text) {
  return testing::CountNodeEvents(api, "gpu-a", type, text);
}

bool NodeEventSays(cli::ApiClient& api, const std::string& type, const std::string& text) {
  return CountNodeEvents(api, type, text) > 0;
}

TEST(DeviceHealthTest, AFaultMovesTheWorkProbationHoldsTheDeviceAndRepeatedFaultsCordonTheNode) {
  TempDir data, faults;
  const std::string fault_file = faults.path() + "/faults";
  ServerProcess server(data.path(), {"--heartbeat", "1", "--health-cordon-after", "2", "--health-clean-window", "5s"});
  auto api = server.Client();
  ASSERT_EQ(api.Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);
  AgentProcess agent(server, "gpu-a", "gpu:nvidia:A100-80G:2:80Gi@cuda=12.4", {"--fault-file", fault_file});
  auto sub = api.Post("/api/v1/workloads", GpuSleepJob("victim", kA100), "application/yaml");
  ASSERT_EQ(sub.status, 201) << sub.text;
  const std::string id = sub.body["items"][0]["id"];
  int bad = -1;
  ASSERT_TRUE(WaitFor([&] { return (bad = HeldDevice(api, id)) >= 0; })) << api.Get("/api/v1/workloads/" + id).text;
  const int good = 1 - bad;

  // 1. A fault on the device the task holds: Unhealthy with the agent's reason, the work moves.
  std::ofstream(fault_file) << bad << " XID 79: GPU has fallen off the bus\n";
  ASSERT_TRUE(WaitFor([&] { return Device(api, bad).value("health", "") == "Unhealthy"; }));
  EXPECT_TRUE(NodeEventSays(api, "DevicesChanged", "XID 79")) << api.Get("/api/v1/nodes/gpu-a/events").text;
  EXPECT_TRUE(WaitFor([&] { return HeldDevice(api, id) == good; }))
      << api.Get("/api/v1/workloads/" + id + "/events").text;
  // Nothing new goes to the failed device: a second job waits.
  auto second = api.Post("/api/v1/workloads", GpuSleepJob("waits", kA100), "application/yaml");
  ASSERT_EQ(second.status, 201);
  const std::string second_id = second.body["items"][0]["id"];

  // 2. Healthy again on the agent: on probation for the clean window, then back in service.
  std::ofstream(fault_file, std::ios::trunc) << "";
  ASSERT_TRUE(WaitFor([&] { return NodeEventSays(api, "DevicesChanged", "Recovering"); }));
  EXPECT_EQ(Device(api, bad).value("health", ""), "Unhealthy");  // not before the window
  EXPECT_NE(api.Get("/api/v1/workloads/" + second_id).body.value("state", ""), "Running");
  ASSERT_TRUE(WaitFor([&] { return Device(api, bad).value("health", "") == "Healthy"; }));
  EXPECT_TRUE(NodeEventSays(api, "DevicesRecovered", "Healthy"));
  EXPECT_TRUE(WaitFor([&] { return HeldDevice(api, second_id) == bad; }));

  // 3. A second fault within the window cordons the node by the health rule.
  std::ofstream(fault_file, std::ios::trunc) << good << " volatile uncorrected ECC errors\n";
  ASSERT_TRUE(WaitFor([&] { return api.Get("/api/v1/nodes/gpu-a").body.value("schedulingState", "") == "Cordoned"; }));
  json node = api.Get("/api/v1/nodes/gpu-a").body;
  const json cordon = node.value("cordon", json::object());
  EXPECT_EQ(cordon.value("by", ""), "abacus/health") << node.dump();
  EXPECT_NE(cordon.value("reason", "").find("2 device fault(s)"), std::string::npos) << node.dump();
  // Counted, and audited (the fault and the cordon).
  const std::string metrics = api.Get("/metrics").text;
  EXPECT_NE(metrics.find(R"(abacus_device_faults_total{cluster="default",pool="default",flavor="gpu/nvidia/A100-80G"} 2)"),
            std::string::npos)
      << metrics;
  ASSERT_TRUE(WaitFor([&] {  // decisions reach the chain through the audit writer
    return CountAudit(api, "device-fault") == 2 && CountAudit(api, "cordon", "abacus/health") == 1;
  })) << api.Get("/api/v1/audit?since=1h").text;

  // 4. The operator fixes it and uncordons: the node and its devices are back at once.
  std::ofstream(fault_file, std::ios::trunc) << "";
  ASSERT_TRUE(WaitFor([&] { return CountNodeEvents(api, "DevicesChanged", "Recovering") == 2; }));
  EXPECT_EQ(Device(api, good).value("health", ""), "Unhealthy");  // on probation
  ASSERT_EQ(api.Post("/api/v1/nodes/gpu-a/uncordon", json::object().dump(), "application/json").status, 200);
  node = api.Get("/api/v1/nodes/gpu-a").body;
  EXPECT_EQ(node.value("schedulingState", ""), "Ready") << node.dump();
  EXPECT_EQ(Device(api, good).value("health", ""), "Healthy") << node.dump();
}

}  // namespace
}  // namespace abacus::testing
