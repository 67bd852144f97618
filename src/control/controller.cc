#include "control/controller.h"

#include "control/batch.h"
#include "control/evaluation.h"
#include "control/experiment.h"
#include "control/inference.h"
#include "control/training.h"

namespace abacus::control {

using nlohmann::json;

Result<Outcome> Reconcile(const WorkloadView& w, const json& state, const Signals& signals, Time now) {
  if (w.spec == nullptr) return InvalidArgument("workload " + w.id + " has no spec");
  switch (w.spec->kind()) {
    case WorkloadKind::kTrainingJob:
      return Outcome{ReconcileTraining(w, now), nullptr};
    case WorkloadKind::kEvaluation:
      return Outcome{ReconcileEvaluation(w, now), nullptr};
    case WorkloadKind::kBatchJob: {
      auto s = BatchStateFromJson(state);
      if (!s.ok()) return s.status();
      BatchOutcome o = ReconcileBatch(w, std::move(*s), now);
      return Outcome{std::move(o.decisions), ToJson(o.state)};
    }
    case WorkloadKind::kInferenceService: {
      auto s = InferenceStateFromJson(state);
      if (!s.ok()) return s.status();
      InferenceOutcome o = ReconcileInference(w, std::move(*s), signals, now);
      return Outcome{std::move(o.decisions), ToJson(o.state)};
    }
    case WorkloadKind::kExperiment: {
      auto s = ExperimentStateFromJson(state);
      if (!s.ok()) return s.status();
      ExperimentOutcome o = ReconcileExperiment(w, std::move(*s), signals, now);
      return Outcome{std::move(o.decisions), ToJson(o.state)};
    }
  }
  return Internal("unknown workload kind");
}

json Describe(const WorkloadView& w, const json& state) {
  if (w.spec == nullptr) return json::object();
  switch (w.spec->kind()) {
    case WorkloadKind::kBatchJob: {
      auto s = BatchStateFromJson(state);
      if (!s.ok()) return json::object();
      if (s->status.empty()) s->status.assign(static_cast<size_t>(std::max(w.spec->batch()->tasks, 0)), 'P');
      return {{"progress", ToJson(Progress(w, *s))}};
    }
    case WorkloadKind::kInferenceService: {
      auto s = InferenceStateFromJson(state);
      if (!s.ok()) return json::object();
      json d = {{"desiredReplicas", s->autoscaler.desired},
                {"readyReplicas", s->ready.size()},
                {"rollout",
                 {{"phase", RolloutPhaseName(s->rollout.phase)},
                  {"stableVersion", s->rollout.stable_version},
                  {"canaryVersion", s->rollout.canary_version},
                  {"canaryReplicas", s->rollout.canary_replicas}}}};
      if (s->shortage.open) {
        d["shortage"] = {{"since", FormatTime(s->shortage.start)},
                         {"wanted", s->shortage.wanted},
                         {"available", s->shortage.available}};
      }
      return d;
    }
    case WorkloadKind::kExperiment: {
      auto s = ExperimentStateFromJson(state);
      if (!s.ok()) return json::object();
      json d = json::object();
      if (IsSet(s->idle.notice_at)) d["idleNoticeAt"] = FormatTime(s->idle.notice_at);
      if (s->quota.status != QuotaGrantStatus::kNone) {
        d["temporaryQuota"] = {{"status", QuotaGrantStatusName(s->quota.status)}, {"decidedBy", s->quota.decided_by}};
        if (IsSet(s->quota.expires_at)) d["temporaryQuota"]["expiresAt"] = FormatTime(s->quota.expires_at);
      }
      if (!s->ending.empty()) d["reclaiming"] = s->ending;
      return d;
    }
    case WorkloadKind::kTrainingJob:
    case WorkloadKind::kEvaluation:
      break;
  }
  return json::object();
}

}  // namespace abacus::control
