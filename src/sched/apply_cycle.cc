#include "sched/apply_cycle.h"

#include <string_view>
#include <unordered_set>

#include "sched/claims.h"

namespace abacus::sched {

void ApplyCycle(const CycleResult& result, Snapshot* snapshot) {
  std::vector<WorkloadInfo>& workloads = snapshot->workloads;
  for (const Admission& a : result.admissions) NoteAdmission(&workloads[a.workload], a, snapshot->now);
  for (const Preemption& p : result.preemptions) {
    WorkloadInfo& victim = workloads[p.victim];
    if (!victim.evicting) NotePreemption(&victim, p, snapshot->now);
  }
  // Claims end (one pass, not one per admission: a simulator's snapshot holds every admitted workload).
  if (result.admissions.empty()) return;
  std::unordered_set<std::string_view> started;
  for (const Admission& a : result.admissions) started.insert(a.workload_id);
  for (WorkloadInfo& w : workloads) {
    if (!w.yields_to.empty() && started.count(w.yields_to) != 0) w.yields_to.clear();
  }
}

}  // namespace abacus::sched
