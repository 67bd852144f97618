// ControlPlane: node loss and fail-over, and device health (device_health.h), on the loop thread.
#include <openssl/evp.h>

#include <filesystem>
#include <fstream>
#include <memory>

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

using nlohmann::json;

// ---------------------------------------------------------------- node loss

void ControlPlane::FailOverNodeTasks(const std::string& node, const std::string& why, const std::string& lost_reason,
                                     const std::function<bool(const WorkloadRecord&, const PlacementRecord&)>& keep,
                                     std::optional<Time> last_known) {
  std::vector<TaskReport> lost;
  const Time now = clock_.Now();
  const Time ended = std::min(last_known.value_or(now), now);
  for (const auto& [id, r] : ledger_.workloads()) {
    if (r.waiting() || (IsTerminal(r.state) && r.placements.empty())) continue;
    for (const PlacementRecord& p : r.placements) {
      if (p.node != node || TaskEnded(p) || keep(r, p)) continue;
      TaskReport tr;
      tr.node = node;
      tr.task_id = TaskIdOf(r, p);
      tr.phase = wire::TaskPhase::kLost;
      tr.message = why;
      tr.lost_reason = lost_reason;
      tr.started_at = now;  // kept only for a task that never reported starting
      tr.finished_at = ended;
      lost.push_back(std::move(tr));
    }
  }
  if (!lost.empty()) {
    ABACUS_LOG_WARN("node {}: {} task(s) lost: {}", node, lost.size(), why);
    ProcessTaskReports(lost, nullptr, LoopWrite::kSettled);
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
  if (!steps_.liveness.Due(now)) return;
  commits_.SettleAll();  // what follows makes working copies of durable records
  SettleNodeHealth(now);
  std::vector<std::string> ready;
  for (const auto& [name, rec] : ledger_.nodes()) {
    if (rec.agent && rec.node.state == NodeState::kReady) ready.push_back(name);
  }
  const std::vector<std::string> silent = telemetry_.Silent(ready, now, options_.node_timeout);
  // Every silent node's commit starts at once (nodes lost together, a partition, share a
  // transaction), then the fail-over reads them as committed: one wait, not one per node.
  for (const auto& name : silent) {
    std::string why = "node " + name + " silent for more than " +
                      std::to_string(std::chrono::duration_cast<std::chrono::seconds>(options_.node_timeout).count()) + "s";
    MarkNotReady(*ledger_.FindNode(name), now, "NodeSilent", why, nullptr, [name, why](const Status& st) {
      if (!st.ok()) {
        ABACUS_LOG_ERROR("node {}: cannot mark NotReady: {}", name, st.ToString());
        return;
      }
      ABACUS_LOG_WARN("{}: NotReady; its tasks move once their fencing grace has passed", why);
    });
  }
  if (!silent.empty()) commits_.SettleAll();
  FailOverFencedTasks(now);
}

void ControlPlane::MarkNotReady(const NodeRecord& cur, Time now, const std::string& reason,
                                const std::string& message, PendingRequestAudit* audit, Written then) {
  NodeRecord next = cur;
  next.node.state = NodeState::kNotReady;
  next.not_ready_since = now;
  CommitNodeOnLoop(std::move(next), "NotReady",
                   {{"message", message}, {"notReadySinceUs", ToMicros(now)}, {"reason", reason}}, audit,
                   std::move(then));
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
  // Every recovery's commit starts at once, then all settle together (the liveness check that
  // follows copies node records): one wait, not one per node.
  bool started = false;
  for (const auto& name : due) {
    NodeRecord next = *ledger_.FindNode(name);
    const HealthOutcome outcome = SettleHealth(next, now, options_.health);
    if (!outcome.changed()) continue;
    json details = json::object();
    AddHealthDetails(next, outcome, details);
    auto committed = std::make_shared<NodeRecord>(next);
    CommitNodeOnLoop(std::move(next), outcome.uncordoned ? "Uncordoned" : "DevicesRecovered", details, nullptr,
                     [this, name, committed, outcome](const Status& st) {
                       if (!st.ok()) {
                         ABACUS_LOG_ERROR("node {}: cannot record its recovery: {}", name, st.ToString());
                         return;
                       }
                       NoteHealthOutcome(*committed, outcome);
                     });
    started = true;
  }
  if (started) commits_.SettleAll();
}

}  // namespace abacus::server
