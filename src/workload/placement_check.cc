#include "workload/placement_check.h"

namespace abacus {

std::string SpreadKeyProblem(std::string_view key, const std::vector<SpreadConstraint>& earlier) {
  if (key.empty()) return "expected a node label key (zone, rack, abacus.io/nvlink-domain) or node";
  for (const auto& prev : earlier) {
    if (prev.topology_key == key) return "'" + std::string(key) + "' is spread over twice; keep one entry";
  }
  return "";
}

}  // namespace abacus
