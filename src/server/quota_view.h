// What a POC reader needs to see of queues and pools (issue 19.6), computed once here and shown
// by `abacus get queues|pools`, GET /api/v1/queues|pools and the dashboard: per queue and
// resource who it borrows from and lends to now (meter::BorrowingNow, the rule of the borrowing
// report), and per pool the tenants whose work may run on it.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "meter/report_inputs.h"
#include "server/ledger.h"

namespace abacus::server {

// Returns every queue's quotas as the borrowing rule reads them (amounts in ledger units);
// `devices_only`: accelerator flavors alone (the metered borrowing report), else CPU and memory too.
std::vector<meter::QueueQuota> BorrowingQuotas(const TenancyConfig& config, bool devices_only);

// Adds to every entry of each queue's "usage" ([{resource, used, nominal}], ledger units):
// "borrowed" and "borrowedFrom" [{queue, amount}], "lent" and "lentTo" [{queue, amount}]; a
// lender "(cohort)" stands for capacity no queue's lendable quota covers.
void AddBorrowingNow(const TenancyConfig& config, nlohmann::json& queue_items);

// Adds to each pool object of `pool_items` "tenantsAllowed" (the tenants the pool and the
// tenants' own pool lists let in), "nodes" (agent and simulated nodes in it) and, for pools
// that nodes name but no Pool object declares, an entry {"name", "declared": false}.
void AddPoolTenants(const Ledger& ledger, nlohmann::json& pool_items);

}  // namespace abacus::server
