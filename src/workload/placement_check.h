// The rules a task group's placement fields follow wherever they are written: workload specs
// (workload_decode.cc) and the simulator's generic trace (sim/generic_trace.cc) check with these.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "workload/workload.h"

namespace abacus {

// The largest maxPerNode and maxSkew a placement rule may give.
inline constexpr int32_t kMaxPlacementLimit = 100'000;

// Returns why a spread rule over node label `key` cannot follow the rules `earlier` of the same
// group (no key; a key spread over twice); empty when it can.
std::string SpreadKeyProblem(std::string_view key, const std::vector<SpreadConstraint>& earlier);

}  // namespace abacus
