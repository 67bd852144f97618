// Sane upper bounds for quantities in specs, per kind of amount: far above any cluster, and low
// enough that sums over many objects stay inside the ledger's 64-bit integers.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "model/quantity.h"

namespace abacus {

// What a quantity in a spec measures.
enum class QuantityUnit : uint8_t { kCount, kCpu, kMemory, kDevices };

// Returns the largest value a spec may give a quantity of `unit`: cpu 10,000,000 cores, memory
// 1Pi bytes, devices 1,000,000, other amounts (weights, metric targets) 1,000,000,000.
Quantity QuantityLimit(QuantityUnit unit);

// Returns OutOfRange "must be at most 1Pi (the limit for memory), got 2Pi" when `q` exceeds the
// limit of `unit` (or its negative); OK otherwise.
Status CheckQuantityLimit(const Quantity& q, QuantityUnit unit);

}  // namespace abacus
