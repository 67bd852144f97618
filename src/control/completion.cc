#include "control/completion.h"

#include <set>

namespace abacus::control {

using nlohmann::json;

std::map<std::string, std::string> NextAttemptEnv(const WorkloadView& w) {
  return {{"ABACUS_ATTEMPT", std::to_string(w.attempt + 1)}, {"ABACUS_RESUME", "1"}};
}

std::string TaskName(const TaskRef& r) { return std::to_string(r.group) + "/" + std::to_string(r.replica); }

json FailureDetails(const TaskView& t, FailureClass c) {
  return {{"reason", FailureClassName(c)}, {"task", TaskName(t.ref())}, {"node", t.node},
          {"exitCode", t.exit_code},       {"signal", t.signal},        {"oomKilled", t.oom_killed},
          {"message", t.message}};
}

WorkloadState DecideStarted(const WorkloadView& w, Decisions& out) {
  if (w.state != WorkloadState::kAdmitted) return w.state;
  std::set<std::string> nodes;
  for (const TaskView& t : w.tasks) {
    if (t.phase == TaskPhase::kRunning || t.phase == TaskPhase::kStopping || t.phase == TaskPhase::kExited) {
      nodes.insert(t.node);
    }
  }
  if (nodes.empty()) return w.state;
  out.push_back(SetState{WorkloadState::kRunning, "Started", "tasks started"});
  out.push_back(MakeEvent("Started", "tasks started", {{"nodes", nodes}, {"attempt", w.attempt}}));
  return WorkloadState::kRunning;
}

bool DecidePreempted(const WorkloadView& w, int32_t grace_seconds, Time now, Decisions& out) {
  if (w.state != WorkloadState::kPreempting) return false;
  bool all_ended = true;
  for (const TaskView& t : w.tasks) all_ended = all_ended && t.ended();
  bool overdue = now >= w.preempted_at + std::chrono::seconds(grace_seconds) + kStopSlack;
  if (!all_ended && !overdue) return true;
  // An operator's stop (drain, requeue, suspend) is requeued under its own reason.
  const std::string reason = w.evict_reason.empty() ? "Preempted" : w.evict_reason;
  const std::string what = w.evict_reason.empty() ? "preempted" : "stopped (" + w.evict_reason + ")";
  std::string why = what + (all_ended ? "; tasks stopped" : "; tasks did not confirm the stop in time");
  out.push_back(Requeue{false, now, reason, why, NextAttemptEnv(w)});
  out.push_back(MakeEvent("Requeued", why, {{"attempt", w.attempt + 1}}, reason));
  return true;
}

namespace {

// The final decision after the gang's first failure `f`: requeue or fail.
void DecideAfterFailure(const WorkloadView& w, const TaskView& f, const CompletionPolicy& p, Time now,
                        Decisions& out) {
  FailureClass c = ClassifyFailure(f);
  std::string cls(FailureClassName(c));
  json details = FailureDetails(f, c);
  std::string what = "task " + TaskName(f.ref()) + " on " + f.node + " failed (" + cls + ")" +
                     (f.message.empty() ? "" : ": " + f.message);
  if (!ConsumesRetry(c)) {
    if (p.max_infra_requeues > 0 && w.infra_requeues >= p.max_infra_requeues) {
      std::string why = what + "; " + std::to_string(w.infra_requeues) + " infrastructure requeues already";
      out.push_back(SetState{WorkloadState::kFailed, cls, why});
      out.push_back(MakeEvent("Failed", why, details));
      return;
    }
    details["attempt"] = w.attempt + 1;
    details["retryConsumed"] = false;
    out.push_back(Requeue{false, now, cls, what, NextAttemptEnv(w)});
    out.push_back(MakeEvent("Requeued", what + "; requeued without using a retry", details));
    return;
  }
  if (w.failures < p.restart.max_retries) {
    int32_t retry = w.failures + 1;
    Duration wait = RetryBackoff(p.restart, retry, p.backoff_cap);
    details["retry"] = retry;
    details["maxRetries"] = p.restart.max_retries;
    details["backoffSeconds"] = std::chrono::duration_cast<std::chrono::seconds>(wait).count();
    details["notBefore"] = FormatTime(now + wait);
    details["attempt"] = w.attempt + 1;
    out.push_back(MakeEvent("TaskFailed", what, details));
    out.push_back(Requeue{true, now + wait, cls,
                          "retry " + std::to_string(retry) + "/" + std::to_string(p.restart.max_retries) +
                              " after: " + what,
                          NextAttemptEnv(w)});
    return;
  }
  details["retries"] = w.failures;
  std::string why = what + (p.restart.max_retries > 0 ? "; retries exhausted" : "");
  out.push_back(SetState{WorkloadState::kFailed, cls, why});
  out.push_back(MakeEvent("Failed", why, details));
}

}  // namespace

void DecideCompletion(const WorkloadView& w, WorkloadState state, const CompletionPolicy& p, Time now,
                      Decisions& out) {
  if (state != WorkloadState::kAdmitted && state != WorkloadState::kRunning) return;
  if (const TaskView* f = FirstFailure(w.tasks)) {
    StopTasks stop{{}, p.stop_signal, p.stop_grace_seconds, "GangMemberFailed"};
    bool all_ended = true;
    for (const TaskView& t : w.tasks) {
      all_ended = all_ended && t.ended();
      if (!t.ended() && !t.stop_requested) stop.tasks.push_back(t.ref());
    }
    if (!stop.tasks.empty()) {
      out.push_back(stop);
      out.push_back(MakeEvent("StoppingGang",
                              "task " + TaskName(f->ref()) + " failed; stopping " +
                                  std::to_string(stop.tasks.size()) + " other task(s)",
                              FailureDetails(*f, ClassifyFailure(*f))));
    }
    bool overdue = now >= f->finished_at + std::chrono::seconds(p.stop_grace_seconds) + p.stop_slack;
    if (all_ended || overdue) DecideAfterFailure(w, *f, p, now, out);
    return;
  }
  if (state != WorkloadState::kRunning || w.tasks.empty()) return;
  for (const TaskView& t : w.tasks) {
    if (!t.succeeded()) return;
  }
  out.push_back(SetState{WorkloadState::kSucceeded, "Completed", "all tasks exited 0"});
  out.push_back(MakeEvent("Succeeded", "all tasks exited 0", {{"tasks", w.tasks.size()}}, "Completed"));
}

void StopThenFinish(const WorkloadView& w, const StopPlan& plan, std::string_view event, Time now, Decisions& out) {
  StopTasks stop{{}, plan.signal, plan.grace_seconds, plan.reason};
  bool all_ended = true;
  for (const TaskView& t : w.tasks) {
    all_ended = all_ended && t.ended();
    if (!t.ended() && !t.stop_requested) stop.tasks.push_back(t.ref());
  }
  if (!stop.tasks.empty()) {
    json details = plan.details;
    details["signal"] = plan.signal;
    details["graceSeconds"] = plan.grace_seconds;
    out.push_back(stop);
    out.push_back(MakeEvent(std::string(event), plan.message, details, plan.reason));
  }
  bool overdue = now >= plan.since + std::chrono::seconds(plan.grace_seconds) + kStopSlack;
  if (!all_ended && !overdue) return;
  out.push_back(SetState{plan.to, plan.reason, plan.message});
  out.push_back(MakeEvent(std::string(WorkloadStateName(plan.to)), plan.message, plan.details, plan.reason));
}

}  // namespace abacus::control
