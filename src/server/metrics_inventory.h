// The inventory and queue families of GET /metrics: devices and nodes by cluster, pool, flavor
// and state, quota limits and cohort totals, pending work by reason (docs/metrics.md).
#pragma once

#include <string>

#include "common/clock.h"
#include "server/ledger.h"

namespace abacus::server {

// Appends those families to `out`, read from `ledger` (the caller holds the state lock) at `now`.
void RenderInventoryMetrics(const Ledger& ledger, Time now, std::string& out);

}  // namespace abacus::server
