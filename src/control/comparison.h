// The side-by-side comparison of one model's evaluations across versions (abacus get
// evaluations --model M): rows are dataset × metric, columns versions in version order, each
// cell with its delta against the baseline version.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "control/evaluation.h"

namespace abacus::control {

struct ComparisonRow {
  std::string dataset;
  std::string metric;
  std::vector<std::optional<double>> values;  // one per version; nullopt: not measured
  std::vector<std::optional<double>> deltas;  // value − baseline's, where both exist
};

struct ComparisonTable {
  std::string model;
  std::string baseline;               // the version deltas are against
  std::vector<std::string> versions;  // ascending (dotted numbers compare as numbers)
  std::vector<ComparisonRow> rows;    // by dataset, then metric
};

// Builds the table of `model` from `results` (other models skipped; for one version and
// dataset the latest finished wins). `baseline` defaults to the lowest version; a baseline
// with no result gives no deltas.
ComparisonTable CompareVersions(const std::vector<EvaluationResult>& results, std::string_view model,
                                std::string_view baseline = "");

// Returns {model, baseline, versions, rows: [{dataset, metric, values, deltas}]} (null cells
// for nullopt).
nlohmann::json ToJson(const ComparisonTable& t);
// Reads what ToJson wrote (the CLI reads the server's table); InvalidArgument naming the
// problem, e.g. a row whose values do not match the versions.
Result<ComparisonTable> ComparisonTableFromJson(const nlohmann::json& j);

// Returns the table as text cells for the CLI: a header row (DATASET, METRIC, one per
// version) then a row per metric; cells "0.712", "0.746 (+0.034)" or "-".
std::vector<std::vector<std::string>> ToCells(const ComparisonTable& t);

}  // namespace abacus::control
