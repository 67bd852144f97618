// Workload → canonical JSON and YAML (see workload_codec.h).
#include "common/duration_parse.h"
#include "model/extended_resource.h"
#include "tenancy/yaml_json.h"
#include "workload/secret_refs.h"
#include "workload/workload_codec.h"

namespace abacus {
namespace {

// Each encoder builds either JSON flavour: ordered_json keeps the field order for YAML and
// `-o json`; plain json (keys sorted) is what the store keeps, built without a copy.
template <class Json>
Json EncodeRestartPolicy(const RestartPolicy& rp) {
  return Json{{"maxRetries", rp.max_retries}, {"backoffSeconds", rp.backoff_seconds}};
}

template <class Json>
Json EncodeTaskGroup(const TaskGroup& g) {
  Json j;
  j["name"] = g.name;
  j["replicas"] = g.replicas;
  Json res;
  res["cpu"] = g.resources.cpu.ToString();
  res["memory"] = g.resources.memory.ToString();
  if (const auto& a = g.resources.accelerators) {
    Json acc;
    acc["flavor"] = a->flavor.text();
    acc["count"] = a->count;
    if (a->share) acc["share"] = *a->share;
    if (a->memory) acc["memory"] = a->memory->ToString();
    res["accelerators"] = std::move(acc);
  }
  if (!g.resources.extended.empty()) {
    Json ext;
    for (const auto& [name, amount] : g.resources.extended) {
      auto x = ExtendedResource::Parse(name);
      ext[name] = x.ok() ? x->FormatAmount(amount) : std::to_string(amount);
    }
    res["extended"] = std::move(ext);
  }
  j["resources"] = std::move(res);
  j["topology"] = TopologyPolicyName(g.topology);
  if (!g.node_selector.empty()) j["nodeSelector"] = g.node_selector;
  if (!g.tolerations.empty()) {
    Json list = Json::array();
    for (const auto& t : g.tolerations) {
      Json tj;
      if (!t.key.empty()) tj["key"] = t.key;
      tj["operator"] = t.op == Toleration::Op::kExists ? "Exists" : "Equal";
      if (t.op == Toleration::Op::kEqual) tj["value"] = t.value;
      if (t.effect) tj["effect"] = TaintEffectName(*t.effect);
      list.push_back(std::move(tj));
    }
    j["tolerations"] = std::move(list);
  }
  if (!g.runtime.empty()) {
    Json list = Json::array();
    for (const auto& c : g.runtime) list.push_back(c.ToString());
    j["runtime"] = std::move(list);
  }
  if (!g.placement.empty()) {
    Json p;
    if (g.placement.max_per_node > 0) p["maxPerNode"] = g.placement.max_per_node;
    if (!g.placement.spread.empty()) {
      Json list = Json::array();
      for (const auto& c : g.placement.spread) list.push_back(Json{{"topologyKey", c.topology_key}, {"maxSkew", c.max_skew}});
      p["spread"] = std::move(list);
    }
    if (!g.placement.anti_affinity.empty()) {
      Json list = Json::array();
      for (const auto& svc : g.placement.anti_affinity) list.push_back(Json{{"service", svc}});
      p["antiAffinity"] = std::move(list);
    }
    j["placement"] = std::move(p);
  }
  return j;
}

template <class Json>
Json EncodeProbe(const Probe& p) {
  Json j;
  switch (p.type) {
    // No port (0): the replica's ABACUS_PORT; the document then has none either.
    case Probe::Type::kHttp:
      j["http"] = p.port != 0 ? Json{{"path", p.path}, {"port", p.port}} : Json{{"path", p.path}};
      break;
    case Probe::Type::kTcp: j["tcp"] = p.port != 0 ? Json{{"port", p.port}} : Json::object(); break;
    case Probe::Type::kExec: j["exec"] = Json{{"command", p.command}}; break;
  }
  j["initialDelaySeconds"] = p.initial_delay_seconds;
  j["periodSeconds"] = p.period_seconds;
  j["timeoutSeconds"] = p.timeout_seconds;
  j["failureThreshold"] = p.failure_threshold;
  j["successThreshold"] = p.success_threshold;
  return j;
}

template <class Json>
void EncodeTraining(const TrainingSpec& t, Json& spec) {
  if (t.checkpoint) {
    spec["checkpoint"] = Json{{"signal", t.checkpoint->signal}, {"graceSeconds", t.checkpoint->grace_seconds}};
  }
  spec["restartPolicy"] = EncodeRestartPolicy<Json>(t.restart_policy);
  if (t.max_runtime) spec["maxRuntime"] = FormatDurationSpec(*t.max_runtime);
}

template <class Json>
void EncodeInference(const InferenceSpec& s, Json& spec) {
  spec["replicas"] = s.replicas;
  spec["minReplicas"] = s.min_replicas;
  spec["maxReplicas"] = s.max_replicas;
  if (s.reservation) {
    Json r;
    r["reserved"] = s.reservation->reserved;
    if (!s.reservation->pool.empty()) r["pool"] = s.reservation->pool;
    if (s.reservation->overflow) r["overflow"] = "Allow";
    spec["reservation"] = std::move(r);
  }
  if (s.probes.readiness || s.probes.liveness) {
    Json p;
    if (s.probes.readiness) p["readiness"] = EncodeProbe<Json>(*s.probes.readiness);
    if (s.probes.liveness) p["liveness"] = EncodeProbe<Json>(*s.probes.liveness);
    spec["probes"] = std::move(p);
  }
  if (const auto& a = s.autoscaling) {
    Json j;
    if (a->metric == kRequestsPerSecond || a->metric == kP99LatencyMs) {
      Json target;
      target[a->metric] = a->target.ToString();
      j["target"] = std::move(target);
    } else {
      j["metric"] = a->metric;
      j["target"] = a->target.ToString();
    }
    j["stabilizationSeconds"] = a->stabilization_seconds;
    j["cooldownSeconds"] = a->cooldown_seconds;
    spec["autoscaling"] = std::move(j);
  }
  if (s.drain_seconds != InferenceSpec{}.drain_seconds) spec["drainSeconds"] = s.drain_seconds;
  if (const auto& r = s.rollout) {
    Json j;
    j["version"] = r->version;
    if (r->canary_percent) j["canaryPercent"] = *r->canary_percent;
    if (r->canary_replicas) j["canaryReplicas"] = *r->canary_replicas;
    j["promoteAfterSeconds"] = r->promote_after_seconds;
    j["rollback"] = r->automatic_rollback ? "automatic" : "manual";
    spec["rollout"] = std::move(j);
  }
}

template <class Json>
void EncodeExperiment(const ExperimentSpec& e, Json& spec) {
  if (e.ttl) spec["ttl"] = FormatDurationSpec(*e.ttl);
  if (const auto& i = e.idle) {
    spec["idle"] = Json{{"utilizationBelowPercent", i->utilization_below_percent},
                        {"windowSeconds", i->window_seconds},
                        {"noticeSeconds", i->notice_seconds}};
  }
  if (const auto& q = e.temporary_quota) {
    spec["temporaryQuota"] = Json{{"resource", q->resource.Name()},
                                  {"amount", q->amount.ToString()},
                                  {"expires", FormatDurationSpec(q->expires)}};
  }
}

template <class Json>
void EncodeEvaluation(const EvaluationSpec& e, Json& spec) {
  spec["model"] = e.model;
  spec["modelVersion"] = e.model_version;
  spec["dataset"] = e.dataset;
  spec["resultsPath"] = e.results_path;
  spec["archive"] = e.archive;
  if (!e.baseline_version.empty()) spec["baselineVersion"] = e.baseline_version;
}

template <class Json>
void EncodeBatch(const BatchSpec& b, Json& spec) {
  spec["tasks"] = b.tasks;
  spec["parallelism"] = b.parallelism;
  spec["restartPolicy"] = EncodeRestartPolicy<Json>(b.restart_policy);
}

template <class Json>
Json EncodeWorkloadAs(const Workload& w) {
  Json j;
  j["kind"] = WorkloadKindName(w.kind());
  j["name"] = w.name;
  j["project"] = w.project;
  j["queue"] = w.queue;
  j["priorityClass"] = w.priority_class;
  if (!w.labels.empty()) j["labels"] = w.labels;
  Json spec;
  if (!w.spec.image.empty()) spec["image"] = w.spec.image;
  if (w.spec.read_only_root) spec["readOnlyRootFilesystem"] = true;
  if (!w.spec.command.empty()) spec["command"] = w.spec.command;
  internal::EncodeEnvAndSecrets(w.spec, spec);
  Json groups = Json::array();
  for (const auto& g : w.spec.task_groups) groups.push_back(EncodeTaskGroup<Json>(g));
  spec["taskGroups"] = std::move(groups);
  spec["gang"] = w.spec.gang;
  if (w.spec.max_queue_wait) spec["maxQueueWait"] = FormatDurationSpec(*w.spec.max_queue_wait);
  if (!w.spec.mounts.empty()) {
    Json list = Json::array();
    for (const auto& m : w.spec.mounts) {
      Json mj;
      mj["path"] = m.path;
      if (!m.mount_path.empty()) mj["mountPath"] = m.mount_path;
      mj["readOnly"] = m.read_only;
      list.push_back(std::move(mj));
    }
    spec["mounts"] = std::move(list);
  }
  std::visit(
      [&spec](const auto& d) {
        using D = std::decay_t<decltype(d)>;
        if constexpr (std::is_same_v<D, TrainingSpec>) EncodeTraining(d, spec);
        if constexpr (std::is_same_v<D, InferenceSpec>) EncodeInference(d, spec);
        if constexpr (std::is_same_v<D, ExperimentSpec>) EncodeExperiment(d, spec);
        if constexpr (std::is_same_v<D, EvaluationSpec>) EncodeEvaluation(d, spec);
        if constexpr (std::is_same_v<D, BatchSpec>) EncodeBatch(d, spec);
      },
      w.details);
  j["spec"] = std::move(spec);
  return j;
}

}  // namespace

nlohmann::ordered_json EncodeWorkload(const Workload& w) { return EncodeWorkloadAs<nlohmann::ordered_json>(w); }

nlohmann::json ToJson(const Workload& w) { return EncodeWorkloadAs<nlohmann::json>(w); }

std::string ToYaml(const Workload& w) { return EmitYaml(EncodeWorkload(w)); }

}  // namespace abacus
