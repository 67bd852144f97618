// Placement rules of task groups (maxPerNode, spread over a node label, anti-affinity between
// services; docs/specs.md "placement"): per-node and per-domain task counts kept incrementally as
// tasks are allocated and released, so checking one candidate node costs O(rules of the group).
//
// Only what some rule of the cycle reads is counted: the tasks of groups with rules (under their
// count key) and the tasks of services that an anti-affinity rule names. A cycle without rules
// pays one branch per allocation.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "sched/types.h"

namespace abacus {
struct PlacementSpec;  // workload/workload.h
}

namespace abacus::sched {

// A task group's `placement:` spec as scheduler rules, its tasks counted under `count_key` (the
// server and the simulator both convert with this).
PlacementRules RulesFromSpec(const PlacementSpec& spec, std::string count_key);

enum class RuleKind : uint8_t { kNone, kMaxPerNode, kSpread, kAntiAffinity };

// The rule a node breaks for one more task, with the numbers for explain.
struct RuleBlock {
  RuleKind kind = RuleKind::kNone;
  int32_t have = 0;      // kMaxPerNode: tasks of the group on the node; kSpread: on its domain; kAntiAffinity: tasks of the other service
  int32_t limit = 0;     // kMaxPerNode: maxPerNode; kSpread: maxSkew
  int32_t least = 0;     // kSpread: tasks on the least loaded domain
  std::string subject;   // the group ("app-82/serve"); kAntiAffinity: the service kept away from
  std::string where;     // kSpread: "zone=a" or "zone (label missing)"; otherwise the node
  bool reverse = false;  // kAntiAffinity: the node's tasks keep this service away (their rule)
  int32_t ref = -1;      // the counter (kAntiAffinity) or spread table (kSpread) that blocked; for Name
  bool blocks() const { return kind != RuleKind::kNone; }
};

// Renders a block: "2 of app-82/serve already on node-7, maxPerNode 2".
std::string DescribeRuleBlock(const RuleBlock& b);

// A group's rules resolved to counter ids, once per group placement (see RuleCounts::Resolve).
struct RuleProbe {
  int32_t key = -1;                   // counter of the group's tasks; -1: none
  int32_t max_per_node = 0;
  std::vector<std::pair<int32_t, int32_t>> spread;  // (table, max skew)
  std::vector<int32_t> avoid;         // counters of the services it keeps away from
  int32_t repelled = -1;              // counter of tasks whose rules keep this service away
  bool empty() const { return key < 0 && avoid.empty() && repelled < 0; }
};

class RuleCounts {
 public:
  // Registers the rules of every group of `workloads` over `nodes` (counts all zero).
  void Build(const std::vector<NodeInfo>& nodes, const std::vector<WorkloadInfo>& workloads);
  // True when some group has a rule: otherwise Add and Resolve do nothing.
  bool active() const { return active_; }
  // Counts one task (p.group of `w` on p.node): `delta` +1 when allocated, -1 when released.
  void Add(const WorkloadInfo& w, const TaskPlacement& p, int32_t delta);
  // Resolves the rules that bind a task of group `group` of `w`.
  RuleProbe Resolve(const WorkloadInfo& w, int32_t group) const;
  // Returns the first rule node `n` breaks for one more task with `probe` (kind kNone: none).
  RuleBlock Check(const RuleProbe& probe, NodeIndex n) const;
  // Tasks counted under `probe.key` on node `n` (0 without a key).
  int32_t OnNode(const RuleProbe& probe, NodeIndex n) const { return probe.key < 0 ? 0 : Count(probe.key, n); }
  // Fills `b`'s names for people (the subject and where), from `w`'s group and node `n` of `nodes`.
  void Name(const std::vector<NodeInfo>& nodes, const WorkloadInfo& w, int32_t group, NodeIndex n, RuleBlock* b) const;

 private:
  // Tasks per domain of one topology key for one count key, and the least loaded eligible domain.
  struct SpreadTable {
    int32_t topology = 0;
    std::vector<int32_t> count;     // per domain
    std::vector<uint8_t> eligible;  // domains of Ready nodes matching the group's node selector
    std::vector<int32_t> hist;      // eligible domains per count
    int32_t least = 0;
  };
  int32_t Count(int32_t counter, NodeIndex n) const {
    auto it = node_count_.find(Slot(counter, n));
    return it == node_count_.end() ? 0 : it->second;
  }
  static uint64_t Slot(int32_t counter, NodeIndex n) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(counter)) << 32) | static_cast<uint32_t>(n);
  }
  int32_t Counter(const std::string& name);  // interns
  int32_t Find(const std::string& name) const;
  int32_t Topology(const std::vector<NodeInfo>& nodes, const std::string& key);
  void AddSpread(SpreadTable& t, NodeIndex n, int32_t delta);

  bool active_ = false;
  std::unordered_map<std::string, int32_t> counters_;   // "k:<count key>", "s:<service>", "r:<service>"
  std::unordered_map<uint64_t, int32_t> node_count_;    // Slot(counter, node) → tasks
  std::vector<std::string> topology_keys_;
  std::vector<std::vector<int32_t>> domain_of_;         // per topology: node → domain (-1: label missing)
  std::vector<std::vector<std::string>> domain_names_;  // per topology: domain → label value
  std::vector<SpreadTable> tables_;
  std::unordered_map<uint64_t, int32_t> table_of_;      // Slot(key counter, topology) → table
};

// The count key of group `g` of `w`: its rules' count_key, else "<id>/<group name>".
std::string RuleCountKey(const WorkloadInfo& w, int32_t g);

// Placement rule violations among admitted workloads: node/group pairs above maxPerNode, node pairs
// of services that anti-affinity keeps apart, and spread rules above their max skew (one per
// group and topology key). Zero after any sequence of scheduler decisions.
struct RuleViolations {
  int64_t max_per_node = 0;
  int64_t anti_affinity = 0;
  int64_t spread = 0;
  std::vector<std::string> examples;  // the first few, for people
  int64_t total() const { return max_per_node + anti_affinity + spread; }
};
RuleViolations CountRuleViolations(const std::vector<NodeInfo>& nodes, const std::vector<WorkloadInfo>& workloads);

}  // namespace abacus::sched
