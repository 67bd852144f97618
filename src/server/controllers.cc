// ControlPlane: the per-kind controllers (src/control/) applied to the ledger. After task reports
// and on a one-second tick, each workload with tasks on agent nodes is reconciled: its view
// (record + task phases) and stored controller state go in, decisions come out and are applied
// to the record in the same write batch as its events (docs/controllers.md §2).
#include "common/log.h"
#include "control/controller.h"
#include "server/control_plane.h"
#include "server/desired_tasks.h"
#include "server/governance.h"
#include "server/task_ids.h"

namespace abacus::server {
namespace {

using nlohmann::json;

control::TaskPhase PhaseOf(const std::string& phase) {
  auto p = control::ParseTaskPhase(phase);
  return p.ok() ? *p : control::TaskPhase::kPending;
}


// ---- the simple rules kept for BatchJob arrays and InferenceService replicas until the server
// applies StartTask, RestartReplica and ScaleTo (docs/controllers.md §3).

bool TaskFailed(const PlacementRecord& p) {
  return p.phase == "Exited" && !p.stopped && (p.exit_code != 0 || p.signal != 0 || p.oom_killed);
}

// The retries a kind allows after failed attempts.
int32_t AllowedRetries(const Workload& w) {
  if (const TrainingSpec* t = w.training()) return t->restart_policy.max_retries;
  if (const BatchSpec* b = w.batch()) return b->restart_policy.max_retries;
  return 0;
}

std::string FailureReason(const PlacementRecord& p) {
  if (p.oom_killed) return "OOMKilled";
  if (p.signal != 0) return "Signal";
  return "ExitCode";
}

}  // namespace

bool ControlPlane::HasAgentTasks(const WorkloadRecord& r) const {
  for (const auto& p : r.placements) {
    const NodeRecord* n = ledger_.FindNode(p.node);
    if (n != nullptr && n->agent) return true;
  }
  return false;
}

control::WorkloadView ControlPlane::ViewOf(const WorkloadRecord& r) const {
  control::WorkloadView v;
  v.id = r.id;
  v.spec = &r.spec;
  v.state = r.state;
  v.submitted = r.submitted;
  v.admitted_at = r.admitted_at;
  v.started_at = r.started_at;
  v.preempted_at = r.preempted_at;
  v.attempt = r.attempt();
  v.failures = r.failures;
  v.infra_requeues = r.infra_requeues;
  v.prior_runtime = Duration(r.prior_runtime_us);
  v.not_before = r.not_before;
  for (const auto& p : r.placements) {
    control::TaskView t;
    t.group = p.group;
    t.replica = p.replica;
    t.index = TaskIndex(r, p);
    t.node = p.node;
    t.phase = PhaseOf(p.phase);
    t.exit_code = p.exit_code;
    t.signal = p.signal;
    t.oom_killed = p.oom_killed;
    t.stopped = p.stopped;
    t.stop_requested = p.stop_requested;
    t.message = p.message;
    t.started_at = p.started_at;
    t.finished_at = p.finished_at;
    if (auto lr = control::ParseLostReason(p.lost_reason); lr.ok()) t.lost_reason = *lr;
    v.tasks.push_back(std::move(t));
  }
  return v;
}

control::Signals ControlPlane::SignalsFor(const WorkloadRecord& r, Time now) const {
  control::Signals s;
  if (r.spec.kind() == WorkloadKind::kExperiment) {
    // The last hour of the utilization samples of the devices it holds.
    std::lock_guard lock(seen_mu_);
    for (const auto& p : r.placements) {
      auto node = samples_.find(p.node);
      if (node == samples_.end()) continue;
      for (const auto& g : p.devices) {
        auto dev = node->second.find(g.index);
        if (dev == node->second.end()) continue;
        for (const auto& [t, ratio] : dev->second) {
          if (t >= now - std::chrono::hours(1)) s.utilization.push_back({p.node, g.index, ratio * 100.0, t});
        }
      }
    }
  }
  if (r.spec.kind() == WorkloadKind::kInferenceService) {
    for (const auto& p : r.placements) {
      if (p.ready) {
        s.probes.push_back({{p.group, p.replica}, control::ProbeResult::Kind::kReadiness, *p.ready, now});
      }
      if (p.live) s.probes.push_back({{p.group, p.replica}, control::ProbeResult::Kind::kLiveness, *p.live, now});
    }
    std::lock_guard lock(seen_mu_);
    if (auto it = metrics_by_workload_.find(r.id); it != metrics_by_workload_.end()) {
      s.metrics.assign(it->second.begin(), it->second.end());
    }
  }
  return s;
}

bool ControlPlane::RunController(WorkloadRecord& w, std::vector<std::pair<std::string, json>>& events,
                                 WriteBatch& batch, Time now) {
  if (!HasAgentTasks(w)) return false;  // simulated nodes: nothing runs, nothing to decide
  if (w.spec.kind() == WorkloadKind::kBatchJob || w.spec.kind() == WorkloadKind::kInferenceService) {
    return DecideFromTasks(w, events, now);
  }
  auto outcome = control::Reconcile(ViewOf(w), w.controller_state, SignalsFor(w, now), now);
  if (!outcome.ok()) {
    ABACUS_LOG_WARN("controller of {}: {}", w.id, outcome.status().ToString());
    return false;
  }
  bool changed = outcome->state != w.controller_state;
  w.controller_state = outcome->state;
  for (const control::Decision& d : outcome->decisions) changed |= ApplyDecision(w, d, events, batch, now);
  return changed;
}

bool ControlPlane::ApplyDecision(WorkloadRecord& w, const control::Decision& d,
                                 std::vector<std::pair<std::string, json>>& events, WriteBatch& batch, Time now) {
  return std::visit(
      [&](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, control::SetState>) {
          if (x.to == w.state) return false;
          if (!Transition(w.state, x.to).ok()) {
            ABACUS_LOG_WARN("controller of {}: illegal {} -> {}", w.id, WorkloadStateName(w.state),
                            WorkloadStateName(x.to));
            return false;
          }
          if (!x.message.empty()) w.message = x.message;
          if (x.to == WorkloadState::kRunning && ToMicros(w.started_at) == 0) w.started_at = now;
          if (IsTerminal(x.to)) w.finished_at = now;
          if (x.to == WorkloadState::kFailed) w.failure_reason = x.reason;
          if (governance_ && (x.to == WorkloadState::kFailed || x.to == WorkloadState::kCancelled)) {
            governance_->AppendDecision("controller/" + std::string(WorkloadKindName(w.spec.kind())),
                                        x.to == WorkloadState::kCancelled ? "reclaim" : "fail", "workload", w.id,
                                        w.spec.tenant(), "", x.reason + ": " + x.message);
          }
          return true;
        } else if constexpr (std::is_same_v<T, control::Requeue>) {
          WorkloadState to = w.state == WorkloadState::kAdmitted ? WorkloadState::kPending : WorkloadState::kRequeued;
          if (!Transition(w.state, to).ok()) return false;
          Time first{}, last{};
          for (const auto& p : w.placements) {
            if (ToMicros(p.started_at) != 0 && (ToMicros(first) == 0 || p.started_at < first)) first = p.started_at;
            last = std::max(last, ToMicros(p.finished_at) != 0 ? p.finished_at : now);
          }
          if (ToMicros(first) != 0 && last > first) w.prior_runtime_us += ToMicros(last) - ToMicros(first);
          w.placements.clear();
          w.group_flavors.clear();
          w.admitted_at = Time{};
          w.preempted_at = Time{};
          w.requeues++;
          if (x.consume_retry) {
            w.failures++;
          } else if (x.reason != "Preempted") {
            w.infra_requeues++;
          }
          w.not_before = x.not_before;
          w.message = x.message;
          w.next_env = x.env;
          preempting_.erase(w.id);
          if (governance_) {
            governance_->AppendDecision("controller/" + std::string(WorkloadKindName(w.spec.kind())), "requeue",
                                        "workload", w.id, w.spec.tenant(), "", x.reason + ": " + x.message);
          }
          return true;
        } else if constexpr (std::is_same_v<T, control::StopTasks>) {
          bool any = false;
          for (const auto& ref : x.tasks) {
            for (auto& p : w.placements) {
              if (p.group != ref.group || p.replica != ref.replica || p.stop_requested || TaskEnded(p)) continue;
              p.stop_requested = true;
              p.stop_signal = x.signal;
              p.stop_grace = x.grace_seconds;
              any = true;
            }
          }
          return any;
        } else if constexpr (std::is_same_v<T, control::Event>) {
          json details = x.details;
          if (!x.message.empty()) details["message"] = x.message;
          details["state"] = WorkloadStateName(w.state);
          events.emplace_back(x.type, std::move(details));
          return true;
        } else if constexpr (std::is_same_v<T, control::RecordShortage>) {
          json j = {{"service", w.id},       {"name", w.spec.name},   {"tenant", w.spec.tenant()},
                    {"queue", w.spec.queue}, {"wanted", x.wanted},    {"available", x.available},
                    {"startUs", ToMicros(x.start)}};
          if (x.end) j["endUs"] = ToMicros(*x.end);
          j["flavor"] = w.group_flavors.empty() ? "cpu" : w.group_flavors[0];
          batch.AppendJournal("shortages", j.dump(), now);
          return true;
        } else {
          // ScaleTo, RestartReplica, StartTask, SetVersion, SetReady, GrantQuota, RevokeQuota and
          // CollectResults are not applied by this server yet (docs/controllers.md §3).
          ABACUS_LOG_DEBUG("controller of {}: {} not applied", w.id, control::DecisionName(d));
          return false;
        }
      },
      d);
}

void ControlPlane::TickControllers() {
  Time now = clock_.Now();
  if (now - last_controller_tick_ < std::chrono::seconds(1)) return;
  last_controller_tick_ = now;
  std::vector<std::string> ids;
  for (const auto& [id, r] : ledger_.workloads()) {
    if (r.holds_quota() && HasAgentTasks(r)) ids.push_back(id);
  }
  if (ids.empty()) return;
  // The same path as task reports, with no report: time-based rules (backoff, maxRuntime, TTL,
  // idle, autoscaling, stop deadlines) fire here.
  ProcessTaskReports({}, &ids);
}

bool ControlPlane::DecideFromTasks(WorkloadRecord& w, std::vector<std::pair<std::string, json>>& events, Time now) {
  WorkloadState before = w.state;
  size_t events_before = events.size();
  auto on_agent = [&](const PlacementRecord& p) {
    const NodeRecord* n = ledger_.FindNode(p.node);
    return n != nullptr && n->agent;
  };
  bool any_running = false, all_ended = true, all_succeeded = true, any_agent = false;
  const PlacementRecord* failed = nullptr;
  const PlacementRecord* lost = nullptr;
  for (const PlacementRecord& p : w.placements) {
    if (!on_agent(p)) continue;
    any_agent = true;
    if (p.phase == "Running" || p.phase == "Stopping" || TaskEnded(p)) any_running = true;
    if (!TaskEnded(p)) all_ended = false;
    if (!(p.phase == "Exited" && !TaskFailed(p) && !p.stopped)) all_succeeded = false;
    if (TaskFailed(p) && failed == nullptr) failed = &p;
    if (p.phase == "Lost" && lost == nullptr) lost = &p;
  }
  if (!any_agent) return false;
  auto task_of = [&](const PlacementRecord& p) { return FormatTaskId({w.id, p.group, p.replica, w.attempt()}); };
  auto requeue = [&](const std::string& why, json details) {
    WorkloadState to = w.state == WorkloadState::kAdmitted ? WorkloadState::kPending : WorkloadState::kRequeued;
    if (!Transition(w.state, to).ok()) return;  // (inside the lambda)
    details["attempt"] = w.attempt();
    w.placements.clear();
    w.group_flavors.clear();
    w.admitted_at = Time{};
    w.preempted_at = Time{};
    w.requeues++;
    w.message = why;
    events.emplace_back("Requeued", EventJson(to, why, std::move(details)));
  };
  if (w.state == WorkloadState::kAdmitted && any_running) {
    (void)Transition(w.state, WorkloadState::kRunning);
    std::set<std::string> nodes;
    for (const auto& p : w.placements) {
      if (p.phase == "Running" || TaskEnded(p)) nodes.insert(p.node);
    }
    events.emplace_back("Started", EventJson(WorkloadState::kRunning, "tasks started",
                                             {{"nodes", nodes}, {"attempt", w.attempt()}}));
  }
  if (w.state == WorkloadState::kRunning || w.state == WorkloadState::kAdmitted) {
    if (lost != nullptr) {
      requeue("task " + task_of(*lost) + " lost: " + lost->message,
              {{"reason", "NodeLost"}, {"task", task_of(*lost)}, {"node", lost->node}});
    } else if (failed != nullptr) {
      std::string reason = FailureReason(*failed);
      std::string what = "task " + task_of(*failed) + " on " + failed->node + " failed: " + failed->message;
      if (w.failures < AllowedRetries(w.spec)) {
        w.failures++;
        events.emplace_back("TaskFailed", EventJson(w.state, what,
                                                    {{"reason", reason},
                                                     {"task", task_of(*failed)},
                                                     {"exitCode", failed->exit_code},
                                                     {"retry", w.failures}}));
        requeue("retry " + std::to_string(w.failures) + " after: " + what, {{"reason", "Retry"}});
      } else {
        (void)Transition(w.state, WorkloadState::kFailed);
        w.finished_at = now;
        w.message = what;
        w.failure_reason = reason;
        events.emplace_back("Failed", EventJson(WorkloadState::kFailed, what,
                                                {{"reason", reason},
                                                 {"task", task_of(*failed)},
                                                 {"exitCode", failed->exit_code},
                                                 {"signal", failed->signal},
                                                 {"oomKilled", failed->oom_killed}}));
      }
    } else if (all_ended && all_succeeded) {
      (void)Transition(w.state, WorkloadState::kSucceeded);
      w.finished_at = now;
      w.message.clear();
      events.emplace_back("Succeeded", EventJson(WorkloadState::kSucceeded, "all tasks exited 0",
                                                 {{"tasks", w.placements.size()}}));
    }
  } else if (w.state == WorkloadState::kPreempting && all_ended) {
    requeue(w.message.empty() ? "preempted" : w.message, {{"reason", "Preempted"}});
  }
  return w.state != before || events.size() != events_before;
}

}  // namespace abacus::server
