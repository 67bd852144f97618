// Ledger::WhatIfCycle: the scheduler's answer for workloads that are not submitted (dry runs,
// issue 23), from the same snapshot a full cycle builds.
#include "server/ledger.h"

#include <unordered_map>

namespace abacus::server {

std::vector<Ledger::WhatIf> Ledger::WhatIfCycle(const std::vector<WorkloadRecord>& candidates, Time now,
                                                const sched::SchedulerConfig& config) {
  std::vector<WhatIf> out(candidates.size());
  // 1) Every workload the ledger holds, as a full cycle sees them.
  SnapshotIndex index;
  sched::Snapshot snapshot = BuildSnapshot(now, index);
  // 2) The candidates after them: submitted now, they are last of their priority in their queues.
  std::unordered_map<std::string, size_t> candidate_of;
  for (size_t i = 0; i < candidates.size(); ++i) {
    std::string why;
    auto w = ToWorkloadInfo(candidates[i], base_queue_index_, base_node_index_, base_device_pos_, why);
    if (!w) {
      out[i].unschedulable = why;
      continue;
    }
    candidate_of[candidates[i].id] = i;
    index.workload_ids.push_back(candidates[i].id);
    snapshot.workloads.push_back(std::move(*w));
  }
  // 3) Decide, and read the candidates' part of the answer.
  sched::SchedulerConfig detailed = config;
  detailed.detailed_reasons = true;
  sched::CycleResult result = sched::Schedule(snapshot, detailed);
  for (const sched::Admission& a : result.admissions) {
    auto it = candidate_of.find(a.workload_id);
    if (it == candidate_of.end()) continue;
    WorkloadRecord placed = candidates[it->second];
    ApplyAdmission(snapshot, a, placed);
    out[it->second].admitted = true;
    out[it->second].group_flavors = placed.group_flavors;
    out[it->second].placements = placed.placements;
  }
  for (const sched::Preemption& p : result.preemptions) {
    auto it = candidate_of.find(p.preemptor_id);
    if (it == candidate_of.end()) continue;
    out[it->second].preempts.push_back(p.victim_id + " (" + std::string(sched::PreemptionReasonName(p.reason)) + ")");
  }
  for (const sched::PendingReason& r : result.pending) {
    auto it = candidate_of.find(r.workload_id);
    if (it != candidate_of.end()) out[it->second].pending = r;
  }
  return out;
}

}  // namespace abacus::server
