// The read model of the API (issue 22.1): what ControlPlane's typed reads return. Each view is
// built under the shared state lock from the ledger, with the parts computed there (usage,
// borrowing, holders, liveness, pending reasons), and owns what it holds, so it outlives the lock
// (except WorkloadListView, which lives inside the lock). The JSON shapes are written at the
// HTTP edge (read_views_json.h), nowhere else. One JSON value is kept inside: the controller's
// own status document (control::Describe), which is the controller's to shape.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "sched/explain.h"
#include "sched/fair_share.h"
#include "server/device_holders.h"
#include "server/ledger.h"
#include "server/node_liveness.h"
#include "server/quota_view.h"
#include "server/records.h"
#include "server/reservations.h"
#include "store/store.h"
#include "tenancy/pool.h"
#include "tenancy/queue.h"

namespace abacus::server {

// One quota of a queue: what it uses of the resource and borrows or lends now (ledger units).
struct QuotaUseView {
  std::string resource;
  int64_t used = 0;
  int64_t nominal = 0;
  std::optional<int64_t> borrowing_limit;
  BorrowingNowLine borrowing;
};

// A queue as GET /api/v1/queues shows it: its configuration, its workloads and quota use.
struct QueueView {
  Queue queue;
  int pending = 0;   // waiting workloads
  int admitted = 0;  // workloads holding quota
  std::optional<QueueSuspension> suspended;  // `abacus suspend queue`
  std::vector<QuotaUseView> usage;           // one per quota, in the queue's order
};

// One device of a node as the caller sees it.
struct DeviceUseView {
  int32_t allocated_milli = 0;
  DeviceHolding holding;  // the holders the caller may see, the rest as hidden milli
  std::optional<double> utilization;  // the agent's last report (0..1)
};

// A node as GET /api/v1/nodes shows it: the record and what is held on it.
struct NodeView {
  NodeRecord record;
  std::vector<DeviceUseView> devices;  // one per record.node.devices, same order
  int64_t allocated_cpu_milli = 0;
  int64_t allocated_memory_bytes = 0;
  std::map<std::string, int64_t> allocated_extended;  // name -> held
  int64_t free_device_milli = 0;  // of healthy devices
  int64_t hidden_cpu_milli = 0;   // held by workloads the caller may not see
  int64_t hidden_memory_bytes = 0;
  std::optional<NodeLiveness> liveness;  // agent nodes heard from
};

// One device as GET /api/v1/devices lists it: no holders.
struct DeviceView {
  std::string node;
  std::string pool;
  Device device;
  int32_t allocated_milli = 0;
  std::optional<double> utilization;
};

// A device flavor as GET /api/v1/flavors shows it: configured or found on a node.
struct FlavorView {
  std::string name;
  double weight = 1.0;
  std::string description;
  int devices = 0;
  int64_t free_milli = 0;  // of healthy devices
  int nodes = 0;
};

// A cluster's devices of one flavor.
struct ClusterDevicesView {
  int total = 0;
  int64_t allocated_milli = 0;
  int unhealthy = 0;
};

// A cluster as GET /api/v1/clusters shows it: declared (kind Cluster) or named by nodes only.
struct ClusterView {
  std::optional<ClusterConfig> declared;  // nullopt: no Cluster object names it
  std::string name;
  int nodes = 0;
  int ready_nodes = 0;
  int64_t cpu_milli = 0;
  std::set<std::string> pools;
  std::map<std::string, ClusterDevicesView> devices;  // by flavor
};

// GET /api/v1/shares: every queue's fair share over time.
struct SharesView {
  std::vector<sched::QueueShare> shares;
  std::vector<std::string> tenant_of;  // each share's tenant, same order
  Duration half_life{};
};

// Why a waiting workload waits: an operator's hold, the scheduler's reason or the ledger's.
struct PendingReasonView {
  std::string code;
  std::string message;
  std::optional<int32_t> position;  // 1-based place in its queue (the scheduler's reasons)
};

// An elastic workload's replica that has no placement, and what stopped it on the nodes.
struct UnplacedUnitView {
  int32_t unit = 0;
  std::optional<std::string> reason;
};

// The replicas of a workload bound to a reservation's pool that run outside it.
struct OutsidePoolView {
  std::string pool;
  std::set<int32_t> replicas;
  std::string message;
};

// An elastic workload holding quota: the replicas it wants, has, and misses.
struct ElasticStatusView {
  int32_t wanted_units = 0;
  size_t placed_units = 0;
  std::vector<UnplacedUnitView> unplaced;
  std::optional<OutsidePoolView> outside_pool;
};

// What the read model computes of a workload beside its record.
struct WorkloadStatusView {
  std::optional<PendingReasonView> pending_reason;  // waiting workloads
  // control::Describe: the kind's controller's own document (batch progress, replicas and
  // rollout, idle notice, ...), kept as the controller writes it; an object.
  nlohmann::json controller = nlohmann::json::object();
  std::optional<ElasticStatusView> elastic;
};

// A workload as GET /api/v1/workloads/W shows it: a copy of its record and its status.
struct WorkloadView {
  WorkloadRecord record;
  WorkloadStatusView status;
};

// GET /api/v1/workloads: the newest `limit` matching workloads, oldest first. The rows point at
// the ledger's records (no copies): the list lives only inside ListWorkloads' callback.
struct WorkloadListView {
  struct Row {
    const WorkloadRecord* record = nullptr;
    WorkloadStatusView status;
  };
  std::vector<Row> items;
  size_t total = 0;  // matching workloads, before the limit
};

// Why a workload waits, in full (GET /api/v1/workloads/W/explain).
struct ExplainReasonView {
  std::string code;
  std::string message;
  // The scheduler's reason with its wait as of now; nullopt for a hold or the ledger's reason.
  std::optional<sched::PendingReason> scheduler;
  std::optional<std::string> quota;      // the scheduler's quota detail, described
  std::optional<std::string> placement;  // the scheduler's placement detail, described
};

// One placed task of a workload holding quota, as explain lists it.
struct ExplainPlacementView {
  std::string group;
  int32_t replica = 0;
  std::string node;
  std::string devices;  // "0,1(500m)"
};

// GET /api/v1/workloads/W/explain: where a workload stands and why, with a text for people.
struct ExplainView {
  std::string id;
  std::string name;
  std::string queue;
  WorkloadState state = WorkloadState::kPending;
  std::optional<ExplainReasonView> reason;  // waiting workloads with a reason
  bool placed = false;  // holds quota: `placements` and `flavors` are shown
  std::vector<ExplainPlacementView> placements;
  std::vector<std::string> flavors;
  // An elastic workload that holds quota (InferenceService replicas, BatchJob slots): the units it
  // wants that have no place yet, each with the scheduler's reason (as the workload's status).
  std::vector<UnplacedUnitView> unplaced;
  std::string text;
};

// One configuration object as GET /api/v1/{tenants,projects,cohorts,priorityclasses,pools,
// reservations} lists it.
struct ConfigItemView {
  std::optional<SpecObject> object;  // nullopt: a pool that nodes name but no Pool object declares
  std::string name;
  std::string tenant;          // projects: their tenant
  bool default_class = false;  // a built-in priority class no PriorityClass object replaces
  std::optional<std::vector<std::string>> projects;  // tenants: their projects' names
  std::optional<PoolStatus> pool;                    // pools
  std::optional<ReservationStatus> reservation;      // reservations
};

// The configuration objects of one kind ("tenant", "project", "cohort", "priorityclass", "pool",
// "cluster", "reservation"); clusters are ClusterViews.
struct ConfigListView {
  std::string kind;
  std::vector<ConfigItemView> items;
  std::vector<ClusterView> clusters;  // kind "cluster"
};

// GET /api/v1/workloads/W/revisions: a workload's template revisions, oldest first; a workload
// never updated has its first revision only.
struct RevisionsView {
  std::string id;
  std::string name;
  std::vector<RevisionRecord> items;  // never empty
};

// A workload's or node's stored events, oldest first.
struct StoredEventsView {
  std::string owner;  // the workload id or the node name
  std::vector<EventRecord> items;
};

}  // namespace abacus::server
