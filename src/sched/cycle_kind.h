// The cycle-kind policy (docs/scheduler.md "Which workloads a cycle tries"): when the scheduling
// loop runs a full, a bounded or a fresh cycle, which waiting workloads each kind tries, and the
// queue order a bounded cycle takes them in. One copy for the server's loop and the event
// simulator (sim/events_run.cc). Pure: the callers bring the times and costs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/clock.h"

namespace abacus::sched {

enum class CycleKind : uint8_t {
  kFresh,    // only what arrived since the last cycle: the others were tried on the same capacity and parked
  kBounded,  // capacity was freed: the first waiting workloads of each queue (only they can use it)
  kFull,     // every waiting workload
};

// Returns "fresh", "bounded" or "full".
std::string_view CycleKindName(CycleKind kind);

// Returns the kind of the next cycle: full when one was asked for (a command, a requeue, an aging
// step that matters, the timer), else bounded when capacity was freed since the last cycle, else
// fresh.
CycleKind ChooseCycleKind(bool full_requested, bool capacity_freed);

// Which waiting workloads a cycle tries. Gangs holding nodes, and the waiting preemptors of
// workloads in the cycle, are in every cycle besides (sched/types.h `holding`, sched/claims.h).
struct CycleScope {
  size_t per_queue = 0;           // the first this many of each queue in BoundedOrderKey order (SIZE_MAX: all)
  bool arrivals = false;          // each workload that arrived since the last cycle
  bool strict_fifo_mates = false; // every waiting workload of a StrictFIFO queue an arrival joined (its head blocks them)
};

// Returns what a cycle of `kind` tries; `bounded_per_queue` is the per-queue limit of a bounded one.
CycleScope ScopeOf(CycleKind kind, size_t bounded_per_queue);

// Returns the time between two full cycles on the timer: `interval`, or 20 × the last full
// cycle's cost when that is more (the timer's cycles stay under 5% of the loop).
Duration FullCycleGap(Duration interval, Duration last_full_cycle_cost);

// Returns whether the timer asks for a full cycle at `now`, the last one having run at `last_full`.
bool FullCycleDue(Time now, Time last_full, Duration interval, Duration last_full_cycle_cost);

// Returns the least time between a change and the cycle for it: `min_gap`, or 4 × the last
// cycle's cost when that is more (so that a big ledger does not starve ingestion).
Duration CoalescingGap(Duration min_gap, Duration last_cycle_cost);

// A waiting workload's place in its queue for a bounded cycle: higher base priority first (no
// aging; the server's operator-set priority, else its class's value), then earlier submission,
// then `tie` (its id, or a rank that orders as the ids do).
template <typename Tie>
struct BoundedOrderKey {
  int32_t priority = 0;
  Time submitted{};
  Tie tie{};
  bool operator<(const BoundedOrderKey& o) const {
    if (priority != o.priority) return priority > o.priority;
    if (submitted != o.submitted) return submitted < o.submitted;
    return tie < o.tie;
  }
};

}  // namespace abacus::sched
