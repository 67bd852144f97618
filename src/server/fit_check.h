// Whether a submission can ever run, answered at submit time (issue 20.13): the scheduler's own
// NeverFits rule run on the inventory and quota of the last cycle, off the scheduling loop.
//
// The loop publishes one FitChecker per generation of nodes and configuration (Ledger::
// RebuildBase); submissions read it from any thread. A check runs sched::Schedule on the published
// nodes, queues and cohorts with the one workload alone: NeverFits depends on nothing else (the
// largest node, every device of a flavor, what the queue could ever hold, the constraints no node
// meets), so the answer is the one the cycle will give. Verdicts are remembered per request shape.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/mutex.h"
#include "model/flavor.h"
#include "sched/scheduler.h"
#include "server/records.h"
#include "tenancy/tenancy_config.h"

namespace abacus::server {

class FitChecker {
 public:
  // `base`: the nodes, queues and cohorts of one generation, without workloads.
  FitChecker(sched::Snapshot base, std::map<std::string, int> queue_index, std::vector<Flavor> flavors,
             std::shared_ptr<const TenancyConfig> config);

  // Returns why `record` (a workload not yet admitted) can never run here, in the scheduler's
  // words ("never fits: needs 24 …"); empty when it may run, or when this generation cannot tell
  // (its queue or priority class is newer than the checker). Thread-safe.
  std::string NeverFits(const WorkloadRecord& record, const sched::SchedulerConfig& config) const;

 private:
  std::map<std::string, int> queue_index_;
  std::vector<Flavor> flavors_;
  std::shared_ptr<const TenancyConfig> config_;
  mutable Mutex mu_;
  mutable sched::Snapshot world_ GUARDED_BY(mu_);  // workloads empty between checks
  mutable std::unordered_map<std::string, std::string> verdicts_ GUARDED_BY(mu_);  // request shape → reason
};

// The warning a submission's answer gives for NeverFits' reason `never`: "NeverFits: " and the
// reason without its "never fits: ".
std::string NeverFitsWarning(std::string never);

}  // namespace abacus::server
