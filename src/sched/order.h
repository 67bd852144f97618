// Ordering (after Mesos' Sorter): which queue goes next, and in which order a queue's pending
// workloads are tried.
//   - Inside a queue: effective priority (aged by maxQueueWait), then submission time, then id.
//   - Across queues: a Sorter gives each queue a share; lower share goes first among heads of
//     equal priority. DrfSorter is weighted dominant-resource fairness with flavor weights.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "common/clock.h"
#include "model/resources.h"
#include "sched/types.h"

namespace abacus::sched {

// Returns the effective priority of `w` at `now`: base priority plus aging_step for each full
// max_queue_wait period waited, never above max(priority, priority_ceiling). Aging stops at
// admission: an admitted workload keeps the priority it was admitted with (so that a workload
// aged into a place is not evicted at once by the one it displaced, which ages the same way).
int32_t EffectivePriority(const WorkloadInfo& w, Time now);

// Returns true when pending workload `a` goes before `b` in their queue.
bool BeforeInQueue(const WorkloadInfo& a, int32_t a_priority, const WorkloadInfo& b, int32_t b_priority);

// Cluster totals a sorter measures shares against.
struct ClusterTotals {
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  std::vector<int64_t> device_milli;  // by FlavorId
};

class Sorter {
 public:
  virtual ~Sorter() = default;
  // Returns the share of a queue that uses `usage` with fair-share weight `weight_milli`;
  // lower shares are served first.
  virtual double Share(const ResourceVector& usage, int64_t weight_milli) const = 0;
};

// Weighted DRF: the largest of cpu/total, memory/total and the weighted accelerator value
// Σ used × weight / Σ capacity × weight, divided by the queue weight. Flavor weights (1000 = 1)
// make an H100 count more than a T4.
class DrfSorter final : public Sorter {
 public:
  DrfSorter(ClusterTotals totals, std::vector<int64_t> flavor_weight_milli);
  double Share(const ResourceVector& usage, int64_t weight_milli) const override;

 private:
  ClusterTotals totals_;
  std::vector<int64_t> weight_;  // by FlavorId, milli
  double weighted_capacity_ = 0;
};

}  // namespace abacus::sched
