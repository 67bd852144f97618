// ControlPlane: the agent side of the API (docs/agent-protocol.md): registration, status reports,
// heartbeats and the long poll. Registration and node changes run on the loop thread; status
// reports are queued for it; long polls wait on the AssignmentBoard.
#include <openssl/evp.h>

#include <filesystem>
#include <fstream>

#include "common/log.h"
#include "common/mutex.h"
#include "govern/crypto.h"
#include "server/control_plane.h"
#include "server/control_plane_commands.h"
#include "server/desired_tasks.h"
#include "server/evaluation_archive.h"
#include "server/node_history.h"
#include "server/task_ids.h"
#include "server/task_logs.h"
#include "wire/agent_protocol.h"

namespace abacus::server {

using nlohmann::json;

void ControlPlane::TouchNode(const std::string& node) { telemetry_.Heard(node, clock_.Now()); }

void ControlPlane::WakePollers() {
  board_->Shutdown();
  feed_->Shutdown();
}

void ControlPlane::Publish(const WorkloadRecord& r) { board_->Publish(r.id, DesiredTasks(r, ledger_, options_.fencing)); }

void ControlPlane::CommitNodeOnLoop(NodeRecord node, const std::string& event, json details, PendingRequestAudit* audit,
                                    Written then) {
  WriteBatch batch;
  json doc = ToJson(node);
  if (!node.credential_sha256.empty()) doc["credentialSha256"] = node.credential_sha256;
  const OpRef put = batch.Put(kNodeKind, node.node.name, doc.dump()).LastOp();
  AddNodeState(node, details);  // capacity reports read the node's life back (node_history.h)
  batch.AppendEvent(kNodeKind, node.node.name, event, details.dump(), clock_.Now());
  auto record = std::make_shared<NodeRecord>(std::move(node));
  CommitForRequestOnLoop(audit, std::move(batch), {},
                         [this, put, record, then = std::move(then)](const Committer::Async& done) {
                           if (done.status.ok()) {
                             record->version = done.result.AssignedTo(put);
                             {
                               WriterLock lock(state_mu_);
                               ledger_.PutNode(std::move(*record));
                             }
                             pacer_.Changed();
                             pacer_.RetryAll();
                           }
                           then(done.status);
                         });
}

Status ControlPlane::CommitNode(NodeRecord node, const std::string& event, json details, PendingRequestAudit* audit) {
  return WriteNow([&](Written then) {
    CommitNodeOnLoop(std::move(node), event, std::move(details), audit, std::move(then));
  });
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

Result<wire::RegisterAnswer> ControlPlane::RegisterAgent(const json& request, RequestContext* context) {
  // The registration's own fields (wire/agent_protocol.h); the node's description is read by the
  // node record codec, without the credential (never stored, never in the node record).
  // Named before anything is checked: a refused registration's entry names the node too.
  if (request.is_object() && request.contains("name") && request["name"].is_string()) {
    NoteRequestObject(context, "node", request["name"].get<std::string>(), "");
  }
  json body = request;
  wire::RegisterRequest registration;
  if (body.is_object()) {
    ABACUS_ASSIGN_OR_RETURN(registration, wire::ParseRegisterRequest(body));
    body.erase("credential");
    if (body.contains("devices")) body["devices"] = WithNodeUniqueIndexes(body["devices"]);
  }
  const std::string presented = registration.credential;
  auto rec = NodeRecordFromJson(body);
  if (!rec.ok()) return rec.status();
  auto node = std::make_shared<NodeRecord>(std::move(*rec));
  node->agent = true;
  node->node.state = NodeState::kReady;
  node->agent_version = registration.agent_version;
  node->credential_sha256.clear();
  std::vector<TaskReport> reported;
  for (const wire::TaskStatus& t : registration.tasks) {
    TaskReport tr;
    tr.node = node->node.name;
    tr.task_id = t.task_id;
    tr.phase = t.phase;
    if (t.started_at) tr.started_at = *t.started_at;
    tr.finished_at = t.finished_at.value_or(Time{});  // none: see ReconcileRegisteredTasks
    tr.message = t.message.empty() && t.phase == wire::TaskPhase::kLost ? "agent restarted while the task ran" : t.message;
    reported.push_back(std::move(tr));
  }
  using Answer = Result<wire::RegisterAnswer>;
  return AnswerOnLoop<Answer>(context, [this, node, reported, presented](const LoopReply<Answer>& reply) {
    SettleRecord(kNodeKind, node->node.name);  // the node as committed
    Time now = clock_.Now();
    const NodeRecord* before = ledger_.FindNode(node->node.name);
    // A registered agent node is taken over only by proving to be it: its credential. (The join
    // token alone would hand its assignments — commands, env, project — to any machine.)
    if (before != nullptr && before->agent && !before->credential_sha256.empty() &&
        (presented.empty() || !govern::ConstantTimeEqual(govern::Sha256Hex(presented), before->credential_sha256))) {
      return reply(FailedPrecondition("node " + node->node.name + " is already registered by an agent" +
                                      (presented.empty() ? "" : " and the credential sent is not its own") +
                                      ": registering it again needs its node credential (a restarted agent sends the "
                                      "one kept in its work folder); if the machine was replaced, an admin runs "
                                      "`abacus node reset " + node->node.name + "` first"));
    }
    std::string token = govern::RandomHex(32);  // 256 bits
    node->credential_sha256 = govern::Sha256Hex(token);
    node->node.last_heartbeat = now;
    std::string event = before == nullptr ? "Registered" : "Reregistered";
    // The previous agent's last call: the tasks it no longer runs died with it, not at this
    // registration (an agent killed and started again an hour later bills no hour). Known only
    // when this server heard it (or, from its first liveness check on, counts it heard at its
    // start); a registration before that — server and agent both restarted — ends them now, as
    // the stored heartbeat may be hours old and would bill a long run as nothing.
    Time last_heard = now;
    if (std::optional<Time> heard = before != nullptr ? telemetry_.HeardAt(node->node.name) : std::nullopt) {
      last_heard = std::min(now, std::max(*heard, before->node.last_heartbeat));
    }
    node->cordon = before != nullptr ? before->cordon : NodeCordonRecord{};  // a cordon outlives re-registration
    if (before != nullptr) {
      // So does the health history: a device on probation stays out of service (device_health.h).
      node->health = before->health;
      for (Device& d : node->node.devices) {
        if (node->health.probation.count(d.index) != 0) d.health = DeviceHealth::kUnhealthy;
      }
    }
    const wire::RegisterAnswer answer{
        node->node.name, token,
        static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(options_.heartbeat_interval).count()),
        static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(options_.node_timeout).count())};
    // The node's commit starts and the loop goes on (agents registering together reach the disk
    // together); once it is durable the credential is accepted, and the tasks are reconciled.
    CommitNodeOnLoop(*node, event,
                     {{"agent", true},
                      {"agentVersion", node->agent_version},
                      {"devices", node->node.devices.size()},
                      {"simulated", node->simulated}},
                     reply.audit(), [this, node, reported, event, answer, reply, last_heard](const Status& st) {
                       if (!st.ok()) return reply(st);
                       if (tokens_ != nullptr) tokens_->SetNodeCredential(node->node.name, node->credential_sha256);
                       TouchNode(node->node.name);
                       ABACUS_LOG_INFO("agent node {} {}: {} devices, {}m CPU", node->node.name, event,
                                       node->node.devices.size(), node->node.cpu_milli);
                       // The tasks read what is durable: a command of their own, and the agent is
                       // answered after it (at a stop, at once: the node is registered, its
                       // credential must reach the agent, its next reports reconcile the tasks).
                       AnswerAfterCommand<Answer>(inbox_, reply, answer,
                                                  [this, name = node->node.name, reported, last_heard] {
                         ReconcileRegisteredTasks(name, reported, last_heard);
                       });
                     });
  });
}

void ControlPlane::ReconcileRegisteredTasks(const std::string& node, std::vector<TaskReport> reported,
                                            Time last_heard) {
  commits_.SettleAll();  // the fail-overs below read every workload on the node
  for (TaskReport& r : reported) {
    // A task the new agent found dead (its pid gone) ended at the latest with the old agent.
    if (r.phase == wire::TaskPhase::kLost && ToMicros(r.finished_at) == 0) r.finished_at = last_heard;
  }
  // Tasks the agent reports, then: what the server thought ran there but the agent does not run
  // any more (it restarted) is lost; tasks on devices that are gone or unhealthy too.
  ProcessTaskReports(reported, nullptr, LoopWrite::kSettled);
  std::set<std::string> running;
  for (const auto& r : reported) {
    if (!wire::IsFinal(r.phase)) running.insert(r.task_id);
  }
  FailOverNodeTasks(node, "the agent restarted while the task ran", "AgentRestart",
                    [&](const WorkloadRecord& r, const PlacementRecord& p) {
                      // Not started yet: the agent will start it.
                      return p.phase.empty() || running.count(TaskIdOf(r, p)) != 0;
                    },
                    last_heard);
  FailOverTasksOnBadDevices(node);
}

Result<NodeResetAnswer> ControlPlane::ResetNode(const std::string& name, RequestContext* context) {
  ABACUS_RETURN_IF_ERROR(AnswerOnLoop<Status>(context, [this, name](const LoopReply<Status>& reply) {
    SettleRecord(kNodeKind, name);  // the node as committed
    const NodeRecord* cur = ledger_.FindNode(name);
    if (cur == nullptr) return reply(NotFound("node '" + name + "' not found"));
    if (!cur->agent) {
      return reply(FailedPrecondition("node " + name + " is not run by an agent: it has no credential to reset"));
    }
    NodeRecord next = *cur;
    next.credential_sha256.clear();
    CommitNodeOnLoop(std::move(next), "CredentialReset",
                     {{"message", "credential revoked by an admin: the next registration of " + name +
                                      " with the join token is accepted"}},
                     reply.audit(), [this, name, reply](const Status& st) {
                       if (st.ok()) {
                         if (tokens_ != nullptr) tokens_->SetNodeCredential(name, "");
                         governance_->CredentialsChanged();  // its long poll answers 401 now
                         ABACUS_LOG_WARN("node {}: credential reset by an admin; the next registration under its "
                                         "name is accepted", name);
                       }
                       reply(st);
                     });
  }));
  return NodeResetAnswer{name, "node " + name + "'s credential is revoked; an agent may now register as " + name +
                                   " with the join token"};
}

// ---------------------------------------------------------------- reports

AgentStatusAnswer ControlPlane::QueueTaskStatuses(const std::string& node, const std::vector<wire::TaskStatus>& tasks) {
  std::vector<TaskReport> reports;
  AgentStatusAnswer answer;
  Time now = clock_.Now();
  for (const wire::TaskStatus& t : tasks) {
    if (!ParseTaskId(t.task_id).ok()) {
      answer.unknown.push_back(t.task_id);
      continue;
    }
    TaskReport r;
    r.node = node;
    r.task_id = t.task_id;
    r.phase = t.phase;
    r.exit_code = t.exit_code.value_or(0);
    r.signal = t.signal;
    r.oom_killed = t.oom_killed;
    r.stopped = t.stopped;
    r.message = t.message;
    // A task its agent fenced while cut off (server/fencing.h) is lost with its node.
    if (t.phase == wire::TaskPhase::kLost && t.lost_reason == "NodeLost") r.lost_reason = "NodeLost";
    r.ready = t.ready;
    r.live = t.live;
    // A probe's run of equal results as the agent counted them, in PlacementRecord's encoding.
    for (auto [sent, run] : {std::pair{&t.readiness_run, &r.readiness_run}, std::pair{&t.liveness_run, &r.liveness_run}}) {
      if (!*sent) continue;
      int32_t n = std::clamp<int32_t>((*sent)->count, 0, 1000);
      *run = (*sent)->ok ? n : -n;
    }
    r.started_at = t.started_at.value_or(now);
    r.finished_at = t.finished_at.value_or(now);
    r.results = t.results;
    r.results_error = t.results_error;
    if (t.address.size() <= 255) r.address = t.address;
    if (r.results && r.results->size() > kMaxResultsBytes) {
      r.results_error = "results are " + std::to_string(r.results->size()) + " bytes, more than the " +
                        std::to_string(kMaxResultsBytes) + " allowed";
      r.results.reset();
    }
    reports.push_back(std::move(r));
  }
  inbox_.Report(std::move(reports));
  return answer;
}

Result<AgentStatusAnswer> ControlPlane::AgentStatus(const std::string& node, const json& body) {
  TouchNode(node);
  ABACUS_ASSIGN_OR_RETURN(wire::StatusReport report, wire::ParseStatusReport(body));
  if (report.leaving) {
    // The agent shuts down: the node leaves placement (NotReady until its agent registers
    // again), committed before the reports of the tasks it stops are read, so none is placed
    // back on it. Answered once committed: the agent stops its tasks after the answer.
    ABACUS_RETURN_IF_ERROR(AnswerOnLoop<Status>(nullptr, [this, node](const LoopReply<Status>& reply) {
      SettleRecord(kNodeKind, node);  // the node as committed
      const NodeRecord* cur = ledger_.FindNode(node);
      if (cur == nullptr || !cur->agent) return reply(NotFound("node '" + node + "' is not registered"));
      if (cur->node.state != NodeState::kReady) return reply(Status::OK());
      MarkNotReady(*cur, clock_.Now(), "AgentShutdown",
                   "the agent of " + node + " is shutting down: no new work is placed here until it registers again",
                   reply.audit(), [node, reply](const Status& st) {
                     if (st.ok()) ABACUS_LOG_INFO("node {}: its agent is shutting down: NotReady", node);
                     reply(st);
                   });
    }));
  }
  return QueueTaskStatuses(node, report.tasks);
}

Status ControlPlane::AgentHeartbeat(const std::string& node, const json& body) {
  TouchNode(node);
  {
    ReaderLock lock(state_mu_);
    const NodeRecord* n = ledger_.FindNode(node);
    if (n == nullptr || !n->agent) return NotFound("node '" + node + "' is not registered: register again");
  }
  ABACUS_ASSIGN_OR_RETURN(wire::HeartbeatRequest beat, wire::ParseHeartbeatRequest(body));
  // Device health and utilization.
  std::map<int32_t, DeviceHealthReport> health;
  std::map<std::string, int> index_of_uuid;
  {
    ReaderLock lock(state_mu_);
    if (const NodeRecord* n = ledger_.FindNode(node)) {
      for (const Device& d : n->node.devices) index_of_uuid[d.uuid] = d.index;
    }
  }
  for (const wire::DeviceBeat& d : beat.devices) {
    int index = d.index;
    if (auto it = index_of_uuid.find(d.uuid); it != index_of_uuid.end()) index = it->second;
    if (d.utilization) telemetry_.ReportUtilization(node, index, *d.utilization, clock_.Now());
    if (d.health) health[index] = DeviceHealthReport{*d.health, d.health_reason.substr(0, 200)};
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
    // The node's commit starts on the loop and the loop goes on (nodes coming back together share
    // a transaction); once it is durable, the tasks on bad devices fail over in a command of their
    // own (they read what is durable, which a continuation may not wait for), then the agent is
    // answered.
    ABACUS_RETURN_IF_ERROR(AnswerOnLoop<Status>(nullptr, [this, node, health, inventory](const LoopReply<Status>& reply) {
      SettleRecord(kNodeKind, node);  // the node as committed
      const NodeRecord* cur = ledger_.FindNode(node);
      if (cur == nullptr) return reply(NotFound("node '" + node + "' is not registered"));
      NodeRecord next = *cur;
      json details = json::object();
      if (inventory) {
        json doc = ToJson(next);
        doc["devices"] = WithNodeUniqueIndexes(*inventory);
        auto parsed = NodeRecordFromJson(doc);
        if (!parsed.ok()) return reply(parsed.status().WithContext("inventory"));
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
      auto committed = std::make_shared<NodeRecord>(next);
      CommitNodeOnLoop(std::move(next), outcome.cordoned ? "CordonedForHealth" : "DevicesChanged", details, nullptr,
                       [this, node, committed, outcome, reply](const Status& st) {
                         if (!st.ok()) return reply(st);
                         NoteHealthOutcome(*committed, outcome);
                         AnswerAfterCommand<Status>(inbox_, reply, Status::OK(), [this, node] {
                           commits_.SettleAll();  // the fail-over reads every workload on the node
                           FailOverTasksOnBadDevices(node);
                         });
                       });
    }));
  }
  // Re-reported statuses are applied like status reports (unchanged ones cost a lookup).
  if (!beat.tasks.empty()) QueueTaskStatuses(node, beat.tasks);
  return Status::OK();
}

Result<AssignmentBoard::Answer> ControlPlane::WaitAssignments(const std::string& node, uint64_t after,
                                                               std::chrono::milliseconds timeout) {
  TouchNode(node);
  {
    ReaderLock lock(state_mu_);
    const NodeRecord* n = ledger_.FindNode(node);
    if (n == nullptr || !n->agent) return NotFound("node '" + node + "' is not registered: register again");
  }
  // Heard when the poll arrived, not when it is answered: an agent frozen while its poll waited
  // would otherwise look alive for the poll's whole wait (the probe of 2026-12-07: NotReady 23 s
  // late, its fenced task billed until then). Its heartbeats keep it alive meanwhile.
  return board_->Wait(node, after, timeout);
}

}  // namespace abacus::server
