// ClusterState: free capacity of every node and device during one scheduling cycle, with
// per-flavor indexes so that finding a fit never rescans the cluster:
//   - whole-device index: nodes bucketed by how many whole free devices of a flavor they have;
//   - share index: devices bucketed by free milli (0..1000);
//   - CPU index: nodes bucketed by free cores, CPU-only nodes apart from accelerator nodes.
// Allocate/Release keep the indexes exact in O(devices touched).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sched/buckets.h"
#include "sched/placement_rules.h"
#include "sched/types.h"

namespace abacus::sched {

class ClusterState {
 public:
  // Builds free capacity from `nodes` (all free). Nodes that are not Ready and unhealthy
  // devices are kept out of the indexes.
  explicit ClusterState(const std::vector<NodeInfo>& nodes);

  const std::vector<NodeInfo>& nodes() const { return nodes_; }
  int32_t num_nodes() const { return static_cast<int32_t>(nodes_.size()); }

  int64_t cpu_free(NodeIndex n) const { return cpu_free_[n]; }
  int64_t memory_free(NodeIndex n) const { return mem_free_[n]; }
  int32_t device_free_milli(NodeIndex n, int32_t d) const { return dev_free_milli_[dev_base_[n] + d]; }
  int64_t device_free_memory(NodeIndex n, int32_t d) const { return dev_free_mem_[dev_base_[n] + d]; }
  bool device_usable(NodeIndex n, int32_t d) const;
  // Free amount of extended resource `id` on node `n` (0 when the node has none).
  int64_t extended_free(NodeIndex n, ExtendedId id) const;
  // Returns true when node `n` has `want` free; otherwise false and, with `lacks`, what is
  // short ("rdma/hca 1 free of 2 needed").
  bool ExtendedFits(NodeIndex n, const std::vector<ExtendedAmount>& want, std::string* lacks) const;
  // Whole free devices of `flavor` on node `n`.
  int32_t whole_free(NodeIndex n, FlavorId flavor) const;
  // Healthy devices of `flavor` on node `n` (free or not).
  int32_t device_count(NodeIndex n, FlavorId flavor) const;
  bool node_usable(NodeIndex n) const { return nodes_[n].state == NodeState::kReady; }
  bool has_accelerators(NodeIndex n) const { return !nodes_[n].devices.empty(); }

  // Takes what `p` holds. Aborts (ABACUS_CHECK) when a device or share would be allocated
  // twice or beyond capacity: the ledger must never let that pass.
  void Allocate(const TaskPlacement& p);
  // Returns what `p` holds.
  void Release(const TaskPlacement& p);
  // Returns true when `p` could be allocated now (no double allocation).
  bool CanAllocate(const TaskPlacement& p) const;

  // Registers the placement rules of `workloads` (maxPerNode, spread, anti-affinity); call before
  // allocating their tasks with the two calls below, which keep the rule counts.
  void SetRules(const std::vector<WorkloadInfo>& workloads) { rules_.Build(nodes_, workloads); }
  const RuleCounts& rules() const { return rules_; }
  // Allocate/Release of task `p` of workload `w`, counted for the placement rules.
  void Allocate(const WorkloadInfo& w, const TaskPlacement& p) {
    Allocate(p);
    rules_.Add(w, p, +1);
  }
  void Release(const WorkloadInfo& w, const TaskPlacement& p) {
    Release(p);
    rules_.Add(w, p, -1);
  }

  // Visits nodes with at least `min_whole` whole free devices of `flavor`, fewest free first
  // (ascending) or most free first; `visit(node)` returns true to stop.
  template <typename F>
  bool VisitWholeFree(FlavorId flavor, int32_t min_whole, bool ascending, F&& visit) const {
    const FlavorIndex* fi = Index(flavor);
    if (fi == nullptr) return false;
    return fi->whole.Visit(min_whole, fi->whole.max_key(), ascending, visit);
  }
  // Visits devices (global ids) of `flavor` with at least `min_milli` free, least free first
  // (ascending) or most free first.
  template <typename F>
  bool VisitShareFree(FlavorId flavor, int32_t min_milli, bool ascending, F&& visit) const {
    const FlavorIndex* fi = Index(flavor);
    if (fi == nullptr) return false;
    return fi->share.Visit(min_milli, 1000, ascending, visit);
  }
  // Visits nodes with at least `min_cpu_milli` free CPU; CPU-only nodes first when
  // `cpu_nodes_first`.
  template <typename F>
  bool VisitCpuFree(int64_t min_cpu_milli, bool ascending, F&& visit) const {
    int32_t lo = static_cast<int32_t>(min_cpu_milli / 1000);
    if (cpu_only_.Visit(lo, cpu_only_.max_key(), ascending, visit)) return true;
    return cpu_accel_.Visit(lo, cpu_accel_.max_key(), ascending, visit);
  }

  // Global device id → (node, device position).
  NodeIndex device_node(int32_t global) const { return dev_node_[global]; }
  int32_t device_pos(int32_t global) const { return global - dev_base_[dev_node_[global]]; }

  // Cluster totals per flavor over usable devices, in milli.
  int64_t total_milli(FlavorId flavor) const;
  int64_t free_milli(FlavorId flavor) const;
  int64_t total_cpu_milli() const { return total_cpu_; }
  int64_t total_memory() const { return total_mem_; }

  // Clusters (NodeInfo::cluster) numbered in name order: the cluster of node `n`, and free and
  // total capacity per cluster over Ready nodes and usable devices.
  int32_t num_clusters() const { return static_cast<int32_t>(cluster_names_.size()); }
  int32_t cluster_of(NodeIndex n) const { return node_cluster_[n]; }
  const std::string& cluster_name(int32_t c) const { return cluster_names_[c]; }
  int64_t cluster_cpu_free(int32_t c) const { return cluster_cpu_free_[c]; }
  int64_t cluster_free_milli(int32_t c, FlavorId flavor) const;
  int64_t cluster_total_milli(int32_t c, FlavorId flavor) const;

 private:
  struct FlavorIndex {
    Buckets whole;   // node → whole free devices of this flavor
    Buckets share;   // global device → free milli
    int64_t total_milli = 0;
    int64_t free_milli = 0;
  };
  const FlavorIndex* Index(FlavorId f) const {
    return f < flavor_index_.size() && flavor_index_[f] >= 0 ? &indexes_[flavor_index_[f]] : nullptr;
  }
  FlavorIndex* Index(FlavorId f) {
    return f < flavor_index_.size() && flavor_index_[f] >= 0 ? &indexes_[flavor_index_[f]] : nullptr;
  }
  void Reindex(NodeIndex n, int32_t global_device);
  void ReindexCpu(NodeIndex n);
  // Subtracts (sign +1) or returns (-1) extended resources `held` on node `n`.
  void TakeExtended(NodeIndex n, const std::vector<ExtendedAmount>& held, int64_t sign);

  std::vector<NodeInfo> nodes_;
  std::vector<int64_t> cpu_free_, mem_free_;
  // Free extended resources per node (empty when no node declares any).
  std::vector<std::vector<ExtendedAmount>> ext_free_;
  std::vector<int32_t> dev_base_;       // first global device id of each node
  std::vector<NodeIndex> dev_node_;     // node of each global device
  std::vector<int32_t> dev_free_milli_;
  std::vector<int64_t> dev_free_mem_;
  std::vector<uint8_t> dev_usable_;
  std::vector<int32_t> flavor_index_;   // FlavorId → position in indexes_, -1 none
  std::vector<FlavorIndex> indexes_;
  // Whole free devices per (node, flavor index) and healthy device counts.
  std::vector<int32_t> whole_free_, dev_count_;
  Buckets cpu_only_, cpu_accel_;
  int64_t total_cpu_ = 0, total_mem_ = 0;
  std::vector<int32_t> node_cluster_;
  std::vector<std::string> cluster_names_;
  std::vector<int64_t> cluster_cpu_free_;
  // Per (cluster, flavor index): free and total milli of usable devices.
  std::vector<int64_t> cluster_free_milli_, cluster_total_milli_;
  RuleCounts rules_;
};

}  // namespace abacus::sched
