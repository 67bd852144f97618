// The placement rules and extended-resource capacity of an event replay checked from its own
// placements: what the trace asks (maxPerNode, spread, antiAffinity, extended requests) against
// where the replay started each workload, independent of what the scheduler was told (with
// EventSimOptions::placement_rules off it was told none of it).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "sched/types.h"

namespace abacus::sim {

// Violations counted at starts (docs/simulator.md §5).
struct ReplayViolations {
  int64_t max_per_node = 0;   // one per (start, group, node) above maxPerNode
  int64_t spread = 0;         // one per (start, group, topology key) whose skew is above maxSkew
  int64_t anti_affinity = 0;  // one per (start, node, service) where the start shares a node with a service a rule keeps apart
  int64_t extended = 0;       // one per (start, node, resource) where running tasks hold more than the node has
  int64_t total() const { return max_per_node + spread + anti_affinity + extended; }
};

class ReplayRuleTally {
 public:
  // Tallies over `nodes` (their extended capacity is what the trace declares).
  explicit ReplayRuleTally(const std::vector<sched::NodeInfo>& nodes);

  // Counts what job `job` breaks by starting with `placements`, then holds its tasks. `w` is the
  // workload as the trace states it (its rules and requests).
  void Start(int32_t job, const sched::WorkloadInfo& w, const std::vector<sched::TaskPlacement>& placements);
  // Releases the tasks job `job` started with (it finished or stopped); nothing when not running.
  void Stop(int32_t job);

  const ReplayViolations& violations() const { return v_; }

 private:
  struct Running {
    std::string service;                     // workload name
    std::vector<std::pair<sched::NodeIndex, std::vector<std::string>>> tasks;  // node, services its group avoids
    std::vector<std::pair<sched::NodeIndex, std::vector<sched::ExtendedAmount>>> held;  // node, one task's request
  };
  void Hold(const Running& r, int32_t sign);

  const std::vector<sched::NodeInfo>& nodes_;
  std::vector<std::unordered_map<std::string, int32_t>> services_;  // per node: running tasks by service
  std::vector<std::unordered_map<std::string, int32_t>> repelled_;  // per node: running tasks keeping a service away
  std::vector<std::map<ExtendedId, int64_t>> used_;                  // per node: extended resources held
  std::unordered_map<int32_t, Running> running_;
  ReplayViolations v_;
};

}  // namespace abacus::sim
