#include "agent/loop/protocol.h"

#include <openssl/evp.h>
#include <signal.h>
#include <string.h>

#include <cctype>
#include <charconv>

#include "common/base64.h"
#include "wire/assignment.h"

namespace abacus::agent {

using nlohmann::json;

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
  return ToJson(wire::StatusReport{node, tasks});
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
std::optional<AssignedProbe> ProbeOf(const std::optional<json>& probes, const char* which) {
  if (!probes || !probes->is_object() || !probes->contains(which)) return std::nullopt;
  const json& p = probes->at(which);
  if (p.is_null()) return std::nullopt;
  auto spec = ParseProbe(p);
  if (!spec.ok()) return AssignedProbe{ProbeSpec{}, "unreadable probe: " + spec.status().message()};
  return AssignedProbe{*spec, ""};
}

// The agent's view of one task of the assignment (wire/assignment.h): signals as numbers, probes
// as specs, secret files decoded.
Result<AssignedTask> AssignedTaskOf(wire::TaskAssignment&& t) {
  AssignedTask a;
  a.task_id = std::move(t.task_id);
  a.workload_id = std::move(t.workload_id);
  a.workload = std::move(t.workload);
  a.kind = std::move(t.kind);
  a.project = std::move(t.project);
  a.group = t.group;
  a.replica = t.replica;
  a.attempt = t.attempt;
  a.action = t.action == wire::TaskAction::kStop ? TaskAction::kStop : TaskAction::kRun;
  a.command = std::move(t.command);
  a.env = std::move(t.env);
  a.image = std::move(t.image);
  for (const wire::MountSpec& m : t.mounts) {
    a.mounts.push_back(Mount{m.path, m.mount_path.empty() ? m.path : m.mount_path, m.read_only});
  }
  a.network = std::move(t.network);
  a.read_only_root = t.read_only_root;
  for (const wire::SecretFileData& f : t.secret_files) {
    std::optional<std::string> data = Base64Decode(f.data_base64);
    if (!data) return InvalidArgument("task " + a.task_id + ": secretFiles: data is not base64");
    a.secret_files.push_back(SecretFile{f.path, std::move(*data)});
  }
  a.secret_error = std::move(t.secret_error);
  a.secret_env = std::move(t.secret_env);
  a.cpu_milli = t.cpu_milli;
  a.memory_bytes = t.memory_bytes;
  for (const wire::GrantedDevice& d : t.devices) {
    AssignedDevice dev;
    dev.index = d.index;
    dev.milli = d.milli;
    dev.memory_bytes = d.memory_bytes;
    if (d.info) {
      dev.uuid = d.info->uuid;
      dev.vendor = d.info->vendor;
    }
    a.devices.push_back(std::move(dev));
  }
  a.grace = std::chrono::seconds(t.grace_seconds);
  auto sig = ParseSignal(t.stop_signal);
  if (!sig.ok()) return sig.status().WithContext("task " + a.task_id);
  a.stop_signal = *sig;
  a.fencing_grace = t.fencing_grace_seconds ? Duration(std::chrono::seconds(*t.fencing_grace_seconds)) : a.grace;
  auto fence_sig = ParseSignal(t.fencing_signal.value_or(t.stop_signal));
  if (!fence_sig.ok()) return fence_sig.status().WithContext("task " + a.task_id + ": fencingSignal");
  a.fencing_signal = *fence_sig;
  a.readiness = ProbeOf(t.probes, "readiness");
  a.liveness = ProbeOf(t.probes, "liveness");
  a.results_file = std::move(t.results_file);
  return a;
}

}  // namespace

Result<Assignment> ParseAssignment(const json& j) {
  ABACUS_ASSIGN_OR_RETURN(wire::Assignment sent, wire::ParseAssignment(j));
  Assignment a;
  a.version = sent.version;
  for (wire::TaskAssignment& t : sent.tasks) {
    ABACUS_ASSIGN_OR_RETURN(AssignedTask task, AssignedTaskOf(std::move(t)));
    a.tasks.push_back(std::move(task));
  }
  return a;
}

}  // namespace abacus::agent
