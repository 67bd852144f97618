// The inventory and queue families of GET /metrics: devices and nodes by cluster, pool, flavor
// and state, quota limits and cohort totals, pending work by reason (docs/metrics.md).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "common/clock.h"
#include "server/ledger.h"

namespace abacus::server {

// Quota in use per (queue, resource name), in ledger units: cpu milli, memory bytes, device milli.
using QuotaUse = std::map<std::pair<std::string, std::string>, int64_t>;

// A quota or usage in the unit people read: cores, bytes, devices.
std::string NaturalQuantity(const QuotaResource& r, int64_t ledger_units);

// Appends those families to `out`, read from `ledger` (the caller holds the state lock) at `now`;
// `used` is what admitted work holds (RenderMetrics counts it once for every family).
void RenderInventoryMetrics(const Ledger& ledger, const QuotaUse& used, Time now, std::string& out);

// Appends abacus_inference_replicas (desired/min/max/placed/ready per live InferenceService) read
// from `ledger` (the caller holds the state lock).
void RenderServiceMetrics(const Ledger& ledger, std::string& out);

}  // namespace abacus::server
