// The kind-specific parts of a workload's spec.
#include <array>

#include "tenancy/quantity_field.h"
#include "tenancy/tenancy_codec.h"
#include "workload/kind_decode.h"

namespace abacus::internal {
namespace {

using P = Presence;
constexpr int64_t kDay = 86'400;

template <typename T>
void Set(T& field, const std::optional<int64_t>& v) {
  if (v) field = static_cast<T>(*v);
}

RestartPolicy DecodeRestartPolicy(MapReader& spec) {
  RestartPolicy rp;
  if (auto r = spec.Map("restartPolicy", {"maxRetries", "backoffSeconds"})) {
    Set(rp.max_retries, r->Int("maxRetries", P::kOptional, 0, 100));
    Set(rp.backoff_seconds, r->Int("backoffSeconds", P::kOptional, 0, kDay));
  }
  return rp;
}

TrainingSpec DecodeTraining(MapReader& spec) {
  TrainingSpec t;
  if (auto r = spec.Map("checkpoint", {"signal", "graceSeconds"})) {
    CheckpointPolicy cp;
    static constexpr std::array<std::string_view, 6> kSignals = {"SIGTERM", "SIGINT", "SIGUSR1",
                                                                 "SIGUSR2", "SIGHUP", "SIGQUIT"};
    if (auto s = r->String("signal")) {
      if (std::find(kSignals.begin(), kSignals.end(), *s) == kSignals.end()) {
        r->Error("signal", "unknown signal '" + *s +
                               "' (expected SIGTERM, SIGINT, SIGUSR1, SIGUSR2, SIGHUP or SIGQUIT)");
      }
      cp.signal = *s;
    }
    Set(cp.grace_seconds, r->Int("graceSeconds", P::kOptional, 0, kDay));
    t.checkpoint = cp;
  }
  t.restart_policy = DecodeRestartPolicy(spec);
  t.max_runtime = spec.Dur("maxRuntime");
  if (t.max_runtime && t.max_runtime->count() == 0) spec.Error("maxRuntime", "must be positive");
  return t;
}

std::optional<Probe> DecodeProbe(MapReader& probes, std::string_view key) {
  auto r = probes.Map(key, {"http", "tcp", "exec", "initialDelaySeconds", "periodSeconds",
                            "timeoutSeconds", "failureThreshold", "successThreshold"});
  if (!r) return std::nullopt;
  Probe p;
  int kinds = int(r->Has("http")) + int(r->Has("tcp")) + int(r->Has("exec"));
  if (kinds != 1) {
    r->ctx().Error(r->line(), r->path(),
                   kinds == 0 ? "needs one of http, tcp or exec"
                              : "takes only one of http, tcp or exec");
  }
  if (auto h = r->Map("http", {"path", "port"})) {
    p.type = Probe::Type::kHttp;
    if (auto s = h->String("path")) {
      if (s->empty() || s->front() != '/') h->Error("path", "must start with '/', got '" + *s + "'");
      p.path = *s;
    }
    Set(p.port, h->Int("port", P::kOptional, 1, 65535));  // absent: the replica's ABACUS_PORT
  } else if (auto t = r->Map("tcp", {"port"})) {
    p.type = Probe::Type::kTcp;
    Set(p.port, t->Int("port", P::kOptional, 1, 65535));
  } else if (auto e = r->Map("exec", {"command"})) {
    p.type = Probe::Type::kExec;
    if (auto c = e->StringList("command", P::kRequired)) {
      if (c->empty()) e->Error("command", "must not be empty");
      p.command = *c;
    }
  }
  Set(p.initial_delay_seconds, r->Int("initialDelaySeconds", P::kOptional, 0, kDay));
  Set(p.period_seconds, r->Int("periodSeconds", P::kOptional, 1, kDay));
  Set(p.timeout_seconds, r->Int("timeoutSeconds", P::kOptional, 1, kDay));
  Set(p.failure_threshold, r->Int("failureThreshold", P::kOptional, 1, 1000));
  Set(p.success_threshold, r->Int("successThreshold", P::kOptional, 1, 1000));
  return p;
}

InferenceSpec DecodeInference(MapReader& spec) {
  InferenceSpec s;
  constexpr int64_t kMaxReplicas = 10'000;
  auto min = spec.Int("minReplicas", P::kOptional, 1, kMaxReplicas);
  auto replicas = spec.Int("replicas", P::kOptional, 1, kMaxReplicas);
  auto max = spec.Int("maxReplicas", P::kOptional, 1, kMaxReplicas);
  s.min_replicas = static_cast<int32_t>(min.value_or(1));
  s.replicas = static_cast<int32_t>(replicas.value_or(s.min_replicas));
  s.max_replicas = static_cast<int32_t>(max.value_or(std::max(s.min_replicas, s.replicas)));
  if (s.min_replicas > s.max_replicas) {
    spec.Error("minReplicas", "minReplicas (" + std::to_string(s.min_replicas) +
                                  ") exceeds maxReplicas (" + std::to_string(s.max_replicas) + ")");
  } else if (s.replicas < s.min_replicas || s.replicas > s.max_replicas) {
    spec.Error("replicas", "replicas (" + std::to_string(s.replicas) + ") must be between minReplicas (" +
                               std::to_string(s.min_replicas) + ") and maxReplicas (" +
                               std::to_string(s.max_replicas) + ")");
  }
  if (auto r = spec.Map("reservation", {"reserved", "pool", "overflow"})) {
    Reservation res;
    if (auto b = r->Bool("reserved")) res.reserved = *b;
    if (auto p = r->Name("pool")) res.pool = *p;
    if (auto v = r->String("overflow")) {
      if (*v == "Allow" || *v == "Deny") {
        res.overflow = *v == "Allow";
      } else {
        r->Error("overflow", "expected Allow or Deny, got '" + *v + "'");
      }
      if (res.pool.empty()) r->Error("overflow", "needs a pool to overflow from");
    }
    if (!r->Has("reserved") && !r->Has("pool")) {
      r->ctx().Error(r->line(), r->path(), "needs reserved: true or a pool");
    }
    s.reservation = res;
  }
  if (auto r = spec.Map("probes", {"readiness", "liveness"})) {
    s.probes.readiness = DecodeProbe(*r, "readiness");
    s.probes.liveness = DecodeProbe(*r, "liveness");
  }
  if (auto r = spec.Map("autoscaling", {"metric", "target", "stabilizationSeconds", "cooldownSeconds"})) {
    Autoscaling a;
    auto target = r->Value("target", P::kRequired);
    if (target && target->IsMap()) {
      // A signal the gateway observes (docs/gateway.md "Autoscaling signals"): exactly one.
      if (auto t = r->Map("target", {std::string_view(kRequestsPerSecond), std::string_view(kP99LatencyMs)})) {
        int given = int(t->Has(kRequestsPerSecond)) + int(t->Has(kP99LatencyMs));
        if (given != 1) {
          t->ctx().Error(t->line(), t->path(),
                         std::string("takes exactly one of ") + kRequestsPerSecond + " or " + kP99LatencyMs);
        }
        for (const char* m : {kRequestsPerSecond, kP99LatencyMs}) {
          if (auto q = t->Qty(m, P::kOptional, /*positive=*/true)) {
            a.metric = m;
            a.target = *q;
          }
        }
      }
      if (r->Has("metric")) {
        r->Error("metric", std::string("not with target: {") + a.metric +
                               ": …} (the target names the gateway's metric)");
      }
    } else {
      if (auto m = r->String("metric", P::kRequired)) a.metric = *m;
      if (auto t = r->Qty("target", P::kRequired, /*positive=*/true)) a.target = *t;
    }
    Set(a.stabilization_seconds, r->Int("stabilizationSeconds", P::kOptional, 0, kDay));
    Set(a.cooldown_seconds, r->Int("cooldownSeconds", P::kOptional, 0, kDay));
    if (s.max_replicas <= s.min_replicas) {
      spec.Error("autoscaling", "autoscaling needs maxReplicas greater than minReplicas");
    }
    s.autoscaling = a;
  }
  if (auto r = spec.Map("rollout", {"version", "canaryPercent", "canaryReplicas",
                                    "promoteAfterSeconds", "rollback"})) {
    Rollout ro;
    if (auto v = r->String("version", P::kRequired)) ro.version = *v;
    if (auto v = r->Int("canaryPercent", P::kOptional, 1, 100)) ro.canary_percent = static_cast<int32_t>(*v);
    if (auto v = r->Int("canaryReplicas", P::kOptional, 1, kMaxReplicas)) {
      ro.canary_replicas = static_cast<int32_t>(*v);
    }
    if (r->Has("canaryPercent") && r->Has("canaryReplicas")) {
      r->Error("canaryReplicas", "set canaryPercent or canaryReplicas, not both");
    }
    Set(ro.promote_after_seconds, r->Int("promoteAfterSeconds", P::kOptional, 0, 7 * kDay));
    if (auto v = r->String("rollback")) {
      if (*v == "automatic" || *v == "manual") {
        ro.automatic_rollback = *v == "automatic";
      } else {
        r->Error("rollback", "expected automatic or manual, got '" + *v + "'");
      }
    }
    s.rollout = ro;
  }
  Set(s.drain_seconds, spec.Int("drainSeconds", P::kOptional, 0, 3600));
  return s;
}

ExperimentSpec DecodeExperiment(MapReader& spec) {
  ExperimentSpec e;
  e.ttl = spec.Dur("ttl");
  if (e.ttl && e.ttl->count() == 0) spec.Error("ttl", "must be positive");
  if (auto r = spec.Map("idle", {"utilizationBelowPercent", "windowSeconds", "noticeSeconds"})) {
    IdlePolicy idle;
    Set(idle.utilization_below_percent, r->Int("utilizationBelowPercent", P::kOptional, 0, 100));
    Set(idle.window_seconds, r->Int("windowSeconds", P::kOptional, 1, 7 * kDay));
    Set(idle.notice_seconds, r->Int("noticeSeconds", P::kOptional, 0, kDay));
    e.idle = idle;
  }
  if (auto r = spec.Map("temporaryQuota", {"resource", "amount", "expires"})) {
    TemporaryQuota tq;
    auto resource = r->Parsed<QuotaResource>("resource", P::kRequired, QuotaResource::Parse);
    if (resource) tq.resource = *resource;
    QuantityUnit unit = resource ? QuotaUnit(*resource) : QuantityUnit::kMemory;  // unknown: the loosest
    if (auto v = BoundedQty(*r, "amount", unit, P::kRequired, /*positive=*/true)) tq.amount = *v;
    if (auto v = r->Dur("expires", P::kRequired)) {
      if (v->count() == 0) r->Error("expires", "must be positive");
      tq.expires = *v;
    }
    e.temporary_quota = tq;
  }
  return e;
}

EvaluationSpec DecodeEvaluation(MapReader& spec) {
  EvaluationSpec e;
  if (auto v = spec.String("model", P::kRequired)) e.model = *v;
  if (auto v = spec.String("modelVersion", P::kRequired)) e.model_version = *v;
  if (auto v = spec.String("dataset", P::kRequired)) e.dataset = *v;
  if (auto v = spec.String("resultsPath", P::kRequired)) e.results_path = *v;
  if (auto v = spec.Bool("archive")) e.archive = *v;
  if (auto v = spec.String("baselineVersion")) e.baseline_version = *v;
  return e;
}

BatchSpec DecodeBatch(MapReader& spec, const WorkloadSpec& common) {
  BatchSpec b;
  constexpr int64_t kMaxTasks = 1'000'000;
  Set(b.tasks, spec.Int("tasks", P::kRequired, 1, kMaxTasks));
  auto par = spec.Int("parallelism", P::kOptional, 1, kMaxTasks);
  b.parallelism = par ? static_cast<int32_t>(*par) : b.tasks;
  if (par && *par > b.tasks && spec.Has("tasks")) {
    spec.Error("parallelism", "parallelism (" + std::to_string(*par) + ") exceeds tasks (" +
                                  std::to_string(b.tasks) + ")");
  }
  b.restart_policy = DecodeRestartPolicy(spec);
  if (common.task_groups.size() > 1) {
    spec.Error("taskGroups", "a BatchJob takes exactly one task group, got " +
                                 std::to_string(common.task_groups.size()));
  }
  return b;
}

}  // namespace

const std::vector<std::string_view>& CommonSpecKeys() {
  static const std::vector<std::string_view> kKeys = {"image", "command", "env", "taskGroups",
                                                      "gang", "maxQueueWait", "mounts", "envFrom",
                                                      "secretMounts", "readOnlyRootFilesystem"};
  return kKeys;
}

const std::vector<std::string_view>& KindSpecKeys(WorkloadKind kind) {
  static const std::array<std::vector<std::string_view>, 5> kKeys = {{
      {"checkpoint", "restartPolicy", "maxRuntime"},
      {"replicas", "minReplicas", "maxReplicas", "reservation", "probes", "autoscaling", "rollout",
       "drainSeconds"},
      {"ttl", "idle", "temporaryQuota"},
      {"model", "modelVersion", "dataset", "resultsPath", "archive", "baselineVersion"},
      {"tasks", "parallelism", "restartPolicy"},
  }};
  return kKeys[static_cast<size_t>(kind)];
}

KindSpec DecodeKindSpec(WorkloadKind kind, MapReader& spec, const WorkloadSpec& common) {
  switch (kind) {
    case WorkloadKind::kTrainingJob: return DecodeTraining(spec);
    case WorkloadKind::kInferenceService: return DecodeInference(spec);
    case WorkloadKind::kExperiment: return DecodeExperiment(spec);
    case WorkloadKind::kEvaluation: return DecodeEvaluation(spec);
    case WorkloadKind::kBatchJob: return DecodeBatch(spec, common);
  }
  return TrainingSpec{};
}

}  // namespace abacus::internal
