// The one translation of the tenancy configuration (cohorts, queues, flavor weights, pools,
// clusters) into the scheduler's input: the server's ledger, the event simulator and anything
// else that schedules from a TenancyConfig run this (issue 22: one copy of each rule).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sched/scheduler.h"
#include "tenancy/tenancy_config.h"

namespace abacus::sched {

// The scheduler's key of a quota resource (cpu, memory, or devices of one flavor).
ResourceKey QuotaKey(const QuotaResource& r);
// A queue's or cohort's quota entry in the scheduler's units (milli-cpu, bytes, milli-devices).
QuotaInfo ToQuotaInfo(const Quota& q);

// A kind Reservation in the scheduler's terms.
WindowReservation ToWindowReservation(const ReservationConfig& r);

// Appends `config`'s cohorts and queues (in the configuration's order), flavor weights, pools with
// their tenants, clusters and reservations to `snapshot`; fills `queue_index` (name → position) when given.
// A queue's cohort or a cohort's parent that the configuration lacks is left out and named in
// the returned problems ("queue q: unknown cohort c"): the simulator refuses such a
// configuration, the server (which checked references at apply) logs them.
std::vector<std::string> AddTenancy(const TenancyConfig& config, Snapshot* snapshot,
                                    std::map<std::string, int>* queue_index = nullptr);

// Gives `w` what its priority class decides: priority, preemptibility, borrowing only, aging and
// the class's queue-wait tolerance (a workload's own tolerance, applied after, takes precedence).
void ApplyPriorityClass(const PriorityClass& pc, WorkloadInfo* w);

}  // namespace abacus::sched
