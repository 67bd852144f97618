// Service endpoints for people (`abacus get endpoints`, `abacus describe workload`): one row per
// replica a gateway may route to (GET /api/v1/services/{SERVICE}/endpoints, docs/api.md).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace abacus::cli {

// Prints the endpoints of each answer in `answers` (a list of GET …/endpoints bodies) as one
// table: SERVICE REPLICA ADDRESS VERSION READY STATE TASK; `indent` prefixes every line.
void PrintEndpoints(const nlohmann::json& answers, std::ostream& out, const std::string& indent = "");

}  // namespace abacus::cli
