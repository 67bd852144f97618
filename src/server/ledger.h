// Ledger: the server's in-memory state — tenancy configuration, nodes, workloads with their
// lifecycle state and placements, and the last pending reasons — plus the conversion of that
// state into the scheduler's Snapshot and of its decisions back into records.
//
// Not thread-safe: ControlPlane guards it (one writer, the loop thread; readers under a shared
// lock).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/mutex.h"
#include "sched/cycle_kind.h"
#include "sched/explain.h"
#include "sched/scheduler.h"
#include "server/records.h"
#include "store/store.h"
#include "tenancy/tenancy_config.h"
#include "workload/documents.h"

namespace abacus::server {

// Returns the store kind of a tenancy object ("tenant", "project", "cohort", "queue",
// "priorityclass", "flavor", "pool"); empty for a workload.
std::string StoreKindOf(const SpecObject& object);
// Store kinds of the tenancy objects, in the order they are loaded.
const std::vector<std::string>& ConfigStoreKinds();

// Store kind of a queue's suspension (abacus suspend queue Q; key: the queue name).
inline constexpr char kQueueSuspensionKind[] = "queuesuspension";

// A suspended queue: it admits nothing new (server/fleet.h).
struct QueueSuspension {
  std::string by;
  Time since{};
};

// What the scheduler's indexes mean in one snapshot.
struct SnapshotIndex {
  // One more unit of an elastic workload, waiting as its own slice (elastic_units.h).
  struct Slice {
    std::string record_id;  // the workload's record
    int32_t unit = 0;
  };
  std::vector<std::string> workload_ids;  // WorkloadIndex → id
  std::unordered_map<int32_t, Slice> slices;  // WorkloadIndex → the unit it stands for (slices only)
  // Workloads that could not enter the snapshot (unknown queue), with the reason.
  std::vector<std::pair<std::string, std::string>> unschedulable;

  // The unit entry `i` stands for; null when it is a whole workload.
  const Slice* SliceAt(int32_t i) const {
    auto it = slices.find(i);
    return it == slices.end() ? nullptr : &it->second;
  }
};

class FitChecker;

// The scheduler's view of one workload record: its queue, priority class, requests per group
// and, when it holds quota, its flavors and placements (node and device positions from the
// indexes); nullopt with `why` when its queue or priority class does not exist. `slice_unit` >= 0:
// one more unit of an elastic workload (elastic_units.h).
std::optional<sched::WorkloadInfo> BuildWorkloadInfo(const WorkloadRecord& r, const TenancyConfig& config,
                                                     const std::vector<Flavor>& flavors,
                                                     const std::map<std::string, int>& queue_index,
                                                     const std::map<std::string, int>& node_index,
                                                     const std::vector<std::map<int, int>>& device_pos,
                                                     std::string& why, int32_t slice_unit = -1);

class Ledger {
 public:
  Ledger();
  // Not copyable: the holders index points into this ledger's own records.
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;

  // ---- loading
  // Rebuilds everything from `store`. Records that cannot be decoded are logged and skipped.
  Status Load(Store& store);

  // ---- configuration
  // Adds or replaces a tenancy object and rebuilds the configuration.
  void PutConfig(const SpecObject& object);
  // Adds or replaces each of `objects` as PutConfig does (replacements keep their place, new
  // objects come last, in order) with one index of the held objects, and rebuilds the
  // configuration once, after the last: linear in the objects held and given (an apply).
  void PutConfigs(const std::vector<const SpecObject*>& objects);
  // Removes configuration object `store_kind`/`name` ("reservation", "r1"); false when absent.
  bool RemoveConfig(const std::string& store_kind, const std::string& name);
  // The configuration; read under the control plane's state lock.
  const TenancyConfig& config() const { return *config_; }
  // The current configuration, safe to read from any thread without the state lock (it is
  // replaced whole, never changed in place): submissions check references against it without
  // waiting for the scheduling loop.
  std::shared_ptr<const TenancyConfig> ConfigSnapshot() const;
  // What submissions check NeverFits against: the nodes and queues of the last snapshot built
  // (fit_check.h), safe to read from any thread; null before the first, and from a change of
  // the nodes or the configuration until the next snapshot (a stale checker would warn about
  // work the new node or quota lets run).
  std::shared_ptr<const FitChecker> FitCheckerSnapshot() const;
  // Returns a configuration with `objects` added or replacing same-named ones (not applied).
  TenancyConfig MergedConfig(const std::vector<const SpecObject*>& objects) const;
  // Tenancy objects in the order first added (replacements keep their place).
  const std::vector<std::pair<std::string, SpecObject>>& config_objects() const { return config_objects_; }
  // Bumped whenever configuration or nodes change.
  uint64_t generation() const { return generation_; }

  // ---- nodes
  void PutNode(NodeRecord node);
  const std::map<std::string, NodeRecord, std::less<>>& nodes() const { return nodes_; }
  const NodeRecord* FindNode(std::string_view name) const;

  // ---- workloads
  void PutWorkload(WorkloadRecord record);
  WorkloadRecord* FindWorkload(std::string_view id);
  const WorkloadRecord* FindWorkload(std::string_view id) const;
  // Finds by id, else by name (the most recently submitted of that name).
  const WorkloadRecord* Resolve(std::string_view id_or_name) const;
  // The workloads named `name`, of every project and state.
  std::vector<const WorkloadRecord*> Named(std::string_view name) const;
  const std::unordered_map<std::string, WorkloadRecord>& workloads() const { return workloads_; }
  size_t active_count() const;

  // ---- scheduling
  // The nodes each reservation of the configuration holds (sched::ReservedNodes over the
  // scheduler's nodes, in its order), by name, in config().reservations() order.
  std::vector<std::vector<std::string>> ReservationNodes() const;
  // Builds the scheduler's input: nodes and queues, the workloads holding quota, and the waiting
  // ones that `scope` names (sched/cycle_kind.h, the one cycle-kind policy: all of them; the
  // first `per_queue` of each queue in sched::BoundedOrderKey order; `arrivals`; the waiting
  // queue-mates of arrivals in StrictFIFO queues). Nodes and queues are cached per generation.
  sched::Snapshot BuildSnapshot(Time now, SnapshotIndex& index,
                                const sched::CycleScope& scope = sched::ScopeOf(sched::CycleKind::kFull, 0),
                                const std::unordered_set<std::string>* arrivals = nullptr);
  // What a scheduling cycle at `now` would decide for `candidates` (records not in the ledger,
  // ids unique) added after every workload the ledger holds: one answer per candidate, in order
  // (ledger_what_if.cc). Dry runs; changes nothing but the snapshot caches.
  struct WhatIf {
    bool admitted = false;
    std::vector<std::string> group_flavors;  // when admitted
    std::vector<PlacementRecord> placements;
    std::vector<std::string> preempts;       // workloads it would preempt first ("id (reason)")
    std::optional<sched::PendingReason> pending;
    std::string unschedulable;  // its queue or priority class is unknown, or the like
  };
  std::vector<WhatIf> WhatIfCycle(const std::vector<WorkloadRecord>& candidates, Time now,
                                  const sched::SchedulerConfig& config);
  // Sets `record`'s flavors and placements from an admission of `snapshot`.
  // Returns the placement record of a scheduler placement on `snapshot`'s nodes.
  static PlacementRecord ToPlacement(const sched::Snapshot& snapshot, const sched::TaskPlacement& p);
  static void ApplyAdmission(const sched::Snapshot& snapshot, const sched::Admission& a,
                             WorkloadRecord& record);
  // Tells the ledger that `record` (one of its own) now holds quota: an admission. Incremental
  // snapshots read the holders from an index instead of scanning every workload; the index
  // learns of holders here, on PutWorkload and on every full scan.
  void NoteHolder(const WorkloadRecord& record) { holders_.insert(&record); }

  // Sets the gangs that hold nodes after a cycle (its reservations): they are in every snapshot
  // until a cycle leaves them without a hold (admitted, or gone).
  void SetHolding(std::unordered_set<std::string> ids) { holding_ = std::move(ids); }
  // Notes that `record` (one of its own) yields to record.yields_to.
  void PutClaim(const WorkloadRecord& record) { claims_[record.yields_to].insert(record.id); }
  // Workloads whose preemptor claim names `preemptor` (their yields_to), by id.
  std::vector<std::string> ClaimsOf(const std::string& preemptor) const;

  // Pending reasons of the last cycle, by workload id.
  std::unordered_map<std::string, sched::PendingReason>& pending_reasons() { return pending_reasons_; }
  const std::unordered_map<std::string, sched::PendingReason>& pending_reasons() const {
    return pending_reasons_;
  }
  // Reasons the ledger itself gives (unknown queue), by workload id.
  std::unordered_map<std::string, std::string>& ledger_reasons() { return ledger_reasons_; }
  const std::unordered_map<std::string, std::string>& ledger_reasons() const { return ledger_reasons_; }

  // ---- operator control (server/fleet.h)
  // Suspended queues by name; SetQueueSuspended(q, nullopt) resumes one.
  const std::map<std::string, QueueSuspension, std::less<>>& suspended_queues() const { return suspended_queues_; }
  void SetQueueSuspended(const std::string& queue, std::optional<QueueSuspension> suspension);
  // Why `r` (waiting) is kept out of scheduling by an operator — held, suspended, or its queue
  // suspended — with the command that lets it go; empty when it is not.
  std::string HoldReason(const WorkloadRecord& r) const;

  // Device grants per node and device index, from workloads holding quota.
  std::map<std::string, std::map<int, int32_t>> DeviceUsage() const;

 private:
  void RebuildConfig();
  // The nodes or the configuration changed: a new generation, and no checker until its snapshot.
  void NewGeneration();
  // Rebuilds base_ (nodes, cohorts, queues, flavor weights, pools) for the current generation.
  void RebuildBase();
  std::optional<sched::WorkloadInfo> ToWorkloadInfo(const WorkloadRecord& r,
                                                    const std::map<std::string, int>& queue_index,
                                                    const std::map<std::string, int>& node_index,
                                                    const std::vector<std::map<int, int>>& device_pos,
                                                    std::string& why, int32_t slice_unit = -1) const;

  std::vector<std::pair<std::string, SpecObject>> config_objects_;  // key "kind/name"
  // Replaced under config_mu_ (ConfigSnapshot's readers take it); the owner (the loop) reads it
  // without the lock. Not GUARDED_BY for that reason (single writer).
  std::shared_ptr<const TenancyConfig> config_ = std::make_shared<const TenancyConfig>();
  mutable Mutex config_mu_;  // guards the pointer for ConfigSnapshot's readers
  uint64_t generation_ = 1;
  std::map<std::string, NodeRecord, std::less<>> nodes_;
  std::unordered_map<std::string, WorkloadRecord> workloads_;
  // Every workload that may hold quota (a superset: BuildSnapshot drops those that no longer do).
  // Records never leave workloads_, so the pointers stay valid.
  std::unordered_set<const WorkloadRecord*> holders_;
  std::multimap<std::string, std::string, std::less<>> by_name_;  // name → id
  std::unordered_set<std::string> holding_;  // gangs holding nodes (SetHolding)
  // Preemptor id → victims that yield to it (a superset: read through ClaimsOf).
  std::unordered_map<std::string, std::unordered_set<std::string>> claims_;
  std::unordered_map<std::string, sched::PendingReason> pending_reasons_;
  std::unordered_map<std::string, std::string> ledger_reasons_;
  std::map<std::string, QueueSuspension, std::less<>> suspended_queues_;
  // Flavor universe of the current generation (node devices, quotas, flavor configs).
  std::vector<Flavor> flavors_;
  uint64_t flavors_generation_ = 0;
  // Snapshot without workloads, and its indexes, for base_generation_.
  sched::Snapshot base_;
  std::map<std::string, int> base_node_index_, base_queue_index_;
  std::vector<std::map<int, int>> base_device_pos_;
  uint64_t base_generation_ = 0;
  std::shared_ptr<const FitChecker> fit_checker_ GUARDED_BY(config_mu_);  // remade with base_
};

}  // namespace abacus::server
