// The server's half of an Evaluation's results (docs/controllers.md §0): the agent uploads the
// results file a task wrote with its Exited report (kept on the placement); CollectResults turns
// the workload's results into an EvaluationResult with the resources its run used, archived in
// the store under kind "evaluation" (key: the workload id), and an event.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.h"
#include "control/decision.h"
#include "control/evaluation.h"
#include "server/records.h"

namespace abacus::server {

// Store kind of archived evaluation results.
inline constexpr char kEvaluationKind[] = "evaluation";
// The largest results file the server keeps (the agent sends no more either).
inline constexpr size_t kMaxResultsBytes = 256 * 1024;

// What applying CollectResults to a workload gives.
struct CollectedResults {
  control::Event event;                  // ResultsArchived/ResultsCollected, ResultsInvalid or ResultsMissing
  std::optional<nlohmann::json> archive;  // the document to store, when the results are valid and archived
};

// Returns the file name the agent reads first for `results_path` (an Evaluation's
// spec.resultsPath): its last path component, "" when it has none.
std::string ResultsFileOf(std::string_view results_path);

// Returns what `w`'s current attempt used: the flavor of its first accelerator group ("cpu"
// when none), device- and CPU-core-seconds (each task's grant × its run time, started →
// finished, or `now` while it runs) and wall seconds (first start → last end).
control::ResourceUsage UsageOf(const WorkloadRecord& w, Time now);

// Applies CollectResults `d` to Evaluation `w` at `now`: the results of its first task (by
// group, then replica) that uploaded any are parsed (control::BuildEvaluationResult); valid
// ones come back as the archive document when `d.archive`. No results at all: ResultsMissing.
CollectedResults CollectEvaluationResults(const WorkloadRecord& w, const control::CollectResults& d, Time now);

// Returns the stored form of `r`: control::ToJson(r) plus the workload's name, project and
// spec.baselineVersion (lists are filtered by project; the comparison's default baseline).
nlohmann::json ArchiveDocument(const WorkloadRecord& w, const control::EvaluationResult& r);

}  // namespace abacus::server
