// Device health drives placement (issue 26), with real `abacus server` and `abacus agent`
// processes: a fault injected on the agent (--fault-file) marks the device Unhealthy with the
// agent's reason, the task on it is requeued and placed on a healthy device, the device comes
// back only after the clean window, a node whose devices keep failing is cordoned by the
// health rule, and an operator's uncordon returns it; faults are audited and counted in /metrics.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>
#include <string>

#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;

std::string SleepJob(const std::string& name) {
  return "kind: TrainingJob\nname: " + name +
         "\nproject: acme/ml\nqueue: train\nspec:\n  command: [\"sleep\", \"120\"]\n"
         "  taskGroups:\n    - name: worker\n      replicas: 1\n      resources:\n"
         "        cpu: 1\n        memory: 1Gi\n        accelerators: {flavor: \"gpu/nvidia/A100-80G\", count: 1}\n";
}

json Device(cli::ApiClient& api, int index) {
  json node = api.Get("/api/v1/nodes/gpu-a").body;
  for (const auto& d : node.value("devices", json::array())) {
    if (d.value("index", -1) == index) return d;
  }
  return json::object();
}

// The device index the workload's first task holds, -1 while it holds none.
int HeldDevice(cli::ApiClient& api, const std::string& id) {
  json w = api.Get("/api/v1/workloads/" + id).body;
  if (w.value("state", "") != "Running" || w["placements"].empty()) return -1;
  const json& devices = w["placements"][0]["devices"];
  return devices.empty() ? -1 : devices[0].value("index", -1);
}

// How many of the node's events have `type` and mention `text`.
int CountNodeEvents(cli::ApiClient& api, const std::string& type, const std::string& text) {
  json events = api.Get("/api/v1/nodes/gpu-a/events").body;
  int n = 0;
  for (const auto& e : events.value("items", json::array())) {
    n += e.value("type", "") == type && e.dump().find(text) != std::string::npos;
  }
  return n;
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
  auto sub = api.Post("/api/v1/workloads", SleepJob("victim"), "application/yaml");
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
  auto second = api.Post("/api/v1/workloads", SleepJob("waits"), "application/yaml");
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
  int device_faults = 0, cordons = 0;
  std::string audit;
  ASSERT_TRUE(WaitFor([&] {  // decisions reach the chain through the audit writer
    audit = api.Get("/api/v1/audit?since=1h").text;  // JSON lines
    device_faults = cordons = 0;
    std::istringstream lines(audit);
    for (std::string line; std::getline(lines, line);) {
      json e = json::parse(line, nullptr, false);
      if (!e.is_object()) continue;
      device_faults += e.value("action", "") == "device-fault";
      cordons += e.value("action", "") == "cordon" && e.value("actor", "") == "abacus/health";
    }
    return device_faults == 2 && cordons == 1;
  })) << audit;

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
