// `abacus describe` for people (docs/cli.md "describe"): ages and durations ("3m12s", "2d ago"),
// memory in GiB, a workload's tasks (every task that ran: node, attempt, phase, exit code,
// start, finish, duration) and events, a node's devices with the workloads holding them. Raw
// fields stay in `-o yaml` / `-o json`.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>

namespace abacus::cli {

class ApiClient;

// "3m12s", "2h05m", "1d04h" for a span of `micros`; "-" when negative.
std::string HumanDuration(int64_t micros);
// "80 GiB", "512 MiB", "1.5 GiB".
std::string HumanBytes(int64_t bytes);
// Prints workload `doc` (GET /workloads/{W}) with its tasks, explanation and events.
void DescribeWorkload(ApiClient& api, const nlohmann::json& doc, std::ostream& out);
// Prints node `doc` (GET /nodes/{N}) with its devices and their holders.
void DescribeNode(ApiClient& api, const nlohmann::json& doc, std::ostream& out);

}  // namespace abacus::cli
