// Internal: the kind-specific parts of a workload's `spec:` (used by workload_decode.cc).
#pragma once

#include <string_view>
#include <vector>

#include "tenancy/yaml_reader.h"
#include "workload/workload.h"

namespace abacus::internal {

// The spec keys every kind accepts.
const std::vector<std::string_view>& CommonSpecKeys();
// The spec keys only `kind` accepts.
const std::vector<std::string_view>& KindSpecKeys(WorkloadKind kind);
// Reads the kind-specific fields of `spec` (already checked for unknown keys) into a KindSpec.
KindSpec DecodeKindSpec(WorkloadKind kind, MapReader& spec, const WorkloadSpec& common);

}  // namespace abacus::internal
