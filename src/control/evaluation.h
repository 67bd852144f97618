// Evaluation controller and results: the run to completion (no retries; infrastructure
// failures requeue), then the metrics the task wrote as JSON under $ABACUS_RESULTS_DIR
// archived as an EvaluationResult with the resources it used.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "control/decision.h"
#include "control/view.h"

namespace abacus::control {

// What the evaluation consumed (the server sums its usage intervals).
struct ResourceUsage {
  std::string flavor;  // main accelerator flavor, "cpu" when none
  double device_seconds = 0;
  double cpu_core_seconds = 0;
  double wall_seconds = 0;
  bool operator==(const ResourceUsage&) const = default;
};

// One archived evaluation: model + version on a dataset, its metrics and usage.
struct EvaluationResult {
  std::string workload_id;
  std::string model;
  std::string version;
  std::string dataset;
  std::map<std::string, double> metrics;
  ResourceUsage usage;
  Time finished_at{};
  bool operator==(const EvaluationResult&) const = default;
};

// Returns the decisions for Evaluation `w` at `now`; on success CollectResults comes before
// SetState(Succeeded). Call after every task report and on every loop tick.
Decisions ReconcileEvaluation(const WorkloadView& w, Time now);

// Parses a results file: a JSON object of metrics, flat ({"accuracy": 0.71}) or nested
// ({"mmlu": {"acc": 0.71}} → "mmlu.acc"; arrays index as "f1.0"); when the object has a
// "metrics" object, only that is read. Numbers only; strings, booleans and null are skipped.
// InvalidArgument when it is not JSON, not an object, too deep (8), too large (10000
// metrics) or holds no number.
Result<std::map<std::string, double>> ParseResultMetrics(std::string_view text);

// Returns the archived result of `w` (model, version, dataset from its spec) from the results
// file text and its usage, finished at `now`; the parse error otherwise.
Result<EvaluationResult> BuildEvaluationResult(const WorkloadView& w, std::string_view results_json,
                                               const ResourceUsage& usage, Time now);

// Returns the event the server records after CollectResults: ResultsArchived (metric count)
// or ResultsInvalid (the error).
Event ResultsEvent(const Result<EvaluationResult>& r);

// The stored form of an EvaluationResult, and back (InvalidArgument naming the problem).
nlohmann::json ToJson(const EvaluationResult& r);
Result<EvaluationResult> EvaluationResultFromJson(const nlohmann::json& j);

}  // namespace abacus::control
