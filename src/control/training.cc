#include "control/training.h"

namespace abacus::control {
Duration TrainingRuntime(const WorkloadView& w, Time now) {
  Time start = FirstStart(w.tasks);
  if (!IsSet(start) || now < start) return w.prior_runtime;
  return w.prior_runtime + (now - start);
}

Decisions ReconcileTraining(const WorkloadView& w, Time now, const TrainingOptions& o) {
  Decisions out;
  const TrainingSpec& spec = *w.spec->training();
  CheckpointPolicy checkpoint = spec.checkpoint.value_or(CheckpointPolicy{"SIGTERM", kDefaultGraceSeconds});

  // 1) Preempting: the server sent the checkpoint signal; requeue once every task stopped.
  if (DecidePreempted(w, checkpoint.grace_seconds, now, out)) return out;
  // 2) Admitted → Running on the first task start.
  WorkloadState state = DecideStarted(w, out);
  // 3) maxRuntime: checkpoint signal + grace to every task, then Failed.
  Time start = FirstStart(w.tasks);
  if (state == WorkloadState::kRunning && spec.max_runtime && IsSet(start) &&
      TrainingRuntime(w, now) >= *spec.max_runtime) {
    StopPlan plan;
    plan.since = start + (*spec.max_runtime - w.prior_runtime);
    plan.signal = checkpoint.signal;
    plan.grace_seconds = checkpoint.grace_seconds;
    plan.to = WorkloadState::kFailed;
    plan.reason = "MaxRuntimeExceeded";
    plan.message = "ran longer than maxRuntime " + FormatDuration(*spec.max_runtime);
    plan.details = {{"maxRuntimeSeconds", std::chrono::duration_cast<std::chrono::seconds>(*spec.max_runtime).count()}};
    StopThenFinish(w, plan, "MaxRuntimeExceeded", now, out);
    return out;
  }
  // 4) Gang failure (the others get the checkpoint signal so the retry can resume), retries
  //    with backoff, success.
  CompletionPolicy p;
  p.restart = spec.restart_policy;
  p.stop_signal = checkpoint.signal;
  p.stop_grace_seconds = checkpoint.grace_seconds;
  p.backoff_cap = o.backoff_cap;
  p.max_infra_requeues = o.max_infra_requeues;
  DecideCompletion(w, state, p, now, out);
  return out;
}

}  // namespace abacus::control
