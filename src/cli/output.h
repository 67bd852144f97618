// Output of the client verbs: aligned tables, JSON, YAML, and times for people.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace abacus::cli {

// Prints `rows` under `headers`, columns padded to their widest cell, two spaces apart.
void PrintTable(std::ostream& out, const std::vector<std::string>& headers,
                const std::vector<std::vector<std::string>>& rows);
// Prints `j` as indented JSON or block YAML (format "json" or "yaml").
void PrintDocument(std::ostream& out, const nlohmann::json& j, const std::string& format);
// Returns "just now", "42s ago", "3m ago", "5h ago", "2d ago" for a time `micros` since the epoch
// relative to now; "-" for 0.
std::string HumanAgo(int64_t micros);
// Returns "3m12s"-style age since `micros`; "-" for 0.
std::string HumanAge(int64_t micros);
// Formats ledger amounts: milli-devices as "8" or "0.5", bytes as "64Gi", millicores as cores.
std::string Devices(int64_t milli);
std::string Cores(int64_t milli);
std::string Bytes(int64_t bytes);
// Returns a node's extended resources as "rdma/hca 2/4, ephemeral-storage 400Gi/500Gi" (held of
// all, from a node document's allocatedExtended and extended); "-" when it has none.
std::string ExtendedUsedOfAll(const nlohmann::json& node);

}  // namespace abacus::cli
