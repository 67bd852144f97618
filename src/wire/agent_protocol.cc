#include "wire/agent_protocol.h"

namespace abacus::wire {

using nlohmann::json;

json DeviceToJson(const Device& d) {
  json j = {{"index", d.index},
            {"uuid", d.uuid},
            {"flavor", d.flavor.name()},
            {"memoryBytes", d.memory_bytes},
            {"health", DeviceHealthName(d.health)},
            {"simulated", d.simulated}};
  if (!d.driver_version.empty()) j["driverVersion"] = d.driver_version;
  if (!d.runtime_versions.empty()) j["runtimeVersions"] = d.runtime_versions;
  if (d.topology.numa_node >= 0) j["numa"] = d.topology.numa_node;
  if (!d.topology.interconnect_domain.empty()) j["interconnectDomain"] = d.topology.interconnect_domain;
  if (!d.topology.pcie_switch.empty()) j["pcieSwitch"] = d.topology.pcie_switch;
  return j;
}

namespace {

json DevicesJson(const std::vector<Device>& devices) {
  json out = json::array();
  for (const auto& d : devices) out.push_back(DeviceToJson(d));
  return out;
}

json StatusesJson(const std::vector<TaskStatus>& tasks) {
  json out = json::array();
  for (const auto& t : tasks) out.push_back(ToJson(t));
  return out;
}

// The value at `key` when it is a string; nullptr otherwise.
const std::string* StringAt(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

std::optional<bool> BoolAt(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_boolean()) return std::nullopt;
  return it->get<bool>();
}

std::optional<Time> TimeAt(const json& j, const char* key) {
  const std::string* text = StringAt(j, key);
  if (text == nullptr) return std::nullopt;
  auto t = ParseTime(*text);
  if (!t.ok()) return std::nullopt;
  return *t;
}

// {"ok": bool, "count": integer}; nullopt when absent or of another shape.
std::optional<ProbeRun> RunAt(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_object()) return std::nullopt;
  auto ok = it->find("ok");
  auto count = it->find("count");
  if (ok == it->end() || count == it->end() || !ok->is_boolean() || !count->is_number_integer()) return std::nullopt;
  return ProbeRun{ok->get<bool>(), count->get<int32_t>()};
}

// The "tasks" array of a status report or heartbeat, each a task status.
Result<std::vector<TaskStatus>> StatusesOf(const json& body) {
  std::vector<TaskStatus> out;
  auto it = body.find("tasks");
  if (it == body.end()) return out;
  if (!it->is_array()) return InvalidArgument("tasks: expected an array");
  out.reserve(it->size());
  for (const json& t : *it) {
    ABACUS_ASSIGN_OR_RETURN(TaskStatus s, ParseTaskStatus(t));
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

json ToJson(const TaskStatus& s) {
  json j = {{"taskId", s.task_id}, {"phase", TaskPhaseName(s.phase)}};
  if (s.pid > 0) j["pid"] = s.pid;
  if (s.started_at) j["startedAt"] = FormatTime(*s.started_at);
  if (s.finished_at) j["finishedAt"] = FormatTime(*s.finished_at);
  if (s.final()) {
    if (s.exit_code) j["exitCode"] = *s.exit_code;
    j["signal"] = s.signal;
    j["oomKilled"] = s.oom_killed;
    j["stopped"] = s.stopped;
  }
  if (!s.message.empty()) j["message"] = s.message;
  if (!s.lost_reason.empty()) j["lostReason"] = s.lost_reason;
  if (!s.warnings.empty()) j["warnings"] = s.warnings;
  if (s.ready) j["ready"] = *s.ready;
  if (s.live) j["live"] = *s.live;
  if (!s.probe_message.empty()) j["probeMessage"] = s.probe_message;
  if (s.readiness_run) j["readinessRun"] = {{"ok", s.readiness_run->ok}, {"count", s.readiness_run->count}};
  if (s.liveness_run) j["livenessRun"] = {{"ok", s.liveness_run->ok}, {"count", s.liveness_run->count}};
  if (s.results) j["results"] = *s.results;
  if (!s.results_error.empty()) j["resultsError"] = s.results_error;
  if (!s.address.empty()) j["address"] = s.address;
  return j;
}

json ToJson(const RegisterRequest& r) {
  json taints = json::array();
  for (const auto& t : r.taints) {
    taints.push_back({{"key", t.key}, {"value", t.value}, {"effect", TaintEffectName(t.effect)}});
  }
  json j = {{"name", r.name},
            {"cluster", r.cluster},
            {"labels", r.labels},
            {"taints", std::move(taints)},
            {"cpuMilli", r.cpu_milli},
            {"memoryBytes", r.memory_bytes},
            {"simulated", r.simulated},
            {"devices", DevicesJson(r.devices)},
            {"agentVersion", r.agent_version},
            {"tasks", StatusesJson(r.tasks)}};
  if (!r.pool.empty()) j["pool"] = r.pool;  // absent: the server's default pool
  if (!r.extended.empty()) j["extended"] = r.extended;
  if (!r.credential.empty()) j["credential"] = r.credential;
  return j;
}

json ToJson(const RegisterAnswer& a) {
  return {{"node", a.node},
          {"nodeToken", a.node_token},
          {"heartbeatSeconds", a.heartbeat_seconds},
          {"nodeTimeoutSeconds", a.node_timeout_seconds}};
}

json ToJson(const HeartbeatRequest& r) {
  json devices = json::array();
  for (const auto& d : r.devices) {
    json dj = {{"index", d.index}, {"uuid", d.uuid}};
    if (d.health) dj["health"] = DeviceHealthName(*d.health);
    if (!d.health_reason.empty()) dj["healthReason"] = d.health_reason;
    if (d.utilization) dj["utilization"] = *d.utilization;
    if (d.memory_used_bytes) dj["memoryUsedBytes"] = *d.memory_used_bytes;
    devices.push_back(std::move(dj));
  }
  json usage = json::array();
  for (const auto& u : r.usage) {
    usage.push_back({{"taskId", u.task_id}, {"cpuSeconds", u.cpu_seconds}, {"memoryBytes", u.memory_bytes}});
  }
  json j = {{"node", r.node}, {"devices", std::move(devices)}, {"tasks", StatusesJson(r.tasks)},
            {"usage", std::move(usage)}};
  if (r.inventory) j["inventory"] = DevicesJson(*r.inventory);
  return j;
}

json ToJson(const StatusReport& r) {
  json j = {{"node", r.node}, {"tasks", StatusesJson(r.tasks)}};
  if (r.leaving) j["leaving"] = true;
  return j;
}

Result<TaskStatus> ParseTaskStatus(const json& j) {
  const std::string* id = j.is_object() ? StringAt(j, "taskId") : nullptr;
  if (id == nullptr) return InvalidArgument("tasks[]: each needs a string taskId");
  TaskStatus s;
  s.task_id = *id;
  const std::string* phase_name = StringAt(j, "phase");
  std::optional<TaskPhase> phase = phase_name != nullptr ? ParseTaskPhase(*phase_name) : std::nullopt;
  if (!phase) {
    return InvalidArgument("tasks[" + s.task_id + "].phase: expected Running, Stopping, Exited or Lost, got '" +
                           (phase_name != nullptr ? *phase_name : std::string()) + "'");
  }
  s.phase = *phase;
  try {
    // The fields every server read strictly: of the wrong type, the status is refused.
    if (j.contains("exitCode")) s.exit_code = j.at("exitCode").get<int>();
    s.signal = j.value("signal", 0);
    s.oom_killed = j.value("oomKilled", false);
    s.stopped = j.value("stopped", false);
    s.message = j.value("message", "");
  } catch (const json::exception& e) {
    return InvalidArgument("tasks[" + s.task_id + "]: " + e.what());
  }
  if (auto it = j.find("pid"); it != j.end() && it->is_number_integer()) s.pid = it->get<int>();
  s.started_at = TimeAt(j, "startedAt");
  s.finished_at = TimeAt(j, "finishedAt");
  if (const std::string* v = StringAt(j, "lostReason")) s.lost_reason = *v;
  if (auto it = j.find("warnings"); it != j.end() && it->is_array()) {
    for (const json& w : *it) {
      if (w.is_string()) s.warnings.push_back(w.get<std::string>());
    }
  }
  s.ready = BoolAt(j, "ready");
  s.live = BoolAt(j, "live");
  if (const std::string* v = StringAt(j, "probeMessage")) s.probe_message = *v;
  s.readiness_run = RunAt(j, "readinessRun");
  s.liveness_run = RunAt(j, "livenessRun");
  if (const std::string* v = StringAt(j, "results")) s.results = *v;
  if (const std::string* v = StringAt(j, "resultsError")) s.results_error = *v;
  if (const std::string* v = StringAt(j, "address")) s.address = *v;
  return s;
}

Result<StatusReport> ParseStatusReport(const json& j) {
  if (!j.is_object()) return InvalidArgument("expected a JSON object");
  StatusReport r;
  if (const std::string* node = StringAt(j, "node")) r.node = *node;
  ABACUS_ASSIGN_OR_RETURN(r.tasks, StatusesOf(j));
  if (auto it = j.find("leaving"); it != j.end()) {
    if (!it->is_boolean()) return InvalidArgument("leaving: expected true or false");
    r.leaving = it->get<bool>();
  }
  return r;
}

Result<HeartbeatRequest> ParseHeartbeatRequest(const json& j) {
  if (!j.is_object()) return InvalidArgument("expected a JSON object");
  HeartbeatRequest r;
  if (const std::string* node = StringAt(j, "node")) r.node = *node;
  if (auto it = j.find("devices"); it != j.end() && it->is_array()) {
    for (const json& d : *it) {
      if (!d.is_object()) continue;
      auto index = d.find("index");
      if (index == d.end() || !index->is_number_integer()) continue;
      DeviceBeat beat;
      beat.index = index->get<int>();
      if (const std::string* v = StringAt(d, "uuid")) beat.uuid = *v;
      beat.health.reset();
      if (const std::string* h = StringAt(d, "health")) {
        beat.health = *h == "Healthy" ? DeviceHealth::kHealthy : *h == "Unhealthy" ? DeviceHealth::kUnhealthy
                                                                                  : DeviceHealth::kUnknown;
      }
      if (const std::string* v = StringAt(d, "healthReason")) beat.health_reason = *v;
      if (auto u = d.find("utilization"); u != d.end() && u->is_number()) beat.utilization = u->get<double>();
      if (auto m = d.find("memoryUsedBytes"); m != d.end() && m->is_number_integer()) {
        beat.memory_used_bytes = m->get<int64_t>();
      }
      r.devices.push_back(std::move(beat));
    }
  }
  ABACUS_ASSIGN_OR_RETURN(r.tasks, StatusesOf(j));
  if (auto it = j.find("usage"); it != j.end() && it->is_array()) {
    for (const json& u : *it) {
      if (!u.is_object()) continue;
      TaskUsageBeat beat;
      if (const std::string* v = StringAt(u, "taskId")) beat.task_id = *v;
      if (auto c = u.find("cpuSeconds"); c != u.end() && c->is_number()) beat.cpu_seconds = c->get<double>();
      if (auto m = u.find("memoryBytes"); m != u.end() && m->is_number_integer()) beat.memory_bytes = m->get<int64_t>();
      r.usage.push_back(std::move(beat));
    }
  }
  return r;
}

Result<RegisterRequest> ParseRegisterRequest(const json& j) {
  if (!j.is_object()) return InvalidArgument("expected a JSON object");
  RegisterRequest r;
  if (auto it = j.find("credential"); it != j.end()) {
    if (!it->is_string()) return InvalidArgument("credential: expected the node credential (a string)");
    r.credential = it->get<std::string>();
  }
  if (const std::string* v = StringAt(j, "name")) r.name = *v;
  if (const std::string* v = StringAt(j, "agentVersion")) r.agent_version = *v;
  if (auto it = j.find("tasks"); it != j.end() && it->is_array()) {
    for (const json& t : *it) {
      if (!t.is_object()) continue;
      TaskStatus s;
      if (const std::string* v = StringAt(t, "taskId")) s.task_id = *v;
      const std::string* phase = StringAt(t, "phase");
      s.phase = phase != nullptr ? ParseTaskPhase(*phase).value_or(TaskPhase::kLost) : TaskPhase::kLost;
      if (const std::string* v = StringAt(t, "message")) s.message = *v;
      r.tasks.push_back(std::move(s));
    }
  }
  return r;
}

Result<RegisterAnswer> ParseRegisterAnswer(const json& j) {
  if (!j.is_object()) return InvalidArgument("register answer: expected a JSON object");
  try {
    RegisterAnswer a;
    a.node = j.value("node", "");
    a.node_token = j.value("nodeToken", "");
    a.heartbeat_seconds = j.value("heartbeatSeconds", 5);
    a.node_timeout_seconds = j.value("nodeTimeoutSeconds", 30);
    if (a.node_token.empty()) return InvalidArgument("register answer: no nodeToken");
    if (a.heartbeat_seconds <= 0) return InvalidArgument("register answer: heartbeatSeconds must be positive");
    return a;
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("register answer: ") + e.what());
  }
}

}  // namespace abacus::wire
