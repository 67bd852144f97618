#include "control/evaluation.h"

#include "common/nesting.h"
#include "control/completion.h"

namespace abacus::control {

using nlohmann::json;

namespace {

constexpr int kMaxDepth = 8;
constexpr size_t kMaxMetrics = 10000;

Status Flatten(const json& j, const std::string& prefix, int depth, std::map<std::string, double>& out) {
  if (depth > kMaxDepth) return InvalidArgument("results nest deeper than " + std::to_string(kMaxDepth) + " levels");
  auto key = [&](const std::string& k) { return prefix.empty() ? k : prefix + "." + k; };
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) ABACUS_RETURN_IF_ERROR(Flatten(v, key(k), depth + 1, out));
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) ABACUS_RETURN_IF_ERROR(Flatten(j[i], key(std::to_string(i)), depth + 1, out));
  } else if (j.is_number()) {
    if (out.size() >= kMaxMetrics) return InvalidArgument("results hold more than " + std::to_string(kMaxMetrics) + " metrics");
    out[prefix] = j.get<double>();
  }
  return Status::OK();
}

}  // namespace

Decisions ReconcileEvaluation(const WorkloadView& w, Time now) {
  Decisions out;
  if (DecidePreempted(w, kDefaultGraceSeconds, now, out)) return out;
  WorkloadState state = DecideStarted(w, out);
  Decisions done;
  DecideCompletion(w, state, CompletionPolicy{}, now, done);
  const EvaluationSpec& spec = *w.spec->evaluation();
  for (Decision& d : done) {
    if (const SetState* s = std::get_if<SetState>(&d); s != nullptr && s->to == WorkloadState::kSucceeded) {
      out.push_back(CollectResults{spec.results_path, spec.archive});
    }
    out.push_back(std::move(d));
  }
  return out;
}

Result<std::map<std::string, double>> ParseResultMetrics(std::string_view text) {
  JsonTextProblem problem;  // a task writes this file: nesting and duplicate keys are bounded
  json j = ParseJsonChecked(text, &problem);
  if (!problem.message.empty()) {
    return InvalidArgument("results: line " + std::to_string(problem.line) + ": " + problem.message);
  }
  if (j.is_discarded()) return InvalidArgument("results are not valid JSON");
  if (!j.is_object()) return InvalidArgument("results must be a JSON object of metrics");
  if (j.contains("metrics") && j["metrics"].is_object()) j = j["metrics"];
  std::map<std::string, double> out;
  ABACUS_RETURN_IF_ERROR(Flatten(j, "", 0, out));
  if (out.empty()) return InvalidArgument("results hold no numeric metric");
  return out;
}

Result<EvaluationResult> BuildEvaluationResult(const WorkloadView& w, std::string_view results_json,
                                               const ResourceUsage& usage, Time now) {
  auto metrics = ParseResultMetrics(results_json);
  if (!metrics.ok()) return metrics.status();
  const EvaluationSpec& spec = *w.spec->evaluation();
  EvaluationResult r;
  r.workload_id = w.id;
  r.model = spec.model;
  r.version = spec.model_version;
  r.dataset = spec.dataset;
  r.metrics = std::move(*metrics);
  r.usage = usage;
  r.finished_at = now;
  return r;
}

Event ResultsEvent(const Result<EvaluationResult>& r) {
  if (!r.ok()) return MakeEvent("ResultsInvalid", r.status().message(), json::object(), "ResultsInvalid");
  return MakeEvent("ResultsArchived",
                   std::to_string(r->metrics.size()) + " metric(s) of " + r->model + " " + r->version + " on " + r->dataset,
                   {{"model", r->model}, {"version", r->version}, {"dataset", r->dataset}, {"metrics", r->metrics.size()}});
}

json ToJson(const EvaluationResult& r) {
  return {{"workloadId", r.workload_id},
          {"model", r.model},
          {"version", r.version},
          {"dataset", r.dataset},
          {"metrics", r.metrics},
          {"usage",
           {{"flavor", r.usage.flavor},
            {"deviceSeconds", r.usage.device_seconds},
            {"cpuCoreSeconds", r.usage.cpu_core_seconds},
            {"wallSeconds", r.usage.wall_seconds}}},
          {"finishedAt", FormatTime(r.finished_at)}};
}

Result<EvaluationResult> EvaluationResultFromJson(const json& j) {
  if (!j.is_object()) return InvalidArgument("evaluation result must be an object");
  EvaluationResult r;
  try {
    r.workload_id = j.value("workloadId", "");
    r.model = j.at("model").get<std::string>();
    r.version = j.at("version").get<std::string>();
    r.dataset = j.value("dataset", "");
    r.metrics = j.at("metrics").get<std::map<std::string, double>>();
    json u = j.value("usage", json::object());
    r.usage = {u.value("flavor", ""), u.value("deviceSeconds", 0.0), u.value("cpuCoreSeconds", 0.0),
               u.value("wallSeconds", 0.0)};
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("evaluation result: ") + e.what());
  }
  auto t = ParseTime(j.value("finishedAt", "1970-01-01T00:00:00Z"));
  if (!t.ok()) return t.status().WithContext("evaluation result finishedAt");
  r.finished_at = *t;
  return r;
}

}  // namespace abacus::control
