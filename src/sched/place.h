// Placement: filters (state, pool ↔ tenant, node selector, taints, runtime versions, CPU,
// memory, devices, device memory, topology, gang reservations) and scorers (binpack, spread,
// FGD) over the ClusterState indexes. A workload's tasks are placed all or none.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sched/cluster_state.h"
#include "sched/explain.h"
#include "sched/fragmentation.h"
#include "sched/types.h"
#include "sched/window_reservation.h"

namespace abacus::sched {

enum class ScoringPolicy : uint8_t {
  kBinpack,  // fewest free devices/CPU first: keeps whole nodes free for big jobs
  kSpread,   // most free first: spreads load and blast radius
  kFgd,      // fragmentation gradient descent (Weng et al., ATC'23): least expected fragmentation
  kFgdPlus,  // FGD that also counts GPUs stranded by used-up CPU/memory (frag::BestFgdPlusPlacement);
             // CPU-only tasks go to the fullest node whose free GPUs they strand least
};
// Returns true for the policies that score nodes by expected fragmentation (fgd, fgd-plus).
bool UsesFgdDistribution(ScoringPolicy p);
std::string_view ScoringPolicyName(ScoringPolicy p);
Result<ScoringPolicy> ParseScoringPolicy(std::string_view text);

class Placer {
 public:
  // `queue_pool_ok[q][pool]` says whether queue q's tenant may use node pool `pool`;
  // `node_pool[n]` is node n's pool id.
  Placer(ClusterState& state, std::vector<int32_t> node_pool,
         std::vector<std::vector<uint8_t>> queue_pool_ok, ScoringPolicy policy);

  // Sets the expected task-shape distribution used by FGD and FGD-Plus (ignored by other
  // policies), and from it the host resources a typical GPU task brings (FGD-Plus).
  void SetFgdDistribution(std::vector<frag::WeightedShape> d);
  // Sets the queues' cluster limits and preferences and the clusters' data labels. With more
  // than one cluster, a workload's tasks all go to one cluster, chosen by score (preferred by its
  // queue, holds its data, has the most room after it); other clusters are tried only when the
  // best cannot take it.
  void SetClusterRules(const std::vector<QueueInfo>& queues, const std::vector<ClusterInfo>& clusters);
  // Returns the clusters that could take `w` with `flavors` (queue limits, free capacity) in the
  // order Place tries them, best first.
  std::vector<int32_t> RankClusters(const WorkloadInfo& w, const std::vector<FlavorId>& flavors) const;

  // Places every task of `w` (flavor per group in `flavors`) and allocates them in the
  // state; on failure nothing stays allocated and `why` (if given) says which group failed.
  // Nodes reserved for another workload (`reserved_by[n]` not kNone or `self`) are skipped.
  // Tasks with a reserved pool go there; when the pool cannot take the workload and its tasks
  // allow overflow, a second pass places them anywhere (reserved-pool nodes still first in order).
  bool Place(const WorkloadInfo& w, WorkloadIndex self, const std::vector<FlavorId>& flavors,
             const std::vector<WorkloadIndex>& reserved_by, std::vector<TaskPlacement>* out,
             PlacementDetail* why);

  // How close node `n` comes to holding CPU-only task `t` (higher: closer; for explain).
  int64_t CpuCloseness(NodeIndex n, const TaskRequest& t) const;
  // Scans every node for one task of `group` (O(nodes)): how many fit and which is closest.
  PlacementDetail Explain(const WorkloadInfo& w, int32_t group, FlavorId flavor,
                          const std::vector<WorkloadIndex>& reserved_by, WorkloadIndex self);

  // Sets the cycle's time-window reservations (an empty gate: none, no cost).
  void SetReservations(ReservationGate gate) { gate_ = std::move(gate); }
  // Makes the static filters judge reservations for `w` (Place and Explain do it themselves).
  void PrepareFor(const WorkloadInfo& w) { gate_.For(w); }
  const ReservationGate& reservations() const { return gate_; }

  // Returns the first static filter node `n` fails for a task (kCount = passes); a time-window
  // reservation is judged for the workload last given to PrepareFor, Place or Explain.
  FilterReason StaticFilter(NodeIndex n, QueueIndex q, const TaskRequest& t, FlavorId flavor) const;

 private:
  // Place's work for one pass: in one cluster or over the ranked clusters.
  bool PlaceInClusters(const WorkloadInfo& w, WorkloadIndex self, const std::vector<FlavorId>& flavors,
                       const std::vector<WorkloadIndex>& reserved_by, std::vector<TaskPlacement>* out,
                       PlacementDetail* why);
  bool PlaceAll(const WorkloadInfo& w, WorkloadIndex self, const std::vector<FlavorId>& flavors,
                const std::vector<WorkloadIndex>& reserved_by, std::vector<TaskPlacement>* out, PlacementDetail* why);
  bool InCluster(NodeIndex n) const { return cluster_only_ < 0 || state_.cluster_of(n) == cluster_only_; }
  bool PlaceTask(const WorkloadInfo& w, WorkloadIndex self, int32_t group, int32_t replica,
                 FlavorId flavor, const std::vector<WorkloadIndex>& reserved_by, TaskPlacement* out);
  // Checks dynamic fit of a task on node n and picks devices; returns kCount on success.
  FilterReason FitOnNode(NodeIndex n, const TaskRequest& t, FlavorId flavor, TaskPlacement* out,
                         std::string* lacks) const;
  // After a task of `group` found no node: the first node with room for it that a placement rule
  // rules out, described with numbers ("" when none).
  std::string RuleNote(const WorkloadInfo& w, WorkloadIndex self, int32_t group, FlavorId flavor,
                       const std::vector<WorkloadIndex>& reserved_by);
  FilterReason CachedStaticFilter(NodeIndex n, QueueIndex q, const TaskRequest& t, FlavorId flavor);
  bool PlaceFgd(const TaskRequest& t, QueueIndex q, FlavorId flavor, WorkloadIndex self,
                const std::vector<WorkloadIndex>& reserved_by, TaskPlacement* out);
  // FGD-Plus for a task without devices: the node with enough CPU whose free devices it strands
  // least (frag::StrandedGpuMilli), the one with the least CPU free among equals.
  bool PlaceHostOnlyFgdPlus(const WorkloadInfo& w, WorkloadIndex self, const TaskRequest& t, FlavorId flavor,
                            const std::vector<WorkloadIndex>& reserved_by, TaskPlacement* out);
  // The GPUs of node n that task t (no devices) would strand: StrandedGpuMilli after − before.
  double StrandingIncrease(NodeIndex n, const TaskRequest& t) const;

  ClusterState& state_;
  std::vector<int32_t> node_pool_;
  std::vector<std::vector<uint8_t>> queue_pool_ok_;
  ScoringPolicy policy_;
  std::vector<frag::WeightedShape> fgd_distribution_;
  frag::HostPerGpu host_per_gpu_;  // FGD-Plus: of fgd_distribution_
  // Per queue and cluster id: may it run there / does it prefer it (empty: no rules).
  std::vector<std::vector<uint8_t>> queue_cluster_ok_, queue_cluster_preferred_;
  std::vector<std::map<std::string, std::string>> cluster_labels_;  // per cluster id
  int32_t cluster_only_ = -1;  // during Place: the cluster tried (-1: any)
  bool overflowing_ = false;   // during Place's second pass: tasks with pool_overflow may leave their reserved pool
  // During PlaceAll: the placement rules of the group being placed (empty: none bind it).
  RuleProbe probe_;
  ReservationGate gate_;
  bool Ruled(NodeIndex n) const { return !probe_.empty() && state_.rules().Check(probe_, n).blocks(); }
  // Per-attempt cache of static filter results.
  uint32_t attempt_ = 0;
  std::vector<uint32_t> stamp_;
  std::vector<uint8_t> cached_;
};

// Numbers the node pools: returns each node's pool id and fills `names` (id → pool name).
std::vector<int32_t> NodePoolIds(const std::vector<NodeInfo>& nodes, std::vector<std::string>* names);
// Returns, per queue and pool id, whether the queue may place work there: the queue's
// allowed pools (empty = any) and the pool's tenant binding (empty = every tenant).
std::vector<std::vector<uint8_t>> QueuePoolAccess(const std::vector<QueueInfo>& queues,
                                                  const std::vector<std::string>& pools,
                                                  const std::map<std::string, std::vector<std::string>>& pool_tenants);

// Returns true when `have` satisfies `req` ("cuda>=12.2" against {12,4}).
bool VersionSatisfies(const std::vector<int64_t>& have, const VersionRequirement& req);

}  // namespace abacus::sched
