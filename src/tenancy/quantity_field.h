// Quantity fields of specs read with their upper bound (model/quantity_limit.h).
#pragma once

#include <optional>
#include <string_view>

#include "model/quantity_limit.h"
#include "tenancy/queue.h"
#include "tenancy/yaml_reader.h"

namespace abacus {

// Returns what a quota amount of `r` measures.
QuantityUnit QuotaUnit(const QuotaResource& r);

// MapReader::Qty, and a value past QuantityLimit(unit) is reported at `key` ("must be at most 1Pi
// (the limit for memory), got 2Pi") and read as absent.
std::optional<Quantity> BoundedQty(MapReader& r, std::string_view key, QuantityUnit unit,
                                   Presence presence = Presence::kOptional, bool positive = false);

}  // namespace abacus
