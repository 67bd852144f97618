#include "server/evaluations_api.h"

#include <httplib.h>

#include <algorithm>
#include <set>
#include <vector>

#include "common/log.h"
#include "control/comparison.h"
#include "control/evaluation.h"
#include "server/evaluation_archive.h"
#include "server/control_plane.h"
#include "server/http_answer.h"
#include "server/http_request.h"
#include "server/request_authorization.h"
#include "server/route_table.h"

namespace abacus::server {

using nlohmann::json;

namespace {

struct Archived {
  control::EvaluationResult result;
  json doc;
};

// The default baseline: the spec.baselineVersion of the newest result that names a version
// with results; "" (the lowest version) otherwise.
std::string DefaultBaseline(const std::vector<Archived>& rows) {
  std::set<std::string> versions;
  for (const Archived& a : rows) versions.insert(a.result.version);
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    std::string b = it->doc.value("baselineVersion", "");
    if (!b.empty() && versions.count(b) != 0) return b;
  }
  return "";
}

}  // namespace

Result<json> ListEvaluations(Store& store, const EvaluationQuery& q) {
  auto records = store.List(kEvaluationKind);
  if (!records.ok()) return records.status().WithContext("evaluations");
  std::vector<Archived> rows;
  for (const ObjectRecord& rec : *records) {
    json doc = json::parse(rec.json, nullptr, false);
    auto result = control::EvaluationResultFromJson(doc);
    if (!result.ok()) {
      ABACUS_LOG_WARN("evaluation {}: {}", rec.key, result.status().ToString());
      continue;
    }
    if (!q.model.empty() && result->model != q.model) continue;
    if (q.visible) {
      Workload w;
      w.name = doc.value("workload", "");
      w.project = doc.value("project", "");
      if (!q.visible(w)) continue;
    }
    rows.push_back({std::move(*result), std::move(doc)});
  }
  std::sort(rows.begin(), rows.end(), [](const Archived& a, const Archived& b) {
    if (a.result.finished_at != b.result.finished_at) return a.result.finished_at < b.result.finished_at;
    return a.result.workload_id < b.result.workload_id;
  });
  json items = json::array();
  std::vector<control::EvaluationResult> results;
  for (const Archived& a : rows) {
    items.push_back(a.doc);
    results.push_back(a.result);
  }
  json out = {{"items", std::move(items)}};
  if (!q.model.empty()) {
    std::string baseline = q.baseline.empty() ? DefaultBaseline(rows) : q.baseline;
    control::ComparisonTable cmp = control::CompareVersions(results, q.model, baseline);
    // A baseline the caller named that none of the results (it may see) has: an error, not a
    // header about deltas the table cannot show (the probe of 2026-12-07).
    if (!q.baseline.empty() && !cmp.versions.empty() &&
        std::find(cmp.versions.begin(), cmp.versions.end(), q.baseline) == cmp.versions.end()) {
      std::string versions;
      for (const std::string& v : cmp.versions) versions += (versions.empty() ? "" : ", ") + v;
      return NotFound("model " + q.model + " has no evaluation results of version " + q.baseline +
                      " to compare against (its versions: " + versions + ")");
    }
    out["comparison"] = control::ToJson(cmp);
  }
  return out;
}

void AddEvaluationRoutes(RouteTable& t, ControlPlane& cp) {
  t.Get("/api/v1/evaluations", AnyUser(), [&cp](const httplib::Request& req, httplib::Response& res) {
    EvaluationQuery q;
    q.model = Param(req, "model");
    q.baseline = Param(req, "baseline");
    q.visible = RequestWorkloadFilter();
    Send(res, ListEvaluations(cp.store(), q));
  });
}

}  // namespace abacus::server
