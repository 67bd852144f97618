// The rule for an amount of an extended resource that one task requests, wherever it is written:
// a workload spec's resources.extended and the simulator's generic trace both parse with it.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/status.h"
#include "model/extended_resource.h"

namespace abacus {

// Parses the amount of `resource` one task requests: ExtendedResource::ParseAmount, above zero and
// within the quantity limit (bytes for storage, counts otherwise). InvalidArgument naming the
// resource otherwise ("rdma/hca: must be positive, got 0").
Result<int64_t> ParseExtendedRequest(const ExtendedResource& resource, std::string_view text);

}  // namespace abacus
