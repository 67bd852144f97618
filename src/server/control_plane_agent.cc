// ControlPlane: the agent side of the API (docs/agent-protocol.md) and what task reports mean for
// workloads. Registration and node changes run on the loop thread; status reports are queued for
// it; long polls wait on the AssignmentBoard.
#include <openssl/evp.h>

#include <filesystem>
#include <fstream>

#include "common/log.h"
#include "common/mutex.h"
#include "govern/crypto.h"
#include "server/control_plane.h"
#include "server/desired_tasks.h"
#include "server/evaluation_archive.h"
#include "server/node_history.h"
#include "server/task_ids.h"
#include "server/task_logs.h"

namespace abacus::server {
namespace {

using nlohmann::json;


Time ParseTimeField(const json& j, const char* key, Time fallback) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return fallback;
  auto t = ParseTime(it->get<std::string>());
  return t.ok() ? *t : fallback;
}

// Decodes standard base64 (with padding); InvalidArgument when malformed.
Result<std::string> DecodeBase64(const std::string& in) {
  if (in.size() % 4 != 0) return InvalidArgument("dataBase64: length is not a multiple of 4");
  std::string out(in.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  if (n < 0) return InvalidArgument("dataBase64: not valid base64");
  size_t pad = 0;
  if (!in.empty() && in.back() == '=') ++pad;
  if (in.size() > 1 && in[in.size() - 2] == '=') ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

}  // namespace

void ControlPlane::TouchNode(const std::string& node) {
  MutexLock lock(seen_mu_);
  last_seen_[node] = clock_.Now();
}

std::map<std::string, std::map<int, double>> ControlPlane::DeviceUtilization() const {
  MutexLock lock(seen_mu_);
  return utilization_;
}

void ControlPlane::WakePollers() {
  board_->Shutdown();
  feed_->Shutdown();
}

void ControlPlane::Publish(const WorkloadRecord& r) { board_->Publish(r.id, DesiredTasks(r, ledger_, options_.fencing)); }

Status ControlPlane::CommitNode(NodeRecord node, const std::string& event, json details) {
  WriteBatch batch;
  json doc = ToJson(node);
  if (!node.credential_sha256.empty()) doc["credentialSha256"] = node.credential_sha256;
  batch.Put(kNodeKind, node.node.name, doc.dump());
  AddNodeState(node, details);  // capacity reports read the node's life back (node_history.h)
  batch.AppendEvent(kNodeKind, node.node.name, event, details.dump(), clock_.Now());
  CommitResult result;
  ABACUS_RETURN_IF_ERROR(Commit(batch, &result));
  node.version = result.assigned[0];
  WriterLock lock(state_mu_);
  ledger_.PutNode(std::move(node));
  dirty_ = true;
  full_ = true;
  return Status::OK();
}

// ---------------------------------------------------------------- registration

namespace {

// Devices of several vendors each count from 0 on the node (CUDA 0, Ascend 0); the ledger needs
// one index per device on the node, so those are renumbered in list order. Agents match
// assignments and heartbeats by UUID.
json WithNodeUniqueIndexes(json devices) {
  if (!devices.is_array()) return devices;
  std::set<int> seen;
  bool clash = false;
  for (const auto& d : devices) {
    if (d.is_object() && d.contains("index") && d["index"].is_number_integer()) {
      clash |= !seen.insert(d["index"].get<int>()).second;
    }
  }
  if (!clash) return devices;
  int i = 0;
  for (auto& d : devices) {
    if (d.is_object()) d["index"] = i++;
  }
  return devices;
}

}  // namespace

Result<json> ControlPlane::RegisterAgent(const json& request) {
  json body = request;
  // The node's own credential, when it registers again (never stored, never in the node record).
  std::string presented;
  if (body.is_object() && body.contains("credential")) {
    if (!body["credential"].is_string()) return InvalidArgument("credential: expected the node credential (a string)");
    presented = body["credential"].get<std::string>();
    body.erase("credential");
  }
  if (body.is_object() && body.contains("devices")) body["devices"] = WithNodeUniqueIndexes(body["devices"]);
  auto rec = NodeRecordFromJson(body);
  if (!rec.ok()) return rec.status();
  auto node = std::make_shared<NodeRecord>(std::move(*rec));
  node->agent = true;
  node->node.state = NodeState::kReady;
  node->agent_version = body.value("agentVersion", "");
  node->credential_sha256.clear();
  std::vector<TaskReport> reported;
  for (const auto& t : body.value("tasks", json::array())) {
    TaskReport tr;
    tr.node = node->node.name;
    tr.task_id = t.value("taskId", "");
    tr.phase = t.value("phase", "Lost");
    tr.message = t.value("message", tr.phase == "Lost" ? "agent restarted while the task ran" : "");
    reported.push_back(std::move(tr));
  }
  return RunOnLoop([this, node, reported, presented]() -> Result<json> {
    Time now = clock_.Now();
    const NodeRecord* before = ledger_.FindNode(node->node.name);
    // A registered agent node is taken over only by proving to be it: its credential. (The join
    // token alone would hand its assignments — commands, env, project — to any machine.)
    if (before != nullptr && before->agent && !before->credential_sha256.empty() &&
        (presented.empty() || !govern::ConstantTimeEqual(govern::Sha256Hex(presented), before->credential_sha256))) {
      return FailedPrecondition("node " + node->node.name + " is already registered by an agent" +
                                (presented.empty() ? "" : " and the credential sent is not its own") +
                                ": registering it again needs its node credential (a restarted agent sends the one "
                                "kept in its work folder); if the machine was replaced, an admin runs `abacus node "
                                "reset " + node->node.name + "` first");
    }
    std::string token = govern::RandomHex(32);  // 256 bits
    node->credential_sha256 = govern::Sha256Hex(token);
    node->node.last_heartbeat = now;
    std::string event = before == nullptr ? "Registered" : "Reregistered";
    node->cordon = before != nullptr ? before->cordon : NodeCordonRecord{};  // a cordon outlives re-registration
    if (before != nullptr) {
      // So does the health history: a device on probation stays out of service (device_health.h).
      node->health = before->health;
      for (Device& d : node->node.devices) {
        if (node->health.probation.count(d.index) != 0) d.health = DeviceHealth::kUnhealthy;
      }
    }
    ABACUS_RETURN_IF_ERROR(CommitNode(*node, event,
                                      {{"agent", true},
                                       {"agentVersion", node->agent_version},
                                       {"devices", node->node.devices.size()},
                                       {"simulated", node->simulated}}));
    if (tokens_ != nullptr) tokens_->SetNodeCredential(node->node.name, node->credential_sha256);
    TouchNode(node->node.name);
    // Tasks the agent reports, then: what the server thought ran there but the agent does not
    // run any more (it restarted) is lost; tasks on devices that are gone or unhealthy too.
    ProcessTaskReports(reported);
    std::set<std::string> running;
    for (const auto& r : reported) {
      if (r.phase == "Running" || r.phase == "Stopping") running.insert(r.task_id);
    }
    FailOverNodeTasks(node->node.name, "the agent restarted while the task ran", "AgentRestart", [&](const WorkloadRecord& r, const PlacementRecord& p) {
      // Not started yet: the agent will start it.
      return p.phase.empty() || running.count(TaskIdOf(r, p)) != 0;
    });
    FailOverTasksOnBadDevices(node->node.name);
    ABACUS_LOG_INFO("agent node {} {}: {} devices, {}m CPU", node->node.name, event, node->node.devices.size(),
                    node->node.cpu_milli);
    return json{{"node", node->node.name},
                {"nodeToken", token},
                {"heartbeatSeconds", std::chrono::duration_cast<std::chrono::seconds>(options_.heartbeat_interval).count()},
                {"nodeTimeoutSeconds", std::chrono::duration_cast<std::chrono::seconds>(options_.node_timeout).count()}};
  });
}

Result<json> ControlPlane::ResetNode(const std::string& name) {
  return RunOnLoop([this, name]() -> Result<json> {
    const NodeRecord* cur = ledger_.FindNode(name);
    if (cur == nullptr) return NotFound("node '" + name + "' not found");
    if (!cur->agent) return FailedPrecondition("node " + name + " is not run by an agent: it has no credential to reset");
    NodeRecord next = *cur;
    next.credential_sha256.clear();
    ABACUS_RETURN_IF_ERROR(CommitNode(next, "CredentialReset",
                                      {{"message", "credential revoked by an admin: the next registration of " + name +
                                                       " with the join token is accepted"}}));
    if (tokens_ != nullptr) tokens_->SetNodeCredential(name, "");
    ABACUS_LOG_WARN("node {}: credential reset by an admin; the next registration under its name is accepted", name);
    return json{{"node", name},
                {"reset", true},
                {"message", "node " + name + "'s credential is revoked; an agent may now register as " + name +
                                " with the join token"}};
  });
}

// ---------------------------------------------------------------- reports

namespace {

Result<std::vector<json>> TaskList(const json& body) {
  if (!body.is_object()) return InvalidArgument("expected a JSON object");
  auto it = body.find("tasks");
  if (it == body.end()) return std::vector<json>{};
  if (!it->is_array()) return InvalidArgument("tasks: expected an array");
  return std::vector<json>(it->begin(), it->end());
}

}  // namespace

Result<json> ControlPlane::AgentStatus(const std::string& node, const json& body) {
  TouchNode(node);
  ABACUS_ASSIGN_OR_RETURN(auto tasks, TaskList(body));
  std::vector<TaskReport> reports;
  json unknown = json::array();
  Time now = clock_.Now();
  for (const auto& t : tasks) {
    if (!t.is_object() || !t.contains("taskId") || !t["taskId"].is_string()) {
      return InvalidArgument("tasks[]: each needs a string taskId");
    }
    TaskReport r;
    r.node = node;
    r.task_id = t["taskId"].get<std::string>();
    r.phase = t.value("phase", "");
    if (r.phase != "Running" && r.phase != "Stopping" && r.phase != "Exited" && r.phase != "Lost") {
      return InvalidArgument("tasks[" + r.task_id + "].phase: expected Running, Stopping, Exited or Lost, got '" +
                             r.phase + "'");
    }
    auto ref = ParseTaskId(r.task_id);
    if (!ref.ok()) {
      unknown.push_back(r.task_id);
      continue;
    }
    r.exit_code = t.value("exitCode", 0);
    r.signal = t.value("signal", 0);
    r.oom_killed = t.value("oomKilled", false);
    r.stopped = t.value("stopped", false);
    r.message = t.value("message", "");
    // A task its agent fenced while cut off (server/fencing.h) is lost with its node.
    if (r.phase == "Lost" && t.value("lostReason", "") == "NodeLost") r.lost_reason = "NodeLost";
    if (t.contains("ready") && t["ready"].is_boolean()) r.ready = t["ready"].get<bool>();
    if (t.contains("live") && t["live"].is_boolean()) r.live = t["live"].get<bool>();
    // A probe's run of equal results as the agent counted them: {"ok": b, "count": n}.
    for (auto [key, run] : {std::pair{"readinessRun", &r.readiness_run}, std::pair{"livenessRun", &r.liveness_run}}) {
      const json* v = t.contains(key) ? &t[key] : nullptr;
      if (v == nullptr || !v->is_object() || !v->contains("ok") || !v->contains("count")) continue;
      if (!(*v)["ok"].is_boolean() || !(*v)["count"].is_number_integer()) continue;
      int32_t n = std::clamp<int32_t>((*v)["count"].get<int32_t>(), 0, 1000);
      *run = (*v)["ok"].get<bool>() ? n : -n;
    }
    r.started_at = ParseTimeField(t, "startedAt", now);
    r.finished_at = ParseTimeField(t, "finishedAt", now);
    if (t.contains("results") && t["results"].is_string()) r.results = t["results"].get<std::string>();
    if (t.contains("resultsError") && t["resultsError"].is_string()) {
      r.results_error = t["resultsError"].get<std::string>();
    }
    if (t.contains("address") && t["address"].is_string() && t["address"].get_ref<const std::string&>().size() <= 255) {
      r.address = t["address"].get<std::string>();
    }
    if (r.results && r.results->size() > kMaxResultsBytes) {
      r.results_error = "results are " + std::to_string(r.results->size()) + " bytes, more than the " +
                        std::to_string(kMaxResultsBytes) + " allowed";
      r.results.reset();
    }
    reports.push_back(std::move(r));
  }
  if (!reports.empty()) {
    {
      MutexLock lock(loop_mu_);
      for (auto& r : reports) reports_.push_back(std::move(r));
    }
    loop_cv_.notify_one();
  }
  return json{{"ok", true}, {"unknown", unknown}};
}

Result<json> ControlPlane::AgentHeartbeat(const std::string& node, const json& body) {
  TouchNode(node);
  {
    ReaderLock lock(state_mu_);
    const NodeRecord* n = ledger_.FindNode(node);
    if (n == nullptr || !n->agent) return NotFound("node '" + node + "' is not registered: register again");
  }
  // Device health and utilization.
  std::map<int32_t, DeviceHealthReport> health;
  std::map<std::string, int> index_of_uuid;
  {
    ReaderLock lock(state_mu_);
    if (const NodeRecord* n = ledger_.FindNode(node)) {
      for (const Device& d : n->node.devices) index_of_uuid[d.uuid] = d.index;
    }
  }
  {
    MutexLock lock(seen_mu_);
    auto& util = utilization_[node];
    for (const auto& d : body.value("devices", json::array())) {
      if (!d.is_object() || !d.contains("index")) continue;
      int index = d.value("index", -1);
      if (d.contains("uuid") && d["uuid"].is_string()) {
        if (auto it = index_of_uuid.find(d["uuid"].get<std::string>()); it != index_of_uuid.end()) index = it->second;
      }
      if (d.contains("utilization") && d["utilization"].is_number()) {
        util[index] = d["utilization"].get<double>();
        RecordUtilization(node, index, util[index], clock_.Now());
      }
      if (d.contains("health") && d["health"].is_string()) {
        const std::string h = d["health"].get<std::string>();
        DeviceHealthReport rep;
        rep.health = h == "Healthy" ? DeviceHealth::kHealthy : h == "Unhealthy" ? DeviceHealth::kUnhealthy : DeviceHealth::kUnknown;
        if (d.contains("healthReason") && d["healthReason"].is_string()) {
          rep.reason = d["healthReason"].get<std::string>().substr(0, 200);
        }
        health[index] = std::move(rep);
      }
    }
  }
  bool changed = false;
  std::optional<json> inventory;
  if (body.contains("inventory") && body["inventory"].is_array()) inventory = body["inventory"];
  {
    ReaderLock lock(state_mu_);
    const NodeRecord* n = ledger_.FindNode(node);
    changed = inventory.has_value() || n->node.state != NodeState::kReady;
    if (!changed) {
      NodeRecord probe = *n;  // the same rule, tried on a copy: most heartbeats change nothing
      changed = ApplyHealthReports(probe, health, clock_.Now(), options_.health).changed();
    }
  }
  if (changed) {
    auto result = RunOnLoop([this, node, health, inventory]() -> Result<json> {
      const NodeRecord* cur = ledger_.FindNode(node);
      if (cur == nullptr) return NotFound("node '" + node + "' is not registered");
      NodeRecord next = *cur;
      json details = json::object();
      if (inventory) {
        json doc = ToJson(next);
        doc["devices"] = WithNodeUniqueIndexes(*inventory);
        auto parsed = NodeRecordFromJson(doc);
        if (!parsed.ok()) return parsed.status().WithContext("inventory");
        next.node.devices = parsed->node.devices;
        details["inventory"] = next.node.devices.size();
      }
      const HealthOutcome outcome = ApplyHealthReports(next, health, clock_.Now(), options_.health);
      AddHealthDetails(next, outcome, details);
      bool back = next.node.state != NodeState::kReady;
      next.node.state = NodeState::kReady;
      next.not_ready_since = Time{};
      next.node.last_heartbeat = clock_.Now();
      if (back) details["state"] = "Ready";
      ABACUS_RETURN_IF_ERROR(CommitNode(next, outcome.cordoned ? "CordonedForHealth" : "DevicesChanged", details));
      NoteHealthOutcome(next, outcome);
      FailOverTasksOnBadDevices(node);
      return json::object();
    });
    if (!result.ok()) return result.status();
  }
  // Re-reported statuses are applied like status reports (unchanged ones cost a lookup).
  if (body.contains("tasks")) {
    auto st = AgentStatus(node, json{{"tasks", body["tasks"]}});
    if (!st.ok()) return st.status();
  }
  return json{{"ok", true}};
}

Result<AssignmentBoard::Answer> ControlPlane::WaitAssignments(const std::string& node, uint64_t after,
                                                               std::chrono::milliseconds timeout) {
  TouchNode(node);
  {
    ReaderLock lock(state_mu_);
    const NodeRecord* n = ledger_.FindNode(node);
    if (n == nullptr || !n->agent) return NotFound("node '" + node + "' is not registered: register again");
  }
  auto answer = board_->Wait(node, after, timeout);
  TouchNode(node);
  return answer;
}

// ---------------------------------------------------------------- logs

Result<json> ControlPlane::AgentLogs(const std::string& node, const json& body) {
  TouchNode(node);
  if (!body.is_object()) return InvalidArgument("expected a JSON object");
  std::string task_id = body.value("taskId", "");
  std::string stream = body.value("stream", "");
  if (stream != "stdout" && stream != "stderr") return InvalidArgument("stream: expected stdout or stderr");
  ABACUS_ASSIGN_OR_RETURN(TaskRef ref, ParseTaskId(task_id));
  if (!body.contains("offset") || !body["offset"].is_number_integer() || body["offset"].get<int64_t>() < 0) {
    return InvalidArgument("offset: expected a non-negative integer");
  }
  int64_t offset = body["offset"].get<int64_t>();
  ABACUS_ASSIGN_OR_RETURN(std::string data, DecodeBase64(body.value("dataBase64", "")));
  if (data.size() > (1u << 20)) return InvalidArgument("dataBase64: at most 1 MiB per call");
  {
    // Only a task assigned to this node, of the workload's current attempt, and a run of that
    // unit it ran (a unit's earlier runs on the same node may still ship their last output).
    ReaderLock lock(state_mu_);
    const WorkloadRecord* r = ledger_.FindWorkload(ref.workload_id);
    bool assigned = false;
    if (r != nullptr && ref.attempt == r->attempt()) {
      for (const auto& p : r->placements) {
        assigned |= p.group == ref.group && p.replica == ref.replica && p.node == node && ref.run <= p.run;
      }
    }
    if (!assigned) {
      return PermissionDenied("task " + task_id + " is not assigned to node " + node +
                              ": a node writes only the logs of the tasks it runs, for the attempt it runs");
    }
  }
  ABACUS_ASSIGN_OR_RETURN(std::filesystem::path file, TaskLogPath(options_.data_dir, ref, stream));
  const int64_t limit = options_.max_task_log_bytes;
  MutexLock lock(logs_mu_);
  std::error_code ec;
  std::filesystem::create_directories(file.parent_path(), ec);
  int64_t size = 0;
  if (std::filesystem::exists(file, ec)) size = static_cast<int64_t>(std::filesystem::file_size(file, ec));
  // Past the bound the output is taken and dropped, so that the agent moves on.
  if (limit > 0 && size >= limit) return json{{"ok", true}, {"size", size}, {"truncated", true}};
  if (offset > size) {
    return json{{"conflict", true},
                {"size", size},
                {"message", "offset " + std::to_string(offset) + " is past the stored size " + std::to_string(size) +
                                "; resend from " + std::to_string(size)}};
  }
  size_t skip = static_cast<size_t>(size - offset);
  bool truncated = false;
  if (skip < data.size()) {
    size_t n = data.size() - skip;
    if (limit > 0 && static_cast<int64_t>(n) > limit - size) {
      n = static_cast<size_t>(limit - size);
      truncated = true;
    }
    std::ofstream out(file, std::ios::binary | std::ios::app);
    out.write(data.data() + skip, static_cast<std::streamsize>(n));
    if (!out) return Unavailable("cannot write the log of task " + task_id);
    size += static_cast<int64_t>(n);
    feed_->Record("tasklog", task_id);  // wakes `abacus logs -f` (logs_api.cc) at the next publish
  }
  json answer = {{"ok", true}, {"size", size}};
  if (truncated) answer["truncated"] = true;
  return answer;
}

Result<json> ControlPlane::Logs(const std::string& id_or_name, const std::string& task, const std::string& stream,
                                int64_t tail_bytes) const {
  if (stream != "stdout" && stream != "stderr") return InvalidArgument("stream: expected stdout or stderr");
  auto rec = FindRecord(id_or_name);
  if (!rec) return NotFound("workload '" + id_or_name + "' not found");
  // The task is parsed as a task of this workload; the file name is built from its parts only.
  ABACUS_ASSIGN_OR_RETURN(LogTaskQuery query, ParseLogTaskQuery(task, rec->id));
  auto has_output = [&](const TaskRef& ref) {
    std::error_code ec;
    auto out = TaskLogPath(options_.data_dir, ref, "stdout");
    auto err = TaskLogPath(options_.data_dir, ref, "stderr");
    return (out.ok() && std::filesystem::exists(*out, ec)) || (err.ok() && std::filesystem::exists(*err, ec));
  };
  TaskRef ref;
  if (query.exact) {
    ref = *query.exact;
  } else {
    int32_t group = query.group, replica = query.replica;
    if (!query.has_unit && !rec->placements.empty()) {
      group = rec->placements[0].group;
      replica = rec->placements[0].replica;
    }
    // The current run when it left output, else the latest attempt that did.
    bool found = false;
    for (const auto& p : rec->placements) {
      if (p.group != group || p.replica != replica) continue;
      TaskRef current{rec->id, p.group, p.replica, rec->attempt(), p.run};
      if (has_output(current)) {
        ref = current;
        found = true;
      }
    }
    for (int32_t attempt = rec->attempt(); attempt >= 1 && !found; --attempt) {
      TaskRef earlier{rec->id, group, replica, attempt, 0};
      if (has_output(earlier)) {
        ref = earlier;
        found = true;
      }
    }
    if (!found) {
      return NotFound("no logs: no task of workload " + rec->id + " has written output yet (it is " +
                      std::string(WorkloadStateName(rec->state)) + ")");
    }
  }
  ABACUS_ASSIGN_OR_RETURN(std::filesystem::path file, TaskLogPath(options_.data_dir, ref, stream));
  std::string content;
  {
    MutexLock lock(logs_mu_);
    std::ifstream in(file, std::ios::binary);
    if (in) {
      in.seekg(0, std::ios::end);
      int64_t size = in.tellg();
      int64_t from = std::max<int64_t>(0, size - tail_bytes);
      in.seekg(from);
      content.resize(static_cast<size_t>(size - from));
      in.read(content.data(), static_cast<std::streamsize>(content.size()));
    }
  }
  return json{{"workload", rec->id}, {"taskId", FormatTaskId(ref)}, {"stream", stream}, {"content", content}};
}

// ---------------------------------------------------------------- what reports mean

namespace {

// The TaskEnded event of task `task_id` (placement `p` of `w`, just Exited or Lost): where and
// how it ran, so that every task that ran — each array task, each attempt — stays described
// (`abacus describe`) after its slot runs the next one.
json TaskEndedEvent(const WorkloadRecord& w, const PlacementRecord& p, const std::string& task_id) {
  json d = {{"task", task_id},  {"node", p.node},           {"attempt", w.attempt()},
            {"phase", p.phase}, {"exitCode", p.exit_code}};
  if (p.index >= 0) d["index"] = p.index;
  if (p.signal != 0) d["signal"] = p.signal;
  if (p.oom_killed) d["oomKilled"] = true;
  if (!p.lost_reason.empty()) d["lostReason"] = p.lost_reason;
  if (ToMicros(p.started_at) != 0) d["startedUs"] = ToMicros(p.started_at);
  if (ToMicros(p.finished_at) != 0) d["finishedUs"] = ToMicros(p.finished_at);
  std::string what = p.phase == "Lost" ? "lost (" + p.lost_reason + ")"
                     : p.oom_killed    ? "OOM-killed"
                     : p.signal != 0   ? "killed by signal " + std::to_string(p.signal)
                                       : "exited " + std::to_string(p.exit_code);
  return EventJson(w.state, "task " + task_id + (p.index >= 0 ? " (array task " + std::to_string(p.index) + ")" : "") +
                                " " + what + " on " + p.node,
                   std::move(d));
}

}  // namespace

void ControlPlane::ProcessTaskReports(const std::vector<TaskReport>& reports, const std::vector<std::string>* also) {
  if (reports.empty() && (also == nullptr || also->empty())) return;
  Time now = clock_.Now();
  std::map<std::string, WorkloadRecord> next;  // working copies, by id
  std::set<std::string> touched;               // those whose tasks changed
  std::map<std::string, std::vector<json>> ended;  // by workload id: a TaskEnded event per task that ended
  for (const TaskReport& rep : reports) {
    auto ref = ParseTaskId(rep.task_id);
    if (!ref.ok()) continue;
    auto it = next.find(ref->workload_id);
    if (it == next.end()) {
      const WorkloadRecord* cur = ledger_.FindWorkload(ref->workload_id);
      if (cur == nullptr || ref->attempt != cur->attempt()) continue;  // stale: an earlier attempt
      it = next.emplace(cur->id, *cur).first;
    }
    WorkloadRecord& w = it->second;
    for (PlacementRecord& p : w.placements) {
      if (p.group != ref->group || p.replica != ref->replica || p.run != ref->run || p.node != rep.node) continue;
      bool probes_changed = (rep.ready && rep.ready != p.ready) || (rep.live && rep.live != p.live) ||
                            (rep.readiness_run && *rep.readiness_run != p.readiness_run) ||
                            (rep.liveness_run && *rep.liveness_run != p.liveness_run);
      if (rep.ready) p.ready = rep.ready;
      if (rep.live) p.live = rep.live;
      if (rep.readiness_run) p.readiness_run = *rep.readiness_run;
      if (rep.liveness_run) p.liveness_run = *rep.liveness_run;
      if (!rep.address.empty() && rep.address != p.address && !TaskEnded(p)) {
        p.address = rep.address;
        probes_changed = true;  // stored with the report, like a probe change
      }
      if (TaskEnded(p) || p.phase == rep.phase) {
        if (probes_changed) touched.insert(w.id);
        break;
      }
      if (rep.phase == "Stopping" && p.phase.empty()) p.started_at = rep.started_at;
      p.phase = rep.phase;
      if (rep.phase == "Running") p.started_at = rep.started_at;
      if (rep.phase == "Exited" || rep.phase == "Lost") {
        if (ToMicros(p.started_at) == 0) p.started_at = rep.started_at;
        p.finished_at = rep.finished_at;
        p.exit_code = rep.exit_code;
        p.signal = rep.signal;
        p.oom_killed = rep.oom_killed;
        p.stopped = rep.stopped;
        p.message = rep.message;
        p.lost_reason = rep.phase == "Lost" ? (rep.lost_reason.empty() ? "AgentRestart" : rep.lost_reason) : "";
        p.results = rep.results;
        p.results_error = rep.results_error;
        ended[w.id].push_back(TaskEndedEvent(w, p, rep.task_id));
      }
      touched.insert(w.id);
      break;
    }
  }
  if (also != nullptr) {
    for (const auto& id : *also) {
      if (next.count(id) != 0) continue;
      if (const WorkloadRecord* cur = ledger_.FindWorkload(id)) next.emplace(id, *cur);
    }
  }
  // Decide (the kind's controller), then commit every changed workload with its events in one
  // batch.
  std::vector<std::string> changed;
  WriteBatch batch;
  std::vector<govern::AuditRecord> decisions;  // committed with the batch
  for (auto& [id, w] : next) {
    std::vector<std::pair<std::string, json>> events;
    bool decided = RunController(w, events, batch, decisions, now);
    if (touched.count(id) == 0 && !decided) continue;
    batch.PutJson(kWorkloadKind, w.id, ToJson(w), w.version);
    StageUsage(ledger_.FindWorkload(id), w, batch, now);
    for (const json& e : ended[id]) batch.AppendEventJson(kWorkloadKind, w.id, "TaskEnded", e, now);
    for (auto& [type, details] : events) batch.AppendEventJson(kWorkloadKind, w.id, type, details, now);
    changed.push_back(id);
  }
  if (changed.empty()) {
    staged_.Settle(false, metrics_.labeled);
    return;
  }
  CommitResult cr;
  Status st = Commit(batch, &cr, std::nullopt, std::move(decisions));
  staged_.Settle(st.ok(), metrics_.labeled);
  if (!st.ok()) {
    // The agents report again with their next heartbeat.
    ABACUS_LOG_ERROR("task reports not committed: {}", st.ToString());
    UsageCommitFailed();
    return;
  }
  size_t op = 0;
  bool freed = false;
  {
    WriterLock lock(state_mu_);
    for (const WriteOp& o : batch.ops()) {
      if (const PutOp* put = std::get_if<PutOp>(&o); put != nullptr && put->kind == kWorkloadKind) {
        WorkloadRecord& w = next.at(put->key);
        w.version = cr.assigned[op];
        WorkloadRecord* cur = ledger_.FindWorkload(w.id);
        bool held = cur->holds_quota();
        bool shrank = w.placements.size() < cur->placements.size();  // units removed (elastic_units.h)
        *cur = w;
        if ((held && !cur->holds_quota()) || shrank) freed = true;
        if (cur->state != WorkloadState::kPreempting) preempting_.erase(cur->id);
      }
      ++op;
    }
  }
  for (const auto& id : changed) Publish(*ledger_.FindWorkload(id));
  dirty_ = true;
  if (freed) freed_ = true;
}

// ---------------------------------------------------------------- node loss

void ControlPlane::FailOverNodeTasks(const std::string& node, const std::string& why, const std::string& lost_reason,
                                     const std::function<bool(const WorkloadRecord&, const PlacementRecord&)>& keep) {
  std::vector<TaskReport> lost;
  Time now = clock_.Now();
  for (const auto& [id, r] : ledger_.workloads()) {
    if (r.waiting() || (IsTerminal(r.state) && r.placements.empty())) continue;
    for (const PlacementRecord& p : r.placements) {
      if (p.node != node || TaskEnded(p) || keep(r, p)) continue;
      TaskReport tr;
      tr.node = node;
      tr.task_id = TaskIdOf(r, p);
      tr.phase = "Lost";
      tr.message = why;
      tr.lost_reason = lost_reason;
      tr.started_at = tr.finished_at = now;
      lost.push_back(std::move(tr));
    }
  }
  if (!lost.empty()) {
    ABACUS_LOG_WARN("node {}: {} task(s) lost: {}", node, lost.size(), why);
    ProcessTaskReports(lost);
  }
}

void ControlPlane::FailOverTasksOnBadDevices(const std::string& node) {
  const NodeRecord* n = ledger_.FindNode(node);
  if (n == nullptr) return;
  FailOverNodeTasks(node, "its device is gone or unhealthy", "DeviceError",
                    [&](const WorkloadRecord&, const PlacementRecord& p) {
                      for (const auto& g : p.devices) {
                        const Device* d = n->node.FindDevice(g.index);
                        if (d == nullptr || d->health != DeviceHealth::kHealthy) return false;
                      }
                      return true;
                    });
}

void ControlPlane::CheckNodeLiveness() {
  Time now = clock_.Now();
  if (now - last_liveness_check_ < std::chrono::seconds(1)) return;
  last_liveness_check_ = now;
  SettleNodeHealth(now);
  std::vector<std::string> silent;
  {
    MutexLock lock(seen_mu_);
    for (const auto& [name, rec] : ledger_.nodes()) {
      if (!rec.agent || rec.node.state != NodeState::kReady) continue;
      auto it = last_seen_.find(name);
      if (it == last_seen_.end()) {
        last_seen_[name] = now;  // first look since start: give it a full timeout
      } else if (now - it->second > options_.node_timeout) {
        silent.push_back(name);
      }
    }
  }
  for (const auto& name : silent) {
    NodeRecord next = *ledger_.FindNode(name);
    next.node.state = NodeState::kNotReady;
    next.not_ready_since = now;
    std::string why = "node " + name + " silent for more than " +
                      std::to_string(std::chrono::duration_cast<std::chrono::seconds>(options_.node_timeout).count()) + "s";
    Status st = CommitNode(next, "NotReady", {{"message", why}, {"notReadySinceUs", ToMicros(now)}});
    if (!st.ok()) {
      ABACUS_LOG_ERROR("node {}: cannot mark NotReady: {}", name, st.ToString());
      continue;
    }
    ABACUS_LOG_WARN("{}: NotReady; its tasks move once their fencing grace has passed", why);
  }
  FailOverFencedTasks(now);
}

void ControlPlane::FailOverFencedTasks(Time now) {
  // The agent of a NotReady node stops its tasks itself after node_timeout without a server,
  // within each task's fencing grace; only then may the work run elsewhere (server/fencing.h).
  std::vector<std::pair<std::string, Time>> fenced;
  for (const auto& [name, rec] : ledger_.nodes()) {
    if (rec.agent && rec.node.state == NodeState::kNotReady) fenced.emplace_back(name, rec.not_ready_since);
  }
  for (const auto& node : fenced) {
    const std::string& name = node.first;
    const Time since = node.second;
    std::string why = "node " + name + " silent for more than " +
                      std::to_string(std::chrono::duration_cast<std::chrono::seconds>(options_.node_timeout).count()) +
                      "s; its agent fenced the task";
    FailOverNodeTasks(name, why, "NodeLost", [&](const WorkloadRecord& r, const PlacementRecord&) {
      return now < since + options_.fencing.Grace(r);  // still inside the fencing grace: keep
    });
  }
}

// ---------------------------------------------------------------- device health (device_health.h)

void ControlPlane::AddHealthDetails(const NodeRecord& n, const HealthOutcome& outcome, json& details) const {
  json faults = json::array();
  for (const auto& f : outcome.faults) {
    faults.push_back({{"device", f.index}, {"reason", f.reason}});
    details["device" + std::to_string(f.index)] = "Unhealthy";
  }
  if (!faults.empty()) details["faults"] = std::move(faults);
  for (int32_t i : outcome.recovering) details["device" + std::to_string(i)] = "Recovering";
  for (int32_t i : outcome.recovered) details["device" + std::to_string(i)] = "Healthy";
  for (int32_t i : outcome.other) {
    if (const Device* d = n.node.FindDevice(i)) details["device" + std::to_string(i)] = DeviceHealthName(d->health);
  }
  if (!outcome.recovering.empty()) {
    details["cleanWindowSeconds"] = std::chrono::duration_cast<std::chrono::seconds>(options_.health.clean_window).count();
  }
  if (outcome.cordoned) {
    details["by"] = kHealthRule;
    details["reason"] = outcome.cordon_reason;
  }
  if (outcome.uncordoned) details["uncordonedBy"] = kHealthRule;
}

void ControlPlane::NoteHealthOutcome(const NodeRecord& n, const HealthOutcome& outcome) {
  const std::string& name = n.node.name;
  for (const auto& f : outcome.faults) {
    const Device* d = n.node.FindDevice(f.index);
    const std::string flavor = d != nullptr ? d->flavor.name() : "unknown";
    metrics_.labeled.CountDeviceFault(n.node.cluster, n.node.pool, flavor);
    ABACUS_LOG_WARN("node {}: device {} unhealthy: {}", name, f.index, f.reason);
    if (governance_) {
      governance_->AppendDecision(std::string("agent/") + name, "device-fault", "node", name, "", "Healthy",
                                  "device " + std::to_string(f.index) + " (" + flavor + "): " + f.reason);
    }
  }
  if (outcome.cordoned) {
    ABACUS_LOG_WARN("node {}: cordoned by {}: {}", name, kHealthRule, outcome.cordon_reason);
    if (governance_) governance_->AppendDecision(kHealthRule, "cordon", "node", name, "", "Ready", outcome.cordon_reason);
  }
  if (outcome.uncordoned && governance_) {
    governance_->AppendDecision(kHealthRule, "uncordon", "node", name, "", "Cordoned",
                                "no device fault for the clean window");
  }
}

void ControlPlane::SettleNodeHealth(Time now) {
  std::vector<std::string> due;
  for (const auto& [name, rec] : ledger_.nodes()) {
    Time t = NextHealthDeadline(rec, options_.health);
    if (ToMicros(t) != 0 && t <= now) due.push_back(name);
  }
  for (const auto& name : due) {
    NodeRecord next = *ledger_.FindNode(name);
    const HealthOutcome outcome = SettleHealth(next, now, options_.health);
    if (!outcome.changed()) continue;
    json details = json::object();
    AddHealthDetails(next, outcome, details);
    if (Status st = CommitNode(next, outcome.uncordoned ? "Uncordoned" : "DevicesRecovered", details); !st.ok()) {
      ABACUS_LOG_ERROR("node {}: cannot record its recovery: {}", name, st.ToString());
      continue;
    }
    NoteHealthOutcome(next, outcome);
  }
}

}  // namespace abacus::server
