// Renderings of packing-mode results: the JSON the issue fixes, a table for people, CSV rows and
// an SVG chart (allocation ratio and fragmentation ratio vs arrived demand, one line per policy).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/packing.h"

namespace abacus::sim {

// {"policies": {"fgd": {"curve": [{"arrived_pct": 1, "gpu_alloc_pct": …, "frag_pct": …,
// "frag_ratio_pct": …}, …], "seconds": …}, …}} with policies in the order given. Percentages are
// rounded to 4 decimals, seconds to 3.
nlohmann::ordered_json PackingJson(const std::vector<PackingSummary>& results);

// One row per policy: seeds, mean arrivals and skipped pods, allocation % at 50/80/90/100/110/
// 120/130% arrived demand (those reached), fragmentation and its ratio at 100%, seconds.
std::string PackingTable(const std::vector<PackingSummary>& results);

// "policy,arrived_pct,gpu_alloc_pct,frag_pct,frag_ratio_pct" then one row per point.
std::string PackingCsv(const std::vector<PackingSummary>& results);

// Two panels: GPU allocation ratio and fragmentation ratio vs arrived demand.
std::string PackingSvg(const std::string& title, const std::vector<PackingSummary>& results);

}  // namespace abacus::sim
