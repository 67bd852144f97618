// The "preemptions" journal the evidence report reads ("Reclaim and preemption actions"): one
// entry each time a workload gives back what it holds not by its own end — a scheduler
// preemption (Reclaim, Priority, …) or a controller's reclaim (an idle experiment, an expired
// temporary quota, an experiment's TTL). One writer for both, so neither is missed.
#pragma once

#include <string>
#include <string_view>

#include "common/clock.h"
#include "server/records.h"
#include "store/store.h"

namespace abacus::server {

// Appends to `batch` the entry for workload `r` giving back what it holds at `now`, for
// `reason`, to `by` (the preemptor's id and queue; both empty for a reclaim nobody asked for).
void AppendPreemption(WriteBatch& batch, const WorkloadRecord& r, std::string_view reason, const std::string& by,
                      const std::string& by_queue, Time now);

// The journal's reason for a controller's reclaim ending in `reason` (a SetState's reason):
// "Idle" for IdleReclaimed, else `reason` itself.
std::string ReclaimReason(std::string_view reason);

}  // namespace abacus::server
