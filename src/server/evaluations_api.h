// GET /api/v1/evaluations (docs/api.md, "Evaluations"): the evaluation results archived in the
// store (evaluation_archive.h) that the caller may see, and, for one model, its versions side
// by side (control::CompareVersions).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "store/store.h"
#include "workload/workload.h"

namespace abacus::server {

struct EvaluationQuery {
  std::string model;     // only this model's results; with it the answer carries "comparison"
  std::string baseline;  // the version deltas are against (default: see ListEvaluations)
  std::function<bool(const Workload&)> visible;  // the caller's view (governance); null: all
};

// Returns {"items": [archived result, oldest finished first]} and, with `q.model`,
// "comparison": ToJson(CompareVersions(items, model, baseline)). The baseline is `q.baseline`,
// else the spec.baselineVersion of the newest result that names a version with results, else
// the lowest version. Unavailable when the store cannot be read; unreadable documents are
// skipped (logged).
Result<nlohmann::json> ListEvaluations(Store& store, const EvaluationQuery& q);

class ControlPlane;
class RouteTable;
// Adds GET /api/v1/evaluations (?model, ?baseline; what the caller may see) to `t`.
void AddEvaluationRoutes(RouteTable& t, ControlPlane& cp);

}  // namespace abacus::server
