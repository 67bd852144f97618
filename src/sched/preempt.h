// Preemption target search (after Kueue's GetTargets): a pure search over the cycle state for
// the smallest set of victims whose eviction lets a workload fit, by quota and by placement.
// It never issues anything; the cycle turns its answer into Preemption decisions.
#pragma once

#include <string>
#include <vector>

#include "sched/cluster_state.h"
#include "sched/place.h"
#include "sched/quota.h"
#include "sched/types.h"

namespace abacus::sched {

struct VictimCandidate {
  WorkloadIndex workload = kNone;
  PreemptionReason reason = PreemptionReason::kMakeRoom;
};

struct VictimSearchResult {
  bool found = false;
  std::vector<VictimCandidate> victims;
  std::string why_not;  // when !found: why preemption cannot help, with numbers
};

// The state a search reads and temporarily changes (always restored before returning).
struct PreemptionContext {
  const std::vector<WorkloadInfo>& workloads;
  const std::vector<ResourceVector>& usage;          // quota usage per admitted workload
  const std::vector<std::vector<WorkloadIndex>>& running;  // admitted, per queue
  const std::vector<int32_t>& effective_priority;
  // Per queue: the lowest priority of its preemptible admitted workloads (INT32_MAX if none);
  // lets a search skip whole queues without looking at their workloads.
  const std::vector<int32_t>& min_preemptible_priority;
  const std::vector<uint8_t>& excluded;             // already victims or evicting
  const std::vector<WorkloadIndex>& leaving;        // the excluded ones of the preemptor's cohort tree
  const std::vector<WorkloadIndex>& reserved_by;
  ClusterState& cluster;
  QuotaState& quota;
  Placer& placer;
  // Per queue: its fair-share factor (fair_share.h); null when fair share is off. Among borrowers
  // of equal priority, the queue with the lowest factor is reclaimed first.
  const std::vector<double>* fair_factor = nullptr;
};

// Finds victims for `preemptor` with `flavors` (one per group) and quota `usage`:
//   1. candidates: preemptible admitted workloads that are either borrowing in another queue
//      of the same cohort tree (reclaim; priority at most the preemptor's, strictly lower when
//      the preemptor itself would borrow) or in the preemptor's queue with lower priority; for a
//      reserved preemptor (WorkloadInfo::reserved) within its nominal quota, also any workload of
//      lower priority in any queue that is not reserved itself (MakeRoom);
//   2. ordered borrowed-first, then lowest priority, then (borrowers) lowest fair-share factor,
//      then newest;
//   3. evicted one by one in the copy until the preemptor fits by quota and by placement —
//      if even all of them do not suffice, nothing is preempted;
//   4. minimized: each victim but the last is given back if the preemptor still fits.
VictimSearchResult FindVictims(PreemptionContext& ctx, WorkloadIndex preemptor,
                               const std::vector<FlavorId>& flavors, const ResourceVector& usage);

}  // namespace abacus::sched
