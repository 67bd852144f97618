#include "control/inference.h"

#include <algorithm>

#include "control/completion.h"
#include "control/health.h"

namespace abacus::control {

using nlohmann::json;

namespace {

// What one replica's tasks say about it.
struct Replica {
  std::vector<const TaskView*> tasks;
  Time run_start{};
  bool complete = false;    // a task for every group
  bool restarting = false;  // a stop or restart is in progress
  bool replacing = false;   // SetVersion issued in this call
  bool live = true;
  bool ready = true;
  bool readiness_failing = false;
  const TaskView* exited = nullptr;  // a task ended by itself
  bool lost = false;
};

std::map<int32_t, Replica> Replicas(const WorkloadView& w, int32_t desired, const InferenceState& s,
                                    const Signals& sig) {
  std::map<int32_t, Replica> out;
  for (const TaskView& t : w.tasks) {
    if (t.replica < desired) out[t.replica].tasks.push_back(&t);
  }
  const InferenceSpec& spec = *w.spec->inference();
  size_t groups = std::max<size_t>(w.spec->spec.task_groups.size(), 1);
  for (auto& [r, rep] : out) {
    rep.complete = rep.tasks.size() >= groups;
    for (const TaskView* t : rep.tasks) {
      if (IsSet(t->started_at) && (!IsSet(rep.run_start) || t->started_at < rep.run_start)) rep.run_start = t->started_at;
      rep.restarting = rep.restarting || t->stop_requested;
    }
    auto published = s.ready.find(r);
    bool was_ready = published != s.ready.end() && published->second == rep.run_start;
    for (const TaskView* t : rep.tasks) {
      TaskHealth h = EvaluateHealth(spec.probes, *t, sig.probes, was_ready);
      rep.live = rep.live && h.live;
      rep.ready = rep.ready && h.ready;
      rep.readiness_failing = rep.readiness_failing || h.readiness_failing;
      if (t->phase == TaskPhase::kLost && !t->stop_requested) rep.lost = true;
      if (t->phase == TaskPhase::kExited && !t->stop_requested && rep.exited == nullptr) rep.exited = t;
    }
    rep.ready = rep.ready && rep.complete && !rep.restarting;
  }
  return out;
}

// Whether replica `rep` runs `version` on every task.
bool Runs(const Replica& rep, const std::string& version) {
  return std::all_of(rep.tasks.begin(), rep.tasks.end(), [&](const TaskView* t) { return t->version == version; });
}

CanaryHealth Canary(const RolloutState& s, int32_t desired, const std::map<int32_t, Replica>& replicas) {
  CanaryHealth h;
  if (s.phase != RolloutPhase::kCanary) return h;
  h.healthy = true;
  for (int32_t r = 0; r < std::min(s.canary_replicas, desired); ++r) {
    auto it = replicas.find(r);
    if (it == replicas.end() || !Runs(it->second, s.canary_version)) {
      h.healthy = false;
      continue;
    }
    const Replica& rep = it->second;
    std::string who = "replica " + std::to_string(r);
    if (!rep.live) h.why = who + ": liveness probe failed";
    if (rep.readiness_failing) h.why = who + ": readiness probe failing";
    if (rep.exited != nullptr) h.why = who + " exited" + (rep.exited->message.empty() ? "" : ": " + rep.exited->message);
    h.failed = h.failed || !h.why.empty();
    h.healthy = h.healthy && rep.ready;
  }
  h.healthy = h.healthy && !h.failed;
  return h;
}

void Restart(int32_t r, Replica& rep, InferenceState& s, const InferenceOptions& o, Time now, Decisions& out) {
  std::string reason;
  std::string what = "replica " + std::to_string(r);
  if (!rep.live) {
    reason = "LivenessFailed";
    what += ": liveness probe failed";
  } else if (rep.exited != nullptr) {
    reason = "ReplicaExited";
    what += " exited" + (rep.exited->message.empty() ? "" : ": " + rep.exited->message);
  } else if (rep.lost) {
    reason = "ReplicaLost";
    what += " lost with its node";
  } else {
    return;
  }
  RestartRecord& rr = s.restarts[r];
  if (IsSet(rep.run_start) && now - rep.run_start >= o.crash_reset) rr.count = 0;
  Duration wait{0};
  if (!rep.lost) {
    for (int32_t i = 0; i < rr.count && wait < o.crash_backoff_cap; ++i) wait = i == 0 ? o.crash_backoff : wait * 2;
    wait = std::min(wait, o.crash_backoff_cap);
    rr.count++;
  }
  rr.last = now;
  out.push_back(RestartReplica{r, now + wait, reason});
  out.push_back(MakeEvent(reason, what + "; restarting",
                          {{"replica", r}, {"restarts", rr.count}, {"notBefore", FormatTime(now + wait)}}, reason));
  rep.restarting = true;
}

}  // namespace

InferenceOutcome ReconcileInference(const WorkloadView& w, InferenceState s, const Signals& sig, Time now,
                                    const InferenceOptions& o) {
  InferenceOutcome out;
  Decisions& ds = out.decisions;
  auto finish = [&] {
    out.state = std::move(s);
    return std::move(out);
  };
  if (DecidePreempted(w, kDefaultGraceSeconds, now, ds)) return finish();
  WorkloadState state = DecideStarted(w, ds);
  if (state != WorkloadState::kAdmitted && state != WorkloadState::kRunning) return finish();
  const InferenceSpec& spec = *w.spec->inference();

  // 1) Desired replicas: the spec, or the autoscaler.
  int32_t before = s.autoscaler.desired == 0 ? spec.replicas : s.autoscaler.desired;
  AutoscaleResult a = Autoscale(spec, sig.metrics, s.autoscaler, now, o.autoscale);
  int32_t desired = a.desired;
  if (desired != before) {
    std::string reason = spec.autoscaling ? "Autoscale" : "Spec";
    json details = {{"from", before}, {"to", desired}};
    std::string message = "scaled from " + std::to_string(before) + " to " + std::to_string(desired) + " replica(s)";
    if (spec.autoscaling && a.average) {
      details["metric"] = spec.autoscaling->metric;
      details["average"] = *a.average;
      details["target"] = spec.autoscaling->target.ToString();
      details["reporting"] = a.reporting;
      message += ": " + spec.autoscaling->metric + " averages " + std::to_string(*a.average) + " per replica, target " +
                 spec.autoscaling->target.ToString();
    }
    ds.push_back(ScaleTo{desired, reason});
    ds.push_back(MakeEvent("Scaled", message, details, reason));
  }

  // 2) Replica health; 3) the rollout and the versions it wants.
  std::map<int32_t, Replica> replicas = Replicas(w, desired, s, sig);
  StepRollout(*w.spec, desired, Canary(s.rollout, desired, replicas), s.rollout, now, ds);
  //    A replica that is not ready changes version at once; a ready one only while fewer than
  //    max_unavailable_percent of the replicas are unavailable (a rolling update).
  if (spec.rollout) {
    int32_t unavailable = desired - static_cast<int32_t>(replicas.size());
    for (const auto& [r, rep] : replicas) unavailable += rep.ready ? 0 : 1;
    int32_t budget = std::max<int32_t>(1, desired * o.max_unavailable_percent / 100);
    for (auto& [r, rep] : replicas) {
      const std::string& want = WantedVersion(s.rollout, r);
      if (rep.restarting || Runs(rep, want)) continue;
      if (rep.ready && unavailable >= budget) continue;
      if (rep.ready) ++unavailable;
      ds.push_back(SetVersion{r, want});
      rep.replacing = true;
    }
  }
  // 4) Restarts of failed replicas (not those being replaced by a new version).
  for (auto& [r, rep] : replicas) {
    if (!rep.restarting && !rep.replacing) Restart(r, rep, s, o, now, ds);
  }
  // 5) Readiness: publish changes.
  for (auto it = s.ready.begin(); it != s.ready.end();) {
    auto rep = replicas.find(it->first);
    bool keep = rep != replicas.end() && rep->second.ready && !rep->second.replacing && !rep->second.restarting;
    if (keep) {
      ++it;
      continue;
    }
    ds.push_back(SetReady{it->first, false});
    if (it->first < desired) {
      ds.push_back(MakeEvent("ReplicaNotReady", "replica " + std::to_string(it->first) + " not ready",
                             {{"replica", it->first}}));
    }
    it = s.ready.erase(it);
  }
  for (const auto& [r, rep] : replicas) {
    if (!rep.ready || rep.replacing || rep.restarting) continue;
    auto published = s.ready.find(r);
    if (published != s.ready.end() && published->second == rep.run_start) continue;
    s.ready[r] = rep.run_start;
    ds.push_back(SetReady{r, true});
    ds.push_back(MakeEvent("ReplicaReady", "replica " + std::to_string(r) + " ready", {{"replica", r}}));
  }
  // 6) Shortage: desired replicas that have no placement.
  int32_t available = 0;
  for (const auto& [r, rep] : replicas) available += rep.complete && !rep.lost ? 1 : 0;
  TrackShortage(desired, available, s.shortage, now, ds);
  return finish();
}

}  // namespace abacus::control
