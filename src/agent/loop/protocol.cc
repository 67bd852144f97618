#include "agent/loop/protocol.h"

#include <openssl/evp.h>
#include <signal.h>
#include <string.h>

#include <cctype>
#include <charconv>

#include "common/base64.h"

namespace abacus::agent {

using nlohmann::json;

std::string_view ReportedPhaseName(ReportedPhase phase) {
  switch (phase) {
    case ReportedPhase::kRunning: return "Running";
    case ReportedPhase::kStopping: return "Stopping";
    case ReportedPhase::kExited: return "Exited";
    case ReportedPhase::kLost: return "Lost";
  }
  return "Lost";
}

TaskStatus StatusOf(const TaskRecord& record) {
  TaskStatus s;
  s.task_id = record.task_id;
  s.pid = record.pid;
  s.started_at = record.started_at;
  s.warnings = record.warnings;
  switch (record.phase) {
    case TaskPhase::kRunning: s.phase = ReportedPhase::kRunning; break;
    case TaskPhase::kStopping: s.phase = ReportedPhase::kStopping; break;
    case TaskPhase::kExited: s.phase = ReportedPhase::kExited; break;
  }
  if (record.exit) {
    const TaskExit& e = *record.exit;
    s.finished_at = record.finished_at;
    if (e.signal == 0) s.exit_code = e.exit_code;
    s.signal = e.signal;
    s.oom_killed = e.oom_killed;
    s.stopped = e.stopped;
    s.message = e.Describe();
  }
  return s;
}

Result<int> ParseSignal(std::string_view name) {
  if (name.empty()) return InvalidArgument("empty signal name");
  if (std::isdigit(static_cast<unsigned char>(name.front()))) {
    int n = 0;
    auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), n);
    if (ec == std::errc() && end == name.data() + name.size() && n > 0 && n < NSIG) return n;
    return InvalidArgument("unknown signal '" + std::string(name) + "'");
  }
  std::string_view bare = name.substr(0, 3) == "SIG" ? name.substr(3) : name;
  for (int sig = 1; sig < NSIG; ++sig) {
    const char* abbrev = ::sigabbrev_np(sig);
    if (abbrev != nullptr && bare == abbrev) return sig;
  }
  return InvalidArgument("unknown signal '" + std::string(name) + "'");
}

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

}  // namespace

json ToJson(const TaskStatus& s) {
  json j = {{"taskId", s.task_id}, {"phase", ReportedPhaseName(s.phase)}};
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

json ToJson(const HeartbeatRequest& r) {
  json devices = json::array();
  for (const auto& d : r.devices) {
    json dj = {{"index", d.index}, {"uuid", d.uuid}, {"health", DeviceHealthName(d.health)}};
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

json ToJson(const LogChunk& c) {
  // EVP_EncodeBlock writes 4 characters per 3 bytes and a NUL.
  std::string b64((c.data.size() + 2) / 3 * 4 + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(b64.data()),
                          reinterpret_cast<const unsigned char*>(c.data.data()), static_cast<int>(c.data.size()));
  b64.resize(static_cast<size_t>(n));
  return {{"node", c.node},
          {"taskId", c.task_id},
          {"stream", c.stream == LogStream::kStdout ? "stdout" : "stderr"},
          {"offset", c.offset},
          {"dataBase64", std::move(b64)}};
}

json StatusReportJson(const std::string& node, const std::vector<TaskStatus>& tasks) {
  return {{"node", node}, {"tasks", StatusesJson(tasks)}};
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

Result<ProbeSpec> ParseProbe(const json& j) {
  if (!j.is_object()) return InvalidArgument("expected a JSON object");
  try {
    ProbeSpec p;
    int kinds = 0;
    if (j.contains("http")) {
      ++kinds;
      p.kind = ProbeKind::kHttp;
      p.path = j.at("http").value("path", "/");
      p.port = j.at("http").value("port", 0);  // absent: ABACUS_PORT
    }
    if (j.contains("tcp")) {
      ++kinds;
      p.kind = ProbeKind::kTcp;
      p.port = j.at("tcp").value("port", 0);
    }
    if (j.contains("exec")) {
      ++kinds;
      p.kind = ProbeKind::kExec;
      p.command = j.at("exec").at("command").get<std::vector<std::string>>();
    }
    if (kinds != 1) return InvalidArgument("expected exactly one of http, tcp, exec");
    p.host = "127.0.0.1";
    p.initial_delay = std::chrono::seconds(j.value("initialDelaySeconds", 0));
    p.period = std::chrono::seconds(j.value("periodSeconds", 10));
    p.timeout = std::chrono::seconds(j.value("timeoutSeconds", 1));
    p.failure_threshold = j.value("failureThreshold", 3);
    p.success_threshold = j.value("successThreshold", 1);
    // Port 0 (absent in the spec): the task's ABACUS_PORT, which the agent fills in at start.
    ProbeSpec checked = p;
    if (checked.port == 0 && checked.kind != ProbeKind::kExec) checked.port = 1;
    ABACUS_RETURN_IF_ERROR(checked.Validate());
    return p;
  } catch (const json::exception& e) {
    return InvalidArgument(e.what());
  }
}

namespace {

// A probe that cannot be read does not fail the assignment (that would stop the node's
// reconciliation): it fails each of its attempts with the reason instead.
std::optional<AssignedProbe> ProbeOf(const json& t, const char* which) {
  if (!t.contains("probes") || !t.at("probes").is_object() || !t.at("probes").contains(which)) return std::nullopt;
  const json& p = t.at("probes").at(which);
  if (p.is_null()) return std::nullopt;
  auto spec = ParseProbe(p);
  if (!spec.ok()) return AssignedProbe{ProbeSpec{}, "unreadable probe: " + spec.status().message()};
  return AssignedProbe{*spec, ""};
}

Result<AssignedTask> ParseAssignedTask(const json& t) {
  AssignedTask a;
  a.task_id = t.at("taskId").get<std::string>();
  a.workload_id = t.value("workloadId", "");
  a.workload = t.value("workload", "");
  a.kind = t.value("kind", "");
  a.project = t.value("project", "");
  a.group = t.value("group", 0);
  a.replica = t.value("replica", 0);
  a.attempt = t.value("attempt", 0);
  std::string action = t.value("action", "run");
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
  for (const auto& m : t.value("mounts", nlohmann::json::array())) {
    if (!m.is_object()) continue;
    std::string path = m.value("path", "");
    std::string in = m.value("mountPath", "");
    a.mounts.push_back(Mount{path, in.empty() ? path : in, m.value("readOnly", true)});
  }
  a.network = t.value("network", "");
  a.read_only_root = t.value("readOnlyRoot", false);
  for (const auto& f : t.value("secretFiles", json::array())) {
    if (!f.is_object()) continue;
    std::optional<std::string> data = Base64Decode(f.value("data", ""));
    if (!data) return InvalidArgument("task " + a.task_id + ": secretFiles: data is not base64");
    a.secret_files.push_back(SecretFile{f.value("path", ""), std::move(*data)});
  }
  a.secret_error = t.value("secretError", "");
  for (const auto& n : t.value("secretEnv", json::array())) {
    if (n.is_string()) a.secret_env.insert(n.get<std::string>());
  }
  a.cpu_milli = t.value("cpuMilli", int64_t{0});
  a.memory_bytes = t.value("memoryBytes", int64_t{0});
  for (const auto& d : t.value("devices", json::array())) {
    AssignedDevice dev;
    dev.index = d.value("index", 0);
    dev.milli = d.value("milli", Device::kWholeMilli);
    dev.memory_bytes = d.value("memoryBytes", int64_t{0});
    dev.uuid = d.value("uuid", "");
    dev.vendor = d.value("vendor", "");
    a.devices.push_back(std::move(dev));
  }
  a.grace = std::chrono::seconds(t.value("graceSeconds", 30));
  auto sig = ParseSignal(t.value("stopSignal", "SIGTERM"));
  if (!sig.ok()) return sig.status().WithContext("task " + a.task_id);
  a.stop_signal = *sig;
  a.fencing_grace = t.contains("fencingGraceSeconds") ? Duration(std::chrono::seconds(t.value("fencingGraceSeconds", 30)))
                                                      : a.grace;
  auto fence_sig = ParseSignal(t.value("fencingSignal", std::string(t.value("stopSignal", "SIGTERM"))));
  if (!fence_sig.ok()) return fence_sig.status().WithContext("task " + a.task_id + ": fencingSignal");
  a.fencing_signal = *fence_sig;
  a.readiness = ProbeOf(t, "readiness");
  a.liveness = ProbeOf(t, "liveness");
  a.results_file = t.value("resultsFile", "");
  return a;
}

}  // namespace

Result<Assignment> ParseAssignment(const json& j) {
  if (!j.is_object()) return InvalidArgument("assignment: expected a JSON object");
  try {
    Assignment a;
    a.version = j.at("version").get<int64_t>();
    for (const auto& t : j.value("tasks", json::array())) {
      ABACUS_ASSIGN_OR_RETURN(AssignedTask task, ParseAssignedTask(t));
      a.tasks.push_back(std::move(task));
    }
    return a;
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("assignment: ") + e.what());
  }
}

Result<TaskStatus> ParseTaskStatus(const json& j) {
  try {
    TaskStatus s;
    s.task_id = j.at("taskId").get<std::string>();
    std::string phase = j.value("phase", "");
    if (phase == "Running") s.phase = ReportedPhase::kRunning;
    else if (phase == "Stopping") s.phase = ReportedPhase::kStopping;
    else if (phase == "Exited") s.phase = ReportedPhase::kExited;
    else if (phase == "Lost") s.phase = ReportedPhase::kLost;
    else return InvalidArgument("task status: unknown phase '" + phase + "'");
    s.pid = j.value("pid", 0);
    if (j.contains("exitCode")) s.exit_code = j.at("exitCode").get<int>();
    s.signal = j.value("signal", 0);
    s.oom_killed = j.value("oomKilled", false);
    s.stopped = j.value("stopped", false);
    s.message = j.value("message", "");
    s.lost_reason = j.value("lostReason", "");
    s.warnings = j.value("warnings", std::vector<std::string>{});
    if (j.contains("ready")) s.ready = j.at("ready").get<bool>();
    if (j.contains("live")) s.live = j.at("live").get<bool>();
    s.probe_message = j.value("probeMessage", "");
    for (auto [key, run] : {std::pair{"readinessRun", &s.readiness_run}, std::pair{"livenessRun", &s.liveness_run}}) {
      if (j.contains(key)) *run = ProbeRun{j.at(key).at("ok").get<bool>(), j.at(key).at("count").get<int32_t>()};
    }
    if (j.contains("results")) s.results = j.at("results").get<std::string>();
    s.results_error = j.value("resultsError", "");
    s.address = j.value("address", "");
    return s;
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("task status: ") + e.what());
  }
}

}  // namespace abacus::agent
