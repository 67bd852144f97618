// ControlPlane: the per-kind controllers (src/control/) applied to the ledger. After task reports
// and on a one-second tick, each workload with tasks on agent nodes is reconciled: its view
// (record + task phases) and stored controller state go in, decisions come out and are applied
// to the record in the same write batch as its events (docs/controllers.md §2).
#include <algorithm>

#include "common/log.h"
#include "common/mutex.h"
#include "control/controller.h"
#include "server/control_plane.h"
#include "server/desired_tasks.h"
#include "server/elastic_units.h"
#include "server/evaluation_archive.h"
#include "server/fleet.h"
#include "server/governance.h"
#include "server/preemption_journal.h"
#include "server/task_ids.h"

namespace abacus::server {
namespace {

using nlohmann::json;

control::TaskPhase PhaseOf(const std::string& phase) {
  auto p = control::ParseTaskPhase(phase);
  return p.ok() ? *p : control::TaskPhase::kPending;
}



// A node that can run a task now: agent-run and Ready.
bool NodeRunsTasks(const Ledger& ledger, const std::string& name) {
  const NodeRecord* n = ledger.FindNode(name);
  return n != nullptr && n->agent && n->node.state == NodeState::kReady;
}

// Clears placement `p` for its next run on the same node (a new task id).
void NextRun(PlacementRecord& p) {
  p.run++;
  p.phase.clear();
  p.exit_code = 0;
  p.signal = 0;
  p.oom_killed = false;
  p.stopped = false;
  p.message.clear();
  p.lost_reason.clear();
  p.started_at = Time{};
  p.finished_at = Time{};
  p.stop_requested = false;
  p.stop_signal.clear();
  p.stop_grace = 0;
  p.drain_until = Time{};
  p.ready.reset();
  p.live.reset();
  p.readiness_run = 0;
  p.liveness_run = 0;
  p.restart = false;
  p.restart_at = Time{};
  p.routed = false;
  p.address.clear();
  p.results.reset();
  p.results_error.clear();
}

// Whether `p` is published as draining, its stop not yet sent.
bool Draining(const PlacementRecord& p) { return ToMicros(p.drain_until) != 0 && !p.stop_requested; }

// Stops placement `p` (`signal`, SIGKILL after `grace`) once: a service replica that runs and
// reported an address is first published as draining for the spec's drainSeconds (gateways send
// it no new requests; FinishDrains sends the stop at the deadline, on the controller tick, so a
// server restart meanwhile keeps it); anything else is stopped at once. Returns true when it
// changed `p`.
bool RequestStop(const WorkloadRecord& w, PlacementRecord& p, const std::string& signal, int32_t grace, Time now) {
  if (p.stop_requested || TaskEnded(p) || Draining(p)) return false;
  p.stop_signal = signal;
  p.stop_grace = grace;
  const InferenceSpec* inf = w.spec.inference();
  if (inf != nullptr && inf->drain_seconds > 0 && p.phase == "Running" && !p.address.empty()) {
    p.drain_until = now + std::chrono::seconds(inf->drain_seconds);
    return true;
  }
  p.stop_requested = true;
  return true;
}

// Sends the stop of every replica whose drain ended by `now`. Returns true when one changed.
bool FinishDrains(WorkloadRecord& w, Time now) {
  bool changed = false;
  for (auto& p : w.placements) {
    if (!Draining(p) || TaskEnded(p) || now < p.drain_until) continue;  // ended meanwhile: nothing to stop
    p.stop_requested = true;
    changed = true;
  }
  return changed;
}

// RestartReplica / SetVersion: stop the unit's tasks that still run and mark the unit to run
// again once they ended, not before `at` (SettleUnits does it). A task that never started runs
// again at once. With `version`, the next run has it.
bool RestartUnit(WorkloadRecord& w, int32_t unit, Time at, const std::string* version, Time now) {
  bool any = false;
  for (auto& p : w.placements) {
    if (UnitOf(w, p) != unit) continue;
    if (version != nullptr) p.version = *version;
    if (p.phase.empty() && !p.stop_requested) {
      if (version != nullptr) NextRun(p);  // not started: the agent gets the new version at once
      any = any || version != nullptr;
      continue;
    }
    if (p.restart && p.restart_at == at && (TaskEnded(p) || p.stop_requested || Draining(p))) continue;
    p.restart = true;
    p.restart_at = at;
    RequestStop(w, p, "SIGTERM", kDefaultStopGraceSeconds, now);
    any = true;
  }
  return any;
}

// StartTask: put array task `index` on a slot — an empty one first, else one whose task ended —
// on a node that runs tasks. No slot: nothing (the controller asks again; a lost slot comes back
// as a slice).
bool StartArrayTask(WorkloadRecord& w, int32_t index, const Ledger& ledger) {
  std::map<int32_t, std::vector<PlacementRecord*>> units;
  for (auto& p : w.placements) units[UnitOf(w, p)].push_back(&p);
  int32_t chosen = -1;
  bool chosen_empty = false;
  for (auto& [u, ps] : units) {
    bool empty = true, ended = true, usable = true;
    for (PlacementRecord* p : ps) {
      empty = empty && p->index < 0 && p->phase.empty();
      ended = ended && p->index >= 0 && TaskEnded(*p) && !p->restart;
      usable = usable && NodeRunsTasks(ledger, p->node);
    }
    if (!usable) continue;
    if (empty) {
      chosen = u;
      chosen_empty = true;
      break;
    }
    if (ended && chosen < 0) chosen = u;
  }
  if (chosen < 0) return false;
  for (PlacementRecord* p : units[chosen]) {
    if (!chosen_empty) NextRun(*p);
    p->index = index;
  }
  return true;
}

// True while an Experiment waits with a temporary quota request: its controller decides the
// request before admission.
// The metric's name of an applied decision that is an action on the workload ("" for bookkeeping:
// states, readiness, events other than a rollback).
std::string ControllerActionName(const control::Decision& d) {
  if (std::holds_alternative<control::Requeue>(d)) return "requeue";
  if (std::holds_alternative<control::RestartReplica>(d)) return "restart";
  if (std::holds_alternative<control::ScaleTo>(d)) return "scale";
  if (std::holds_alternative<control::SetVersion>(d)) return "rollout";
  if (std::holds_alternative<control::GrantQuota>(d)) return "grant_quota";
  if (std::holds_alternative<control::RevokeQuota>(d)) return "revoke_quota";
  if (const auto* set = std::get_if<control::SetState>(&d); set != nullptr && set->to == WorkloadState::kFailed) {
    return "fail";
  }
  if (const auto* e = std::get_if<control::Event>(&d); e != nullptr && e->type == "RolledBack") return "rollback";
  return "";
}

bool AsksTemporaryQuota(const WorkloadRecord& r) {
  const ExperimentSpec* e = r.spec.experiment();
  return e != nullptr && e->temporary_quota && r.waiting();
}

// When a workload that ends by its tasks' exits ended: its last task's exit as its agent saw it
// (at most `now`), not when the server learned of it, which an outage of the server delays.
// `now` when some task has no exit time (simulated nodes, lost tasks, a workload cancelled).
Time TasksEndedAt(const WorkloadRecord& w, Time now) {
  if (w.placements.empty()) return now;
  Time last{};
  for (const PlacementRecord& p : w.placements) {
    std::optional<Time> exited = EndSeen(p, w.started_at, now);  // not before it started
    if (!exited) return now;
    last = std::max(last, *exited);
  }
  return last;
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
  v.evict_reason = RequeueReasonName(r.evict_reason);
  v.attempt = r.attempt();
  v.failures = r.failures;
  v.infra_requeues = r.infra_requeues;
  v.prior_runtime = Duration(r.prior_runtime_us);
  v.not_before = r.not_before;
  for (const auto& p : r.placements) {
    control::TaskView t;
    t.group = p.group;
    t.replica = UnitOf(r, p);
    t.index = TaskIndex(r, p);
    t.version = p.version;
    t.node = p.node;
    t.phase = PhaseOf(p.phase);
    t.exit_code = p.exit_code;
    t.signal = p.signal;
    t.oom_killed = p.oom_killed;
    t.stopped = p.stopped;
    t.stop_requested = p.stop_requested || Draining(p);  // a draining replica is on its way out
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
    for (const auto& p : r.placements) {
      for (const auto& g : p.devices) {
        for (const auto& [t, ratio] : telemetry_.SamplesOf(p.node, g.index, now - std::chrono::hours(1))) {
          s.utilization.push_back({p.node, g.index, ratio * 100.0, t});
        }
      }
    }
  }
  if (const ExperimentSpec* e = r.spec.experiment(); e != nullptr && e->temporary_quota) {
    // The tenant's auto-approve limit for this resource, and an admin's answer once given.
    if (const Tenant* t = ledger_.config().FindTenant(r.spec.tenant()); t != nullptr) {
      for (const auto& limit : t->temporary_quota_auto_approve) {
        if (limit.resource == e->temporary_quota->resource) s.quota_auto_approve = limit.amount;
      }
    }
    if (r.quota_decision) {
      s.quota_decision = control::QuotaDecision{r.quota_decision->approved, r.quota_decision->by, r.quota_decision->at};
    }
  }
  if (r.spec.kind() == WorkloadKind::kInferenceService) {
    // Each probe's latest run of equal results as its agent counted them (one sample standing
    // for `count` results); an agent that sends no run: its last verdict as one result.
    for (const auto& p : r.placements) {
      control::TaskRef task{p.group, UnitOf(r, p)};
      if (p.readiness_run != 0) {
        s.probes.push_back({task, control::ProbeResult::Kind::kReadiness, p.readiness_run > 0, now,
                            std::abs(p.readiness_run)});
      } else if (p.ready) {
        s.probes.push_back({task, control::ProbeResult::Kind::kReadiness, *p.ready, now});
      }
      if (p.liveness_run != 0) {
        s.probes.push_back({task, control::ProbeResult::Kind::kLiveness, p.liveness_run > 0, now,
                            std::abs(p.liveness_run)});
      } else if (p.live) {
        s.probes.push_back({task, control::ProbeResult::Kind::kLiveness, *p.live, now});
      }
    }
    s.metrics = telemetry_.MetricsOf(r.id);
  }
  return s;
}

bool ControlPlane::RunController(WorkloadRecord& w, std::vector<std::pair<std::string, json>>& events,
                                 WriteBatch& batch, std::vector<govern::AuditRecord>& decisions, Time now) {
  // Simulated nodes: nothing runs, nothing to decide — but a waiting experiment's temporary
  // quota is decided before admission.
  if (!HasAgentTasks(w) && !AsksTemporaryQuota(w)) return false;
  auto outcome = control::Reconcile(ViewOf(w), w.controller_state, SignalsFor(w, now), now);
  if (!outcome.ok()) {
    ABACUS_LOG_WARN("controller of {}: {}", w.id, outcome.status().ToString());
    return false;
  }
  bool changed = outcome->state != w.controller_state;
  w.controller_state = outcome->state;
  const std::string kind(WorkloadKindName(w.spec.kind()));
  for (const control::Decision& d : outcome->decisions) {
    if (!ApplyDecision(w, d, events, batch, decisions, now)) continue;
    changed = true;
    // Counted in abacus_controller_actions_total / abacus_evictions_total once the batch commits.
    if (std::string action = ControllerActionName(d); !action.empty()) steps_.staged.actions.emplace_back(kind, action);
    if (const auto* rq = std::get_if<control::Requeue>(&d)) steps_.staged.evictions.push_back(rq->reason);
  }
  changed |= SettleUnits(w, events, now);
  return changed;
}

bool ControlPlane::ApplyDecision(WorkloadRecord& w, const control::Decision& d,
                                 std::vector<std::pair<std::string, json>>& events, WriteBatch& batch,
                                 std::vector<govern::AuditRecord>& decisions, Time now) {
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
          if (IsTerminal(x.to)) w.finished_at = TasksEndedAt(w, now);
          if (x.to == WorkloadState::kFailed) w.failure_reason = x.reason;
          // A controller's reclaim (idle, an expired temporary quota, a TTL) gave back what it
          // held: the evidence report's reclaim actions count it beside the scheduler's.
          if (x.to == WorkloadState::kCancelled) AppendPreemption(batch, w, ReclaimReason(x.reason), "", "", now);
          if (governance_ && (x.to == WorkloadState::kFailed || x.to == WorkloadState::kCancelled)) {
            decisions.push_back(DecisionRecord("controller/" + std::string(WorkloadKindName(w.spec.kind())),
                                        x.to == WorkloadState::kCancelled ? "reclaim" : "fail", "workload", w.id,
                                        w.spec.tenant(), "", x.reason + ": " + x.message));
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
          } else if (x.reason != RequeueReasonName(RequeueReason::kPreempted) &&
                     x.reason != RequeueReasonName(w.evict_reason)) {  // an operator's stop is no failure
            w.infra_requeues++;
          }
          w.not_before = x.not_before;
          w.message = x.message;
          w.requeue_reason = x.consume_retry ? RequeueReason::kRetry : ParseRequeueReason(x.reason);
          w.next_env = x.env;
          steps_.preempting.erase(w.id);
          if (governance_) {
            decisions.push_back(DecisionRecord("controller/" + std::string(WorkloadKindName(w.spec.kind())), "requeue",
                                        "workload", w.id, w.spec.tenant(), "", x.reason + ": " + x.message));
          }
          return true;
        } else if constexpr (std::is_same_v<T, control::StopTasks>) {
          bool any = false;
          for (const auto& ref : x.tasks) {
            for (auto& p : w.placements) {
              if (p.group != ref.group || p.replica != ref.replica) continue;
              any |= RequestStop(w, p, x.signal, x.grace_seconds, now);
            }
          }
          return any;
        } else if constexpr (std::is_same_v<T, control::Event>) {
          json details = x.details;
          if (!x.message.empty()) details["message"] = x.message;
          details["state"] = WorkloadStateName(w.state);
          // A rollback touches the user's service: it joins the audit chain (issue 9).
          if (governance_ && x.type == "RolledBack") {
            auto field = [&](const char* k) { return x.details.contains(k) ? x.details[k] : json(); };
            decisions.push_back(DecisionRecord("controller/InferenceService", "rollback", "workload", w.id, w.spec.tenant(),
                                        json({{"version", field("version")}}).dump(),
                                        json({{"version", field("stableVersion")}, {"why", x.message}}).dump()));
          }
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
        } else if constexpr (std::is_same_v<T, control::ScaleTo>) {
          // The desired size lives in the record's spec: the snapshot gives missing replicas to
          // the scheduler as slices, SettleUnits stops and removes the extra ones.
          InferenceSpec* inf = std::get_if<InferenceSpec>(&w.spec.details);
          if (inf == nullptr || inf->replicas == x.replicas) return false;
          inf->replicas = std::clamp(x.replicas, inf->min_replicas, std::max(inf->min_replicas, inf->max_replicas));
          if (governance_) {
            decisions.push_back(DecisionRecord("controller/InferenceService", "scale", "workload", w.id, w.spec.tenant(), "",
                                        x.reason + ": " + std::to_string(inf->replicas) + " replica(s)"));
          }
          return true;
        } else if constexpr (std::is_same_v<T, control::RestartReplica>) {
          return RestartUnit(w, x.replica, x.not_before, nullptr, now);
        } else if constexpr (std::is_same_v<T, control::SetVersion>) {
          bool differs = false;
          for (const auto& p : w.placements) differs |= UnitOf(w, p) == x.replica && p.version != x.version;
          if (!differs) return false;  // re-applying is a no-op
          return RestartUnit(w, x.replica, now, &x.version, now);
        } else if constexpr (std::is_same_v<T, control::SetReady>) {
          bool any = false;
          for (auto& p : w.placements) {
            if (UnitOf(w, p) != x.replica || p.routed == x.ready) continue;
            p.routed = x.ready;
            any = true;
          }
          return any;
        } else if constexpr (std::is_same_v<T, control::StartTask>) {
          return StartArrayTask(w, x.index, ledger_);
        } else if constexpr (std::is_same_v<T, control::GrantQuota>) {
          QuotaGrantRecord g{x.resource, x.amount, x.until.value_or(Time{})};
          auto it = std::find_if(w.quota_grants.begin(), w.quota_grants.end(),
                                 [&](const QuotaGrantRecord& e) { return e.resource == x.resource; });
          if (it != w.quota_grants.end() && *it == g) return false;
          bool first = it == w.quota_grants.end();
          if (first) {
            w.quota_grants.push_back(g);
          } else {
            *it = g;
          }
          pacer_.Arrived(w.id);  // the next cycle tries it with the grant
          if (governance_ && first) {
            decisions.push_back(DecisionRecord("controller/Experiment", "quota-grant", "workload", w.id, w.spec.tenant(), "",
                                        x.amount.ToString() + " " + x.resource.Name() + " granted" +
                                            (x.until ? " until " + FormatTime(*x.until) : "")));
          }
          return true;
        } else if constexpr (std::is_same_v<T, control::RevokeQuota>) {
          auto n = std::erase_if(w.quota_grants, [&](const QuotaGrantRecord& e) { return e.resource == x.resource; });
          if (n == 0) return false;
          if (governance_) {
            decisions.push_back(DecisionRecord("controller/Experiment", "quota-revoke", "workload", w.id, w.spec.tenant(),
                                        x.amount.ToString() + " " + x.resource.Name(), x.reason));
          }
          return true;
        } else if constexpr (std::is_same_v<T, control::CollectResults>) {
          // The results the agents uploaded with the Exited reports, archived in this batch
          // (evaluation_archive.h), then their event.
          CollectedResults c = CollectEvaluationResults(w, x, now);
          if (c.archive) {
            batch.Put(kEvaluationKind, w.id, c.archive->dump(-1, ' ', false, json::error_handler_t::replace));
          }
          return ApplyDecision(w, control::Decision(std::move(c.event)), events, batch, decisions, now);
        } else {
          // A decision this server does not apply (none today; docs/controllers.md §0).
          ABACUS_LOG_DEBUG("controller of {}: {} not applied", w.id, control::DecisionName(d));
          return false;
        }
      },
      d);
}

bool ControlPlane::SettleUnits(WorkloadRecord& w, std::vector<std::pair<std::string, json>>& events, Time now) {
  if (!IsElastic(w) || (w.state != WorkloadState::kAdmitted && w.state != WorkloadState::kRunning)) return false;
  bool changed = FinishDrains(w, now);
  std::set<int32_t> drop;  // units to remove once their tasks ended
  std::string drop_reason;
  // 1. Restarts that are due: a new run on the same node, or no placement when the node is gone
  //    (the unit comes back as a slice and the scheduler places it again).
  for (auto& p : w.placements) {
    if (!p.restart || !TaskEnded(p) || now < p.restart_at) continue;
    if (NodeRunsTasks(ledger_, p.node)) {
      NextRun(p);
      changed = true;
    } else {
      drop.insert(UnitOf(w, p));
      drop_reason = "NodeLost";
    }
  }
  // A unit with work on a draining node leaves it when the drain says so (fleet.h): stopped, then
  // removed, and placed again elsewhere as a slice; its other units keep serving.
  for (const auto& p : w.placements) {
    if (steps_.draining_nodes.count(p.node) == 0) continue;  // the common case: no node lookup
    const NodeRecord* n = ledger_.FindNode(p.node);
    if (n != nullptr && DrainStopsNow(ledger_, w, *n, now)) {
      drop.insert(UnitOf(w, p));
      drop_reason = "Drained";
    }
  }
  // A batch slot whose task was lost with its node is not reused there.
  if (w.spec.batch() != nullptr) {
    for (const auto& p : w.placements) {
      if (p.phase == "Lost" && !NodeRunsTasks(ledger_, p.node)) {
        drop.insert(UnitOf(w, p));
        drop_reason = "NodeLost";
      }
    }
  }
  // 2. Units beyond what the workload wants: a service's highest-numbered replicas after a
  //    scale-down; a batch's idle slots (task ended or never given one) when fewer array tasks
  //    are left than it has slots.
  std::map<int32_t, std::vector<PlacementRecord*>> units;
  for (auto& p : w.placements) units[UnitOf(w, p)].push_back(&p);
  int32_t wanted = WantedUnits(w);
  std::set<int32_t> extra;
  if (w.spec.inference() != nullptr) {
    for (const auto& [u, ps] : units) {
      if (u >= wanted) extra.insert(u);
    }
  } else {
    int32_t excess = static_cast<int32_t>(units.size()) - wanted;
    for (auto it = units.rbegin(); excess > 0 && it != units.rend(); ++it) {
      bool idle = std::all_of(it->second.begin(), it->second.end(), [](const PlacementRecord* p) {
        return (p->index < 0 && p->phase.empty()) || (TaskEnded(*p) && !p->restart);
      });
      if (idle && drop.count(it->first) == 0) {
        extra.insert(it->first);
        --excess;
      }
    }
  }
  // 3. Stop what still runs of them; remove each once all its tasks ended (or never started).
  std::vector<int32_t> removed;
  for (const auto& [u, ps] : units) {
    if (extra.count(u) == 0 && drop.count(u) == 0) continue;
    bool gone = true;
    for (PlacementRecord* p : ps) {
      if (TaskEnded(*p) || p->phase.empty()) continue;
      gone = false;
      changed |= RequestStop(w, *p, "SIGTERM", kDefaultStopGraceSeconds, now);
    }
    if (gone) removed.push_back(u);
  }
  if (!removed.empty()) {
    std::set<int32_t> rm(removed.begin(), removed.end());
    // A slot placed again later runs under a new task id (records.h next_runs).
    for (const PlacementRecord& p : w.placements) {
      if (rm.count(UnitOf(w, p)) == 0) continue;
      int32_t& next = w.next_runs[std::to_string(p.group) + "." + std::to_string(p.replica)];
      next = std::max(next, p.run + 1);
    }
    std::erase_if(w.placements, [&](const PlacementRecord& p) { return rm.count(UnitOf(w, p)) != 0; });
    bool service = w.spec.inference() != nullptr;
    std::string what = std::string(service ? "replica(s) " : "slot(s) ");
    for (size_t i = 0; i < removed.size(); ++i) what += (i ? ", " : "") + std::to_string(removed[i]);
    std::string reason = !drop_reason.empty() && drop.count(removed[0]) ? drop_reason : service ? "ScaleDown" : "Released";
    events.emplace_back(service ? "ReplicasRemoved" : "SlotsReleased",
                        EventJson(w.state,
                                  what + (reason == "NodeLost"  ? " removed: node lost"
                                          : reason == "Drained" ? " removed: node draining, placed again elsewhere"
                                                                : " released"),
                                  {{"units", removed}, {"reason", reason}, {"placed", PlacedUnits(w).size()}}));
    changed = true;
  }
  return changed;
}

void ControlPlane::TickControllers() {
  Time now = clock_.Now();
  if (!steps_.controllers.Due(now)) return;
  std::vector<std::string> ids;
  for (const auto& [id, r] : ledger_.workloads()) {
    if ((r.holds_quota() && HasAgentTasks(r)) || AsksTemporaryQuota(r)) ids.push_back(id);
  }
  if (ids.empty()) return;
  // The same path as task reports, with no report: time-based rules (backoff, maxRuntime, TTL,
  // idle, autoscaling, stop deadlines) fire here.
  ProcessTaskReports({}, &ids, LoopWrite::kInFlight);
}

}  // namespace abacus::server
