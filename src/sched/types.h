// The scheduler's inputs and outputs as plain data. src/sched is pure: callers (server,
// simulator, tests) describe nodes, queues and workloads with these types, the Scheduler
// decides, and callers apply the decisions. Nothing here reads a clock, a store or a socket.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "model/flavor.h"
#include "model/node.h"
#include "model/resources.h"

namespace abacus::sched {

using NodeIndex = int32_t;
using QueueIndex = int32_t;
using CohortIndex = int32_t;
using WorkloadIndex = int32_t;
inline constexpr int32_t kNone = -1;
// Preempted this many times in a row for the same preemptor, a workload stops competing with it
// (the churn guard): it waits until that preemptor has started.
inline constexpr int32_t kChurnLimit = 2;

// ---------------------------------------------------------------- cluster

struct DeviceInfo {
  int index = 0;                // device index on the node
  FlavorId flavor = kCpuFlavorId;
  int64_t memory_bytes = 0;
  bool healthy = true;
  int32_t domain = -1;          // interconnect (NVLink/HCCS) domain id on this node; -1 none
  int32_t numa = -1;            // NUMA node; -1 unknown
};

// A runtime version constraint evaluated by the scheduler: name op version ("cuda >= 12.2").
struct VersionRequirement {
  std::string name;                     // "cuda", "cann", "rocm", "driver"
  enum class Op : uint8_t { kGe, kGt, kLe, kLt, kEq, kNe } op = Op::kGe;
  std::vector<int64_t> version;         // numeric components
  std::string text;                     // as written, for reasons
};

// An amount of one extended resource ("rdma/hca: 4"); lists of them are sorted by id, no zeros.
struct ExtendedAmount {
  ExtendedId id = 0;
  int64_t amount = 0;
  bool operator==(const ExtendedAmount&) const = default;
};

// Sets the amount of `id` in `list`, keeping it sorted by id; amount 0 removes the entry.
inline void SetExtended(std::vector<ExtendedAmount>* list, ExtendedId id, int64_t amount) {
  auto it = list->begin();
  while (it != list->end() && it->id < id) ++it;
  if (it != list->end() && it->id == id) {
    if (amount == 0) list->erase(it); else it->amount = amount;
  } else if (amount != 0) {
    list->insert(it, ExtendedAmount{id, amount});
  }
}

struct NodeInfo {
  std::string name;
  std::string cluster = "default";
  std::string pool = "default";
  std::map<std::string, std::string> labels;
  std::vector<Taint> taints;
  NodeState state = NodeState::kReady;
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  std::vector<DeviceInfo> devices;
  std::vector<ExtendedAmount> extended;  // allocatable extended resources ("rdma/hca: 4")
  // Runtime stack versions on this node by name ("cuda" → {12,4}, "driver" → {550,54}).
  std::map<std::string, std::vector<int64_t>> runtime_versions;
  // Versions of the devices of one flavor where they differ from runtime_versions (a node with
  // two GPU models on two CUDA versions); a task on that flavor is checked against these first.
  std::map<FlavorId, std::map<std::string, std::vector<int64_t>>> flavor_runtime_versions;
};

// ---------------------------------------------------------------- tenancy

// Quota of one queue (or cohort) for one resource: cpu (millicores), memory (bytes), an
// accelerator flavor (milli-devices) or an extended resource (units or bytes).
struct QuotaInfo {
  ResourceKey resource;
  int64_t nominal = 0;
  std::optional<int64_t> borrowing_limit;  // absent: may borrow whatever the cohort lends
  std::optional<int64_t> lending_limit;    // absent: all of nominal may be lent
};

enum class QueueingStrategy : uint8_t { kBestEffortFifo, kStrictFifo };

struct QueueInfo {
  std::string name;
  std::string tenant;
  CohortIndex cohort = kNone;
  int64_t weight_milli = 1000;                 // fair-share weight, 1000 = 1
  QueueingStrategy strategy = QueueingStrategy::kBestEffortFifo;
  std::vector<QuotaInfo> quotas;               // accelerator entries in the order flavors are tried
  std::vector<std::string> allowed_pools;      // from the tenant; empty = any pool
  std::vector<std::string> allowed_clusters;   // its work runs only there; empty = any cluster
  std::vector<std::string> preferred_clusters; // ranked first when they have room
  // Taking back its own lent nominal quota may preempt borrowers of any priority (false), or only
  // of strictly lower priority (true: the queue's reclaimWithinNominal is LowerPriority).
  bool reclaim_lower_priority_only = false;
};

// Labels under this prefix name data: on a cluster, data it holds locally; on a workload, data it
// reads ("data.abacus.io/imagenet: true").
inline constexpr std::string_view kDataLabelPrefix = "data.abacus.io/";

// A cluster's labels (kind Cluster); data.abacus.io/ labels say which data it holds locally.
struct ClusterInfo {
  std::string name;
  std::map<std::string, std::string> labels;
};

struct CohortInfo {
  std::string name;
  CohortIndex parent = kNone;
  std::vector<QuotaInfo> quotas;  // only borrowing_limit is used: how much the subtree may borrow
};

// ---------------------------------------------------------------- workloads

enum class TopologyRequirement : uint8_t { kNone, kSameInterconnect, kSameNuma };

struct TaskRequest {
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  std::vector<FlavorId> flavors;   // accelerator flavors the task accepts (pattern expanded); empty: CPU only
  std::string flavor_pattern;      // as written, for reasons
  int32_t device_count = 0;        // whole devices; with share_milli > 0 it is 1
  int32_t share_milli = 0;         // fractional device (1..999); 0 = whole devices
  int64_t device_memory = 0;       // per device; 0 = any (whole devices: minimum memory)
  TopologyRequirement topology = TopologyRequirement::kNone;
  std::vector<ExtendedAmount> extended;  // extended resources one task takes ("rdma/hca: 1")
  std::map<std::string, std::string> node_selector;
  std::vector<Toleration> tolerations;
  std::vector<VersionRequirement> runtime;
  std::vector<std::string> pools;  // node pools the task may use (admission policies); empty: any
  // A service's reservation pool: its tasks go on that pool's nodes; elsewhere only with
  // `pool_overflow` and only when the pool cannot take them (Placer::Place's second pass).
  std::string reserved_pool;
  bool pool_overflow = false;

  bool needs_devices() const { return device_count > 0; }
  // Milli-devices one task takes.
  int64_t device_milli() const { return share_milli > 0 ? share_milli : int64_t{device_count} * 1000; }
};

// Spread of a group's tasks over the values of a node label (topology_key; "node": each node its
// own domain): placing one more task on a domain may leave it at most max_skew above the least
// loaded domain (Kubernetes topologySpreadConstraints, whenUnsatisfiable: DoNotSchedule).
struct SpreadRule {
  std::string topology_key;
  int32_t max_skew = 1;
  bool operator==(const SpreadRule&) const = default;
};

// Where a group's tasks may go relative to each other and to other services (docs/specs.md,
// "placement"); placement_rules.h keeps the counts.
struct PlacementRules {
  int32_t max_per_node = 0;                 // tasks of this group per node; 0: no limit
  std::vector<SpreadRule> spread;
  std::vector<std::string> anti_affinity;   // workload (service) names whose tasks it never shares a node with
  // What its tasks are counted under for max_per_node and spread; empty: "<workload id>/<group>".
  // The server sets it to the workload's own id so that the slices of an elastic workload count together.
  std::string count_key;
  bool empty() const { return max_per_node == 0 && spread.empty() && anti_affinity.empty(); }
  bool operator==(const PlacementRules&) const = default;
};

struct TaskGroupRequest {
  std::string name;
  int32_t replicas = 1;
  TaskRequest task;
  PlacementRules rules;
};

// One task's place: node, and per device its index, milli and memory.
struct DeviceGrant {
  int32_t device = 0;  // position in NodeInfo::devices
  int32_t milli = 0;
  int64_t memory = 0;
};
struct TaskPlacement {
  int32_t group = 0;
  int32_t replica = 0;
  NodeIndex node = kNone;
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  std::vector<DeviceGrant> devices;
  std::vector<ExtendedAmount> extended;  // extended resources held (the task's request)
};

struct WorkloadInfo {
  std::string id;
  std::string name;
  QueueIndex queue = kNone;
  int32_t priority = 0;             // base priority (class value)
  int32_t priority_ceiling = 0;     // aging never goes above; 0 = no ceiling beyond priority
  int32_t aging_step = 0;           // added per maxQueueWait period waited
  Duration max_queue_wait{0};       // 0 = no delay tolerance declared
  bool preemptible = true;
  bool can_preempt = true;
  bool borrowed_only = false;       // best-effort: runs only on borrowed capacity
  // Reserved capacity (an InferenceService's spec.reservation.reserved, up to its minReplicas):
  // within its queue's nominal quota, work of lower priority cannot keep it off the nodes —
  // placement may evict lower-priority preemptible work of any queue that is not reserved itself
  // (MakeRoom; preempt.h).
  bool reserved = false;
  Time submitted{};
  bool gang = false;
  int64_t grace_seconds = 0;        // checkpoint grace when preempted
  std::vector<TaskGroupRequest> groups;
  // Temporary quota granted to this workload alone (an Experiment's spec.temporaryQuota, once
  // approved): the part of its usage this covers is not charged to its queue.
  ResourceVector quota_grant;
  // The workload's data.abacus.io/ labels: a cluster with the same label holds its data.
  std::map<std::string, std::string> data_labels;

  // Admitted workloads (running or starting): where they are and what quota they use.
  bool admitted = false;
  bool evicting = false;            // preemption issued, capacity not yet freed
  // Preemptor claims (docs/scheduler.md, "Reclaimed capacity goes to the preemptor"): set by the
  // caller on a workload preempted for `yields_to` until that preemptor is admitted or leaves. The
  // preemptor is tried first in every cycle; this workload is not admitted while the preemptor
  // still waits for victims to stop. `yield_count` counts the preemptions in a row for that same
  // preemptor; from kChurnLimit on it waits until the preemptor has started, whatever else happens.
  std::string yields_to;
  int32_t yield_count = 0;
  Time stop_deadline{};             // evicting: when its checkpoint grace ends (epoch: unknown)
  // A pending gang that held nodes (a Reservation) in the last cycle that tried it: callers keep it
  // in every cycle, and it is tried first, so its hold persists until it is admitted or leaves.
  bool holding = false;
  std::vector<FlavorId> group_flavors;  // chosen accelerator flavor per group (kCpuFlavorId: none)
  std::vector<TaskPlacement> placements;
  Time admitted_at{};
  // Time-window reservations (WindowReservation): who submitted it (a reservation may be for a
  // user) and its declared maxRuntime (0: none; such work never runs on capacity reserved later).
  std::string user;
  Duration max_runtime{0};
};

// ---------------------------------------------------------------- decisions

enum class FlavorMode : uint8_t { kFit, kBorrow, kPreempt, kNoFit };
std::string_view FlavorModeName(FlavorMode m);

struct Admission {
  WorkloadIndex workload = kNone;
  std::string workload_id;
  std::vector<FlavorId> group_flavors;
  std::vector<TaskPlacement> placements;
  bool borrowing = false;           // some of it runs on quota borrowed from the cohort
  int32_t effective_priority = 0;
};

enum class PreemptionReason : uint8_t {
  kReclaimQuota,      // the preemptor's queue takes back nominal quota lent to the victim's queue
  kInQueuePriority,   // higher priority work in the same queue needs the quota
  kMakeRoom,          // quota allows the preemptor but no node has room without evicting
};
std::string_view PreemptionReasonName(PreemptionReason r);

struct Preemption {
  WorkloadIndex victim = kNone;
  std::string victim_id;
  std::string preemptor_id;
  PreemptionReason reason = PreemptionReason::kMakeRoom;
  int64_t grace_seconds = 0;
  WorkloadIndex preemptor = kNone;  // the snapshot index of `preemptor_id`
};

// A time-window reservation (kind Reservation, docs/scheduler.md "Reservations"): nodes held for
// an owner from `start` to `end`, optionally every `every`. It holds the `nodes` named, or nodes
// (in node order) with at least `devices` devices of `flavor` in `pool`/`cluster`.
// During a window only the owner's work (tenant, queue or user; none: maintenance) may be placed
// there; before it, other work only when its maxRuntime ends by `start`.
struct WindowReservation {
  std::string name;
  std::vector<std::string> nodes;
  FlavorId flavor = kCpuFlavorId;
  int32_t devices = 0;
  std::string pool;
  std::string cluster;
  std::string tenant, queue, user;
  Time start{};
  Time end{};
  Duration every{0};  // recurrence period; 0 = once
  bool drain = false; // maintenance: the server drains its nodes ahead of the window
};

// Nodes held for a blocked gang workload at the head of its queue: other work does not
// backfill onto them while it waits.
struct Reservation {
  std::string workload_id;
  std::vector<NodeIndex> nodes;
};

}  // namespace abacus::sched
