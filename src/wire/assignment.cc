#include "wire/assignment.h"

namespace abacus::wire {

using nlohmann::json;

std::string_view TaskActionName(TaskAction action) { return action == TaskAction::kStop ? "stop" : "run"; }

json ToJson(const TaskAssignment& t) {
  json devices = json::array();
  for (const GrantedDevice& g : t.devices) {
    json d = {{"index", g.index}, {"milli", g.milli}, {"memoryBytes", g.memory_bytes}};
    if (g.info) {
      d["uuid"] = g.info->uuid;
      d["vendor"] = g.info->vendor;
      d["flavor"] = g.info->flavor;
      d["deviceMemoryBytes"] = g.info->memory_bytes;
    }
    devices.push_back(std::move(d));
  }
  json j = {{"taskId", t.task_id},
            {"workloadId", t.workload_id},
            {"workload", t.workload},
            {"kind", t.kind},
            {"project", t.project},
            {"group", t.group},
            {"replica", t.replica},
            {"attempt", t.attempt},
            {"run", t.run},
            {"action", TaskActionName(t.action)},
            {"command", t.command},
            {"env", t.env},
            {"image", t.image},
            {"cpuMilli", t.cpu_milli},
            {"memoryBytes", t.memory_bytes},
            {"devices", std::move(devices)},
            {"graceSeconds", t.grace_seconds},
            {"stopSignal", t.stop_signal}};
  if (t.fencing_signal) j["fencingSignal"] = *t.fencing_signal;
  if (t.fencing_grace_seconds) j["fencingGraceSeconds"] = *t.fencing_grace_seconds;
  if (t.probes) j["probes"] = *t.probes;
  if (!t.mounts.empty()) {
    json mounts = json::array();
    for (const MountSpec& m : t.mounts) {
      mounts.push_back({{"path", m.path}, {"mountPath", m.mount_path.empty() ? m.path : m.mount_path},
                        {"readOnly", m.read_only}});
    }
    j["mounts"] = std::move(mounts);
  }
  if (t.read_only_root) j["readOnlyRoot"] = true;
  if (!t.network.empty()) j["network"] = t.network;
  if (!t.results_file.empty()) j["resultsFile"] = t.results_file;
  if (!t.secret_files.empty()) {
    json files = json::array();
    for (const SecretFileData& f : t.secret_files) files.push_back({{"path", f.path}, {"data", f.data_base64}});
    j["secretFiles"] = std::move(files);
  }
  if (!t.secret_env.empty()) j["secretEnv"] = t.secret_env;
  if (!t.secret_error.empty()) j["secretError"] = t.secret_error;
  return j;
}

json ToJson(const Assignment& a) {
  json tasks = json::array();
  for (const TaskAssignment& t : a.tasks) tasks.push_back(ToJson(t));
  return {{"version", a.version}, {"tasks", std::move(tasks)}};
}

Result<TaskAssignment> ParseTaskAssignment(const json& t) {
  try {
    TaskAssignment a;
    a.task_id = t.at("taskId").get<std::string>();
    a.workload_id = t.value("workloadId", "");
    a.workload = t.value("workload", "");
    a.kind = t.value("kind", "");
    a.project = t.value("project", "");
    a.group = t.value("group", 0);
    a.replica = t.value("replica", 0);
    a.attempt = t.value("attempt", 0);
    a.run = t.value("run", 0);
    const std::string action = t.value("action", "run");
    if (action == "run") {
      a.action = TaskAction::kRun;
    } else if (action == "stop") {
      a.action = TaskAction::kStop;
    } else {
      return InvalidArgument("task " + a.task_id + ": unknown action '" + action + "'");
    }
    a.command = t.value("command", std::vector<std::string>{});
    if (t.contains("env") && t.at("env").is_object()) a.env = t.at("env").get<std::map<std::string, std::string>>();
    a.image = t.value("image", "");
    for (const auto& m : t.value("mounts", json::array())) {
      if (!m.is_object()) continue;
      a.mounts.push_back(MountSpec{m.value("path", ""), m.value("mountPath", ""), m.value("readOnly", true)});
    }
    a.network = t.value("network", "");
    a.read_only_root = t.value("readOnlyRoot", false);
    for (const auto& f : t.value("secretFiles", json::array())) {
      if (!f.is_object()) continue;
      a.secret_files.push_back(SecretFileData{f.value("path", ""), f.value("data", "")});
    }
    a.secret_error = t.value("secretError", "");
    for (const auto& n : t.value("secretEnv", json::array())) {
      if (n.is_string()) a.secret_env.insert(n.get<std::string>());
    }
    a.cpu_milli = t.value("cpuMilli", int64_t{0});
    a.memory_bytes = t.value("memoryBytes", int64_t{0});
    for (const auto& d : t.value("devices", json::array())) {
      GrantedDevice g;
      g.index = d.value("index", 0);
      g.milli = d.value("milli", int32_t{1000});
      g.memory_bytes = d.value("memoryBytes", int64_t{0});
      if (d.contains("uuid") || d.contains("vendor") || d.contains("flavor") || d.contains("deviceMemoryBytes")) {
        g.info = GrantedDeviceInfo{d.value("uuid", ""), d.value("vendor", ""), d.value("flavor", ""),
                                   d.value("deviceMemoryBytes", int64_t{0})};
      }
      a.devices.push_back(std::move(g));
    }
    a.grace_seconds = t.value("graceSeconds", int64_t{30});
    a.stop_signal = t.value("stopSignal", "SIGTERM");
    if (t.contains("fencingSignal")) a.fencing_signal = t.at("fencingSignal").get<std::string>();
    if (t.contains("fencingGraceSeconds")) a.fencing_grace_seconds = t.value("fencingGraceSeconds", int64_t{30});
    if (t.contains("probes") && t.at("probes").is_object()) a.probes = t.at("probes");
    a.results_file = t.value("resultsFile", "");
    return a;
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("assignment: ") + e.what());
  }
}

Result<Assignment> ParseAssignment(const json& j) {
  if (!j.is_object()) return InvalidArgument("assignment: expected a JSON object");
  try {
    Assignment a;
    a.version = j.at("version").get<int64_t>();
    for (const auto& t : j.value("tasks", json::array())) {
      ABACUS_ASSIGN_OR_RETURN(TaskAssignment task, ParseTaskAssignment(t));
      a.tasks.push_back(std::move(task));
    }
    return a;
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("assignment: ") + e.what());
  }
}

}  // namespace abacus::wire
