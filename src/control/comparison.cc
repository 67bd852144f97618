#include "control/comparison.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "model/version.h"

namespace abacus::control {

using nlohmann::json;

namespace {

// Dotted versions in version order, before any that do not parse (those by text).
bool VersionLess(const std::string& a, const std::string& b) {
  auto va = Version::Parse(a);
  auto vb = Version::Parse(b);
  if (va.ok() && vb.ok() && *va != *vb) return *va < *vb;
  if (va.ok() != vb.ok()) return va.ok();
  return a < b;
}

std::string Number(double v, bool sign) {
  char buf[64];
  std::snprintf(buf, sizeof buf, sign ? "%+.4g" : "%.4g", v);
  return buf;
}

}  // namespace

ComparisonTable CompareVersions(const std::vector<EvaluationResult>& results, std::string_view model,
                                std::string_view baseline) {
  ComparisonTable t;
  t.model = model;
  // 1) The latest result per (version, dataset).
  std::map<std::pair<std::string, std::string>, const EvaluationResult*> latest;
  for (const EvaluationResult& r : results) {
    if (r.model != model) continue;
    const EvaluationResult*& cur = latest[{r.version, r.dataset}];
    if (cur == nullptr || r.finished_at > cur->finished_at) cur = &r;
  }
  // 2) Columns.
  for (const auto& [key, r] : latest) {
    if (std::find(t.versions.begin(), t.versions.end(), key.first) == t.versions.end()) t.versions.push_back(key.first);
  }
  std::sort(t.versions.begin(), t.versions.end(), VersionLess);
  t.baseline = !baseline.empty() ? std::string(baseline) : (t.versions.empty() ? "" : t.versions.front());
  auto base_col = std::find(t.versions.begin(), t.versions.end(), t.baseline);
  // 3) Rows: every (dataset, metric) any version measured.
  std::map<std::pair<std::string, std::string>, ComparisonRow> rows;
  for (size_t c = 0; c < t.versions.size(); ++c) {
    for (const auto& [key, r] : latest) {
      if (key.first != t.versions[c]) continue;
      for (const auto& [metric, value] : r->metrics) {
        ComparisonRow& row = rows[{r->dataset, metric}];
        row.dataset = r->dataset;
        row.metric = metric;
        row.values.resize(t.versions.size());
        row.values[c] = value;
      }
    }
  }
  for (auto& [key, row] : rows) {
    row.deltas.resize(t.versions.size());
    if (base_col != t.versions.end()) {
      const std::optional<double>& base = row.values[base_col - t.versions.begin()];
      for (size_t c = 0; c < row.values.size(); ++c) {
        if (base && row.values[c]) row.deltas[c] = *row.values[c] - *base;
      }
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

json ToJson(const ComparisonTable& t) {
  auto cells = [](const std::vector<std::optional<double>>& v) {
    json a = json::array();
    for (const auto& x : v) a.push_back(x ? json(*x) : json(nullptr));
    return a;
  };
  json rows = json::array();
  for (const ComparisonRow& r : t.rows) {
    rows.push_back({{"dataset", r.dataset}, {"metric", r.metric}, {"values", cells(r.values)}, {"deltas", cells(r.deltas)}});
  }
  return {{"model", t.model}, {"baseline", t.baseline}, {"versions", t.versions}, {"rows", rows}};
}

Result<ComparisonTable> ComparisonTableFromJson(const json& j) {
  if (!j.is_object()) return InvalidArgument("comparison: expected a JSON object");
  auto cells = [](const json& a, size_t n, const char* what) -> Result<std::vector<std::optional<double>>> {
    if (!a.is_array() || a.size() != n) {
      return InvalidArgument(std::string("comparison: ") + what + " must hold one cell per version");
    }
    std::vector<std::optional<double>> out;
    for (const json& x : a) {
      if (x.is_null()) {
        out.emplace_back();
      } else if (x.is_number()) {
        out.emplace_back(x.get<double>());
      } else {
        return InvalidArgument(std::string("comparison: ") + what + " cells must be numbers or null");
      }
    }
    return out;
  };
  ComparisonTable t;
  try {
    t.model = j.value("model", "");
    t.baseline = j.value("baseline", "");
    t.versions = j.value("versions", std::vector<std::string>{});
    for (const json& r : j.value("rows", json::array())) {
      ComparisonRow row;
      row.dataset = r.value("dataset", "");
      row.metric = r.at("metric").get<std::string>();
      ABACUS_ASSIGN_OR_RETURN(row.values, cells(r.value("values", json()), t.versions.size(), "values"));
      ABACUS_ASSIGN_OR_RETURN(row.deltas, cells(r.value("deltas", json()), t.versions.size(), "deltas"));
      t.rows.push_back(std::move(row));
    }
  } catch (const json::exception& e) {
    return InvalidArgument(std::string("comparison: ") + e.what());
  }
  return t;
}

std::vector<std::vector<std::string>> ToCells(const ComparisonTable& t) {
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> header = {"DATASET", "METRIC"};
  for (const std::string& v : t.versions) header.push_back(v == t.baseline ? v + " (baseline)" : v);
  out.push_back(std::move(header));
  for (const ComparisonRow& r : t.rows) {
    std::vector<std::string> line = {r.dataset, r.metric};
    for (size_t c = 0; c < r.values.size(); ++c) {
      if (!r.values[c]) {
        line.push_back("-");
        continue;
      }
      std::string cell = Number(*r.values[c], false);
      if (r.deltas[c] && t.versions[c] != t.baseline) cell += " (" + Number(*r.deltas[c], true) + ")";
      line.push_back(std::move(cell));
    }
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace abacus::control
