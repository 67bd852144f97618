// The scheduling cycle (DESIGN §5): a pure function from a Snapshot to decisions.
//
//   1. Build the cycle state: free-capacity indexes from the nodes, queue usage from the
//      admitted workloads (O(nodes + devices + admitted tasks)).
//   2. Order: inside a queue by effective priority (aged by maxQueueWait), then submission
//      time; across queues by head priority, then weighted dominant-resource share (flavor
//      weights make an H100 count more than a T4), kept in a heap (O(log queues) per step).
//   3. For the best queue's head: assign a flavor per task group in the queue's listed order
//      and classify it against quota (fit, borrow, preempt, no fit).
//   4. Place it (filters, scorer; all tasks or none) using the indexes (no full rescans).
//   5. If quota or placement fails: search a minimal set of preemption victims (borrowed
//      capacity first, then lower priority in the same queue; never non-preemptible work;
//      never when the workload would still not fit) and issue evictions with grace periods.
//   6. A blocked gang at the head of its queue reserves nodes; later work backfills only on
//      other nodes. A StrictFIFO queue stops at its blocked head; BestEffortFIFO moves on.
//   7. Every workload left pending gets a structured reason with numbers.
// A decision costs O(log Q + quotas + nodes visited in index order); see docs/scheduler.md.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "sched/explain.h"
#include "sched/fair_share.h"
#include "sched/order.h"
#include "sched/place.h"
#include "sched/types.h"

namespace abacus::sched {

struct Snapshot {
  Time now{};
  std::vector<NodeInfo> nodes;
  std::vector<QueueInfo> queues;
  std::vector<CohortInfo> cohorts;
  std::vector<WorkloadInfo> workloads;  // pending and admitted
  // Fair-share weight per accelerator flavor, 1000 = 1 (absent: 1).
  std::map<FlavorId, int64_t> flavor_weight_milli;
  // Node pool → tenants allowed to use it (absent or empty: every tenant).
  std::map<std::string, std::vector<std::string>> pool_tenants;
  // Declared clusters (labels for data locality); nodes may name clusters not listed here.
  std::vector<ClusterInfo> clusters;
  // Fair share that remembers (fair_share.h), one per queue in `queues` order; empty: off (the
  // half-life is 0). After guaranteed quota it orders queues whose head would borrow (higher
  // factor first, DRF breaking ties) and picks which borrower is reclaimed first.
  std::vector<QueueShare> fair_share;
  // Time-window reservations (window_reservation.h); empty: no cost at all.
  std::vector<WindowReservation> window_reservations;
};

struct SchedulerConfig {
  ScoringPolicy policy = ScoringPolicy::kBinpack;
  bool enable_preemption = true;
  bool enable_gang_reservation = true;
  // Placement explanations scan every node; cache them per request shape in one cycle.
  bool detailed_reasons = true;
  // Shapes for the FGD scorer (empty: derived from the pending workloads of the snapshot).
  std::vector<frag::WeightedShape> fgd_distribution;
  // Fair share that remembers (fair_share.h): the half-life of past usage; 0 = off. Schedule()
  // reads Snapshot::fair_share; callers keep the UsageHistory with this half-life and fill it.
  Duration fair_share_half_life{0};
};

struct CycleStats {
  int64_t attempts = 0;            // workloads tried
  int64_t admitted = 0;
  int64_t preempted = 0;
  int64_t pending = 0;
  int64_t victim_searches = 0;      // preemption target searches run (memo misses)
  int64_t victim_searches_skipped = 0;  // answered from a remembered failure
  std::vector<int64_t> decision_ns; // time per attempt, filled only when measuring
};

struct CycleResult {
  std::vector<Admission> admissions;
  std::vector<Preemption> preemptions;
  std::vector<PendingReason> pending;   // one per workload left pending
  std::vector<Reservation> reservations;
  CycleStats stats;
};

// Runs one scheduling cycle over `snapshot`; the snapshot is not modified. With
// `measure` set, records the wall time of each attempt in stats.decision_ns (for benchmarks).
CycleResult Schedule(const Snapshot& snapshot, const SchedulerConfig& config, bool measure = false);

// Returns the quota usage of one admitted/assigned workload: cpu, memory and milli-devices of
// each group's flavor, summed over tasks, less its own quota grant (never below zero).
ResourceVector WorkloadUsage(const WorkloadInfo& w, const std::vector<FlavorId>& group_flavors);

}  // namespace abacus::sched
