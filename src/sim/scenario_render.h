// How the scenario runner writes what the scheduler decided: placements, flavors, node sets and
// cycle summaries for failure messages and traces (sim/scenario_run.cc, scenario_expect.cc).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sim/scenario.h"

namespace abacus::sim::scenario_text {

// "node:dev,dev" per task placement, for messages.
std::string DescribePlacements(const sched::Snapshot& s, const std::vector<sched::TaskPlacement>& placements);
// Flavor names joined by ','.
std::string FlavorNames(const std::vector<FlavorId>& flavors);
// "node:dev,dev" per task, devices sorted, tasks sorted (comparison ignores task order).
std::vector<std::string> CanonicalPlaces(const std::vector<ScenarioTaskPlace>& places);
// The places the scheduler chose, as a scenario file writes them.
std::vector<ScenarioTaskPlace> ActualPlaces(const sched::Snapshot& s, const std::vector<sched::TaskPlacement>& placements);
// The sorted names of the nodes the placements use.
std::vector<std::string> NodeSet(const sched::Snapshot& s, const std::vector<sched::TaskPlacement>& placements);
// `v` sorted.
std::vector<std::string> Sorted(std::vector<std::string> v);
// `text` with `pad` before each line.
std::string Indent(const std::string& text, const std::string& pad);

}  // namespace abacus::sim::scenario_text
