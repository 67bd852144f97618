#include "sched/invariants.h"

#include <algorithm>
#include <set>

namespace abacus::sched {

Status CheckInvariants(const Snapshot& s, const CycleResult& result) {
  ClusterState cluster(s.nodes);
  QuotaState quota(s.queues, s.cohorts);
  std::vector<std::string> pools;
  std::vector<int32_t> node_pool = NodePoolIds(s.nodes, &pools);
  auto open = QueuePoolAccess(s.queues, pools, s.pool_tenants);
  Placer filters(cluster, node_pool, open, ScoringPolicy::kBinpack);
  filters.SetClusterRules(s.queues, s.clusters);

  // `admitted_earlier`: work that was already running keeps its place when the node was cordoned,
  // drained, relabelled or a device failed since (the health rule and the operator verbs allow
  // it); only the cycle's new admissions must pass the placement filters and usable devices.
  auto apply = [&](const WorkloadInfo& w, const std::vector<FlavorId>& flavors,
                   const std::vector<TaskPlacement>& placements, bool admitted_earlier) -> Status {
    size_t tasks = 0;
    for (const auto& g : w.groups) tasks += static_cast<size_t>(g.replicas);
    if (placements.size() != tasks) {
      return Internal(w.id + ": " + std::to_string(placements.size()) + " of " + std::to_string(tasks) +
                      " tasks placed (all or nothing broken)");
    }
    std::set<std::pair<int32_t, int32_t>> seen;
    for (const auto& p : placements) {
      if (!seen.insert({p.group, p.replica}).second) return Internal(w.id + ": task placed twice");
      if (!cluster.CanAllocate(p)) {
        return Internal(w.id + ": placement on " + s.nodes[p.node].name + " exceeds free capacity (double allocation)");
      }
      const TaskRequest& t = w.groups[p.group].task;
      FlavorId f = p.group < static_cast<int32_t>(flavors.size()) ? flavors[p.group] : kCpuFlavorId;
      FilterReason excluded = admitted_earlier ? FilterReason::kCount : filters.StaticFilter(p.node, w.queue, t, f);
      if (excluded == FilterReason::kReservedPool && t.pool_overflow) excluded = FilterReason::kCount;  // overflow
      if (excluded != FilterReason::kCount) {
        return Internal(w.id + ": placed on " + s.nodes[p.node].name + " which its filters exclude");
      }
      int64_t milli = 0;
      for (const auto& d : p.devices) {
        if (!admitted_earlier && !cluster.device_usable(p.node, d.device)) {
          return Internal(w.id + ": placed on an unusable device");
        }
        if (d.milli != 1000 && t.share_milli == 0) return Internal(w.id + ": whole-device task given a share");
        if (s.nodes[p.node].devices[d.device].flavor != flavors[p.group]) return Internal(w.id + ": device of the wrong flavor");
        milli += d.milli;
      }
      if (t.needs_devices() && milli != t.device_milli()) return Internal(w.id + ": granted device milli differs from request");
      cluster.Allocate(p);
    }
    ResourceVector usage = WorkloadUsage(w, flavors);
    quota.Add(w.queue, usage, w.borrowed_only);
    return Status::OK();
  };

  for (const auto& w : s.workloads) {
    if (w.admitted) ABACUS_RETURN_IF_ERROR(apply(w, w.group_flavors, w.placements, true));
  }
  // New admissions honour time-window reservations too (work admitted before a window keeps
  // running there, so only from here on).
  if (!s.window_reservations.empty()) {
    filters.SetReservations(ReservationGate(s.nodes, s.queues, s.window_reservations, s.now));
  }
  std::set<std::string> admitted;
  for (const auto& a : result.admissions) {
    const WorkloadInfo& w = s.workloads[a.workload];
    if (w.admitted) return Internal(w.id + ": admitted twice");
    if (!admitted.insert(w.id).second) return Internal(w.id + ": admitted twice in one cycle");
    filters.PrepareFor(w);
    ABACUS_RETURN_IF_ERROR(apply(w, a.group_flavors, a.placements, false));
    std::set<std::string> clusters;
    for (const auto& p : a.placements) clusters.insert(s.nodes[p.node].cluster);
    if (clusters.size() > 1) return Internal(w.id + ": placed across clusters (a workload's tasks share one cluster)");
  }
  // Quota limits after the cycle's admissions. Limits can be exceeded by work admitted earlier
  // under other quotas (an admin lowered them); new admissions must not add to an excess.
  for (QueueIndex q = 0; q < static_cast<QueueIndex>(s.queues.size()); ++q) {
    for (const auto& e : s.queues[q].quotas) {
      int64_t used = quota.used(q, e.resource);
      if (e.borrowing_limit && used > e.nominal + *e.borrowing_limit) {
        bool new_here = false;
        for (const auto& a : result.admissions) {
          if (s.workloads[a.workload].queue == q) new_here = true;
        }
        if (new_here) {
          return Internal("queue " + s.queues[q].name + " uses " + std::to_string(used) + " of " +
                          e.resource.ToString() + ", above nominal + borrowing limit " +
                          std::to_string(e.nominal + *e.borrowing_limit));
        }
      }
      if (s.queues[q].cohort == kNone && used > e.nominal && !result.admissions.empty()) {
        bool new_here = false;
        for (const auto& a : result.admissions) {
          if (s.workloads[a.workload].queue == q) new_here = true;
        }
        if (new_here) return Internal("queue " + s.queues[q].name + " without a cohort exceeds its nominal quota");
      }
      if (s.queues[q].cohort != kNone && quota.PoolFree(q, e.resource) < 0 && !result.admissions.empty()) {
        return Internal("lending pool of queue " + s.queues[q].name + "'s cohort overdrawn on " +
                        e.resource.ToString() + ": a lender is below nominal - lending limit");
      }
    }
  }
  // Placement rules: the cycle's admissions add no maxPerNode, anti-affinity or spread violation.
  const bool ruled = std::any_of(s.workloads.begin(), s.workloads.end(), [](const WorkloadInfo& w) {
    return std::any_of(w.groups.begin(), w.groups.end(), [](const TaskGroupRequest& g) { return !g.rules.empty(); });
  });
  if (ruled && !result.admissions.empty()) {
    std::vector<WorkloadInfo> after = s.workloads;
    for (const auto& a : result.admissions) {
      after[a.workload].admitted = true;
      after[a.workload].placements = a.placements;
    }
    RuleViolations was = CountRuleViolations(s.nodes, s.workloads);
    RuleViolations now = CountRuleViolations(s.nodes, after);
    if (now.max_per_node > was.max_per_node || now.anti_affinity > was.anti_affinity || now.spread > was.spread) {
      return Internal("placement rules broken by this cycle's admissions: " +
                      (now.examples.empty() ? std::string("?") : now.examples.front()));
    }
  }
  for (const auto& p : result.preemptions) {
    const WorkloadInfo& v = s.workloads[p.victim];
    if (!v.preemptible) return Internal("non-preemptible " + v.id + " preempted");
    if (!v.admitted) return Internal("pending " + v.id + " preempted");
  }
  return Status::OK();
}

}  // namespace abacus::sched
