// Invariants of a cycle's outcome, checked by tests, property tests and debug builds:
//   - no device or share allocated twice (nor CPU/memory beyond a node);
//   - no queue above nominal + borrowing limit;
//   - no lender squeezed below nominal − lending limit (the lending pool is never overdrawn);
//   - gang all-or-nothing (every admission places every task of every group);
//   - placements honour the static filters (ready node, pool, selector, taints, runtime);
//   - admissions break no placement rule (maxPerNode, spread, anti-affinity) that was kept before.
#pragma once

#include "common/status.h"
#include "sched/scheduler.h"

namespace abacus::sched {

// Applies `result`'s admissions on top of `snapshot`'s admitted workloads and checks every
// invariant; returns Internal naming the first one broken.
Status CheckInvariants(const Snapshot& snapshot, const CycleResult& result);

}  // namespace abacus::sched
