// A service's reservation pool as the user sees it: which replicas run outside the pool
// (spec.reservation.overflow: Allow let the scheduler put them there when the pool was full;
// sched/place.h places them), for events, status and explain.
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "server/ledger.h"
#include "server/records.h"
#include "store/store.h"

namespace abacus::server {

// Returns the reservation pool of InferenceService `r` ("" when it has none).
const std::string& ReservationPool(const WorkloadRecord& r);

// Returns the units (replicas) of `r` with a task on a node outside its reservation pool;
// empty without one. A node the ledger no longer has counts as outside.
std::set<int32_t> UnitsOutsidePool(const WorkloadRecord& r, const Ledger& ledger);

// Returns the one-line account "2 of 12 replica(s) run outside reservation pool infer
// (overflow: Allow)", or "" when every replica runs inside it (or there is no pool).
std::string OutsidePoolLine(const WorkloadRecord& r, const Ledger& ledger);

// Stages event ReplicaOutsidePool on `r` in `batch` when any of `units` runs outside its
// reservation pool (details: pool, units, outside, placed, overflow); nothing otherwise.
void StageOutsidePoolEvent(const WorkloadRecord& r, const std::set<int32_t>& units, const Ledger& ledger,
                           WriteBatch& batch, Time now);

}  // namespace abacus::server
