#include "device_health_util.h"

#include <sstream>

namespace abacus::testing {

using nlohmann::json;

std::string GpuSleepJob(const std::string& name, const std::string& flavor) {
  return "kind: TrainingJob\nname: " + name +
         "\nproject: acme/ml\nqueue: train\nspec:\n  command: [\"sleep\", \"120\"]\n"
         "  taskGroups:\n    - name: worker\n      replicas: 1\n      resources:\n"
         "        cpu: 1\n        memory: 1Gi\n        accelerators: {flavor: \"" +
         flavor + "\", count: 1}\n";
}

json NodeDevice(cli::ApiClient& api, const std::string& node, int index) {
  json body = api.Get("/api/v1/nodes/" + node).body;
  for (const auto& d : body.value("devices", json::array())) {
    if (d.value("index", -1) == index) return d;
  }
  return json::object();
}

int HeldDevice(cli::ApiClient& api, const std::string& workload_id) {
  json w = api.Get("/api/v1/workloads/" + workload_id).body;
  if (w.value("state", "") != "Running" || w["placements"].empty()) return -1;
  const json& devices = w["placements"][0]["devices"];
  return devices.empty() ? -1 : devices[0].value("index", -1);
}

int CountNodeEvents(cli::ApiClient& api, const std::string& node, const std::string& type, const std::string& text) {
  json events = api.Get("/api/v1/nodes/" + node + "/events").body;
  int n = 0;
  for (const auto& e : events.value("items", json::array())) {
    n += e.value("type", "") == type && e.dump().find(text) != std::string::npos;
  }
  return n;
}

int CountAudit(cli::ApiClient& api, const std::string& action, const std::string& actor) {
  std::istringstream lines(api.Get("/api/v1/audit?since=1h").text);  // JSON lines
  int n = 0;
  for (std::string line; std::getline(lines, line);) {
    json e = json::parse(line, nullptr, false);
    if (!e.is_object() || e.value("action", "") != action) continue;
    n += actor.empty() || e.value("actor", "") == actor;
  }
  return n;
}

}  // namespace abacus::testing
