// Ledger: the scheduler's input built from the records (BuildSnapshot, BuildWorkloadInfo, the
// per-generation node/queue base) and an admission turned back into a record.
#include "server/ledger.h"

#include <algorithm>
#include <limits>
#include <set>
#include <unordered_map>

#include "common/log.h"
#include "common/mutex.h"
#include "model/extended_resource.h"
#include "model/version.h"
#include "sched/placement_rules.h"
#include "sched/tenancy_snapshot.h"
#include "sched/window_reservation.h"
#include "server/elastic_units.h"
#include "server/fit_check.h"
#include "server/governance.h"
#include "tenancy/priority_class.h"

namespace abacus::server {
namespace {

sched::VersionRequirement ToRequirement(const VersionConstraint& c) {
  sched::VersionRequirement r;
  r.name = c.name();
  r.op = static_cast<sched::VersionRequirement::Op>(c.op());
  r.version = c.version().numbers();
  r.text = c.ToString();
  return r;
}

}  // namespace

std::optional<sched::WorkloadInfo> Ledger::ToWorkloadInfo(const WorkloadRecord& r,
                                                          const std::map<std::string, int>& queue_index,
                                                          const std::map<std::string, int>& node_index,
                                                          const std::vector<std::map<int, int>>& device_pos,
                                                          std::string& why, int32_t slice_unit) const {
  return BuildWorkloadInfo(r, *config_, flavors_, queue_index, node_index, device_pos, why, slice_unit);
}

std::optional<sched::WorkloadInfo> BuildWorkloadInfo(const WorkloadRecord& r, const TenancyConfig& config,
                                                     const std::vector<Flavor>& flavors,
                                                     const std::map<std::string, int>& queue_index,
                                                     const std::map<std::string, int>& node_index,
                                                     const std::vector<std::map<int, int>>& device_pos,
                                                     std::string& why, int32_t slice_unit) {
  const Workload& spec = r.spec;
  auto q = queue_index.find(spec.queue);
  if (q == queue_index.end()) {
    why = "queue '" + spec.queue + "' does not exist; apply it with `abacus apply`";
    return std::nullopt;
  }
  sched::WorkloadInfo w;
  const bool slice = slice_unit >= 0;  // one more unit of an elastic workload (elastic_units.h)
  w.id = slice ? SliceId(r.id, slice_unit) : r.id;
  w.name = spec.name;
  for (const auto& [k, v] : spec.labels) {
    if (k.rfind(sched::kDataLabelPrefix, 0) == 0) w.data_labels[k] = v;
  }
  w.queue = q->second;
  w.submitted = r.submitted;
  w.gang = spec.spec.gang;
  if (const PriorityClass* pc = config.FindPriorityClass(spec.priority_class)) {
    sched::ApplyPriorityClass(*pc, &w);
    if (r.priority) w.priority = *r.priority;  // abacus set-priority N
  } else {
    why = "priority class '" + spec.priority_class + "' does not exist";
    return std::nullopt;
  }
  if (spec.spec.max_queue_wait) w.max_queue_wait = *spec.spec.max_queue_wait;
  if (const TrainingSpec* t = spec.training(); t != nullptr && t->checkpoint) {
    w.grace_seconds = t->checkpoint->grace_seconds;
  }
  // Time-window reservations: whose it is, and how long it may still run (maxRuntime counts
  // every attempt) to backfill reserved capacity before a window.
  w.user = r.submitted_by;
  if (const TrainingSpec* t = spec.training(); t != nullptr && t->max_runtime) {
    w.max_runtime = std::max(Duration(std::chrono::seconds(1)), *t->max_runtime - Duration(r.prior_runtime_us));
  }
  int32_t multiplier = 1;
  if (const InferenceSpec* inf = spec.inference()) {
    multiplier = std::max(1, inf->replicas);
    // Reserved capacity holds the service's minReplicas: its admission, and the slices that bring
    // it back up to them (a replica lost with its node); scale-ups above them are not reserved.
    w.reserved = inf->reservation && inf->reservation->reserved &&
                 (!slice || slice_unit < std::max(1, inf->min_replicas));
  }
  if (spec.batch() != nullptr) multiplier = std::max(1, WantedUnits(r));  // slots for what is left to do
  // Admitted elastic workloads hold the units they have placements for; a slice is one unit.
  if (slice) {
    multiplier = 1;
  } else if (r.holds_quota() && IsElastic(r)) {
    multiplier = static_cast<int32_t>(PlacedUnits(r).size());
  }
  for (size_t gi = 0; gi < spec.spec.task_groups.size(); ++gi) {
    const TaskGroup& g = spec.spec.task_groups[gi];
    sched::TaskGroupRequest gr;
    gr.name = g.name;
    gr.replicas = g.replicas * multiplier;
    sched::TaskRequest& t = gr.task;
    t.cpu_milli = g.resources.cpu.milli();
    t.memory_bytes = g.resources.memory.CeilUnits();
    for (const auto& [xname, amount] : g.resources.extended) {
      if (auto x = ExtendedResource::Parse(xname); x.ok()) sched::SetExtended(&t.extended, x->Intern(), amount);
    }
    if (g.resources.accelerators) {
      const AcceleratorRequest& a = *g.resources.accelerators;
      t.flavor_pattern = a.flavor.text();
      for (const Flavor& f : flavors) {
        // A slice keeps the flavor its workload's group runs on.
        if (slice && gi < r.group_flavors.size() && f.name() != r.group_flavors[gi]) continue;
        if (a.flavor.Matches(f)) t.flavors.push_back(f.Intern());
      }
      t.device_count = a.count;
      if (a.share && *a.share < 1000) t.share_milli = *a.share;
      if (a.memory) t.device_memory = a.memory->CeilUnits();
    }
    t.topology = g.topology == TopologyPolicy::kSameInterconnect ? sched::TopologyRequirement::kSameInterconnect
                 : g.topology == TopologyPolicy::kSameNuma       ? sched::TopologyRequirement::kSameNuma
                                                                 : sched::TopologyRequirement::kNone;
    t.node_selector = g.node_selector;
    t.pools = r.spec.admission.pools;  // admission policies' pools (governance CheckSubmit)
    if (const InferenceSpec* inf = r.spec.inference(); inf != nullptr && inf->reservation) {
      t.reserved_pool = inf->reservation->pool;  // the pool holds its replicas (place.h)
      t.pool_overflow = inf->reservation->overflow;
    }
    t.tolerations = g.tolerations;
    for (const auto& c : g.runtime) t.runtime.push_back(ToRequirement(c));
    gr.rules = sched::RulesFromSpec(g.placement, r.id + "/" + g.name);  // slices count with their workload
    w.groups.push_back(std::move(gr));
  }
  if (!slice) {
    w.yields_to = r.yields_to;
    w.yield_count = r.yield_count;
  }
  if (r.holds_quota() && !slice) {
    w.admitted = true;
    w.evicting = r.state == WorkloadState::kPreempting;
    if (w.evicting) w.stop_deadline = r.preempted_at + std::chrono::seconds(w.grace_seconds);
    w.admitted_at = r.admitted_at;
    for (const auto& f : r.group_flavors) {
      auto fl = Flavor::Parse(f);
      w.group_flavors.push_back(fl.ok() ? fl->Intern() : kCpuFlavorId);
    }
    while (w.group_flavors.size() < w.groups.size()) w.group_flavors.push_back(kCpuFlavorId);
    for (const auto& p : r.placements) {
      auto n = node_index.find(p.node);
      if (n == node_index.end()) continue;  // the node left the ledger; its capacity is gone too
      sched::TaskPlacement tp;
      tp.group = p.group;
      tp.replica = p.replica;
      tp.node = n->second;
      tp.cpu_milli = p.cpu_milli;
      tp.memory_bytes = p.memory_bytes;
      // A task holds what its group requests of extended resources (the request is fixed).
      if (p.group >= 0 && p.group < static_cast<int32_t>(w.groups.size())) tp.extended = w.groups[p.group].task.extended;
      bool ok = true;
      for (const auto& d : p.devices) {
        auto pos = device_pos[n->second].find(d.index);
        if (pos == device_pos[n->second].end()) {
          ok = false;
          break;
        }
        tp.devices.push_back({pos->second, d.milli, d.memory});
      }
      if (ok) w.placements.push_back(std::move(tp));
    }
  }
  return w;
}

std::vector<std::vector<std::string>> Ledger::ReservationNodes() const {
  std::vector<std::vector<std::string>> out;
  std::vector<sched::WindowReservation> reservations;
  for (const ReservationConfig* r : config_->reservations()) reservations.push_back(sched::ToWindowReservation(*r));
  if (reservations.empty()) return out;
  // The scheduler's node order (RebuildBase: by name), with what ReservedNodes reads.
  std::vector<sched::NodeInfo> nodes;
  nodes.reserve(nodes_.size());
  for (const auto& [name, rec] : nodes_) {
    sched::NodeInfo ni;
    ni.name = name;
    ni.cluster = rec.node.cluster;
    ni.pool = rec.node.pool;
    for (const Device& d : rec.node.devices) ni.devices.push_back({d.index, d.flavor.Intern()});
    nodes.push_back(std::move(ni));
  }
  for (const auto& held : sched::ReservedNodes(nodes, reservations)) {
    out.emplace_back();
    for (sched::NodeIndex n : held) out.back().push_back(nodes[n].name);
  }
  return out;
}

sched::Snapshot Ledger::BuildSnapshot(Time now, SnapshotIndex& index, const sched::CycleScope& scope,
                                      const std::unordered_set<std::string>* arrivals) {
  if (base_generation_ != generation_) RebuildBase();
  sched::Snapshot s = base_;
  s.now = now;
  const std::map<std::string, int>& queue_index = base_queue_index_;
  const std::map<std::string, int>& node_index = base_node_index_;
  const std::vector<std::map<int, int>>& device_pos = base_device_pos_;
  // 4. Workloads: holding quota, and the waiting ones the cycle's scope names, in submission order.
  const bool all = scope.per_queue == std::numeric_limits<size_t>::max();
  const bool bounded = !all && scope.per_queue > 0;
  const std::unordered_set<std::string>* fresh = scope.arrivals ? arrivals : nullptr;
  auto arrived = [&](const std::string& id) { return fresh != nullptr && fresh->count(id) != 0; };
  std::set<std::string> strict_queues;
  if (!all && scope.strict_fifo_mates && fresh != nullptr) {
    for (const auto& id : *fresh) {
      auto it = workloads_.find(id);
      if (it == workloads_.end()) continue;
      const Queue* q = config_->FindQueue(it->second.spec.queue);
      if (q != nullptr && q->queueing_strategy == QueueingStrategy::kStrictFifo) strict_queues.insert(q->name);
    }
  }
  std::vector<const WorkloadRecord*> active;
  std::map<std::string, std::vector<const WorkloadRecord*>, std::less<>> waiting_by_queue;
  if (!all && !bounded && strict_queues.empty()) {
    // A fresh cycle: the holders from the index and the arrivals, without visiting the (many)
    // other waiting and finished workloads.
    for (auto it = holders_.begin(); it != holders_.end();) {
      if ((*it)->holds_quota()) {
        active.push_back(*it);
        ++it;
      } else {
        it = holders_.erase(it);
      }
    }
    if (fresh != nullptr) {
      for (const auto& id : *fresh) {
        auto it = workloads_.find(id);
        if (it != workloads_.end() && it->second.waiting()) active.push_back(&it->second);
      }
    }
  } else {
    holders_.clear();
    for (const auto& [id, r] : workloads_) {
      if (r.holds_quota()) {
        active.push_back(&r);
        holders_.insert(&r);
      } else if (r.waiting() && bounded) {
        waiting_by_queue[r.spec.queue].push_back(&r);
      } else if (r.waiting() && (all || arrived(id) || strict_queues.count(r.spec.queue) != 0)) {
        active.push_back(&r);
      }
    }
  }
  // A bounded cycle takes the first `per_queue` of each queue in queue order — the rest could
  // only be admitted after them — and the arrivals.
  for (auto& [queue, list] : waiting_by_queue) {
    auto key = [&](const WorkloadRecord* r) {
      int32_t priority = 0;
      if (r->priority) {
        priority = *r->priority;
      } else if (const PriorityClass* pc = config_->FindPriorityClass(r->spec.priority_class)) {
        priority = pc->value;
      }
      return sched::BoundedOrderKey<std::string_view>{priority, r->submitted, r->id};
    };
    auto before = [&](const WorkloadRecord* a, const WorkloadRecord* b) { return key(a) < key(b); };
    size_t keep = std::min(list.size(), scope.per_queue);
    std::partial_sort(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(keep), list.end(), before);
    active.insert(active.end(), list.begin(), list.begin() + static_cast<std::ptrdiff_t>(keep));
    for (size_t i = keep; i < list.size(); ++i) {
      if (arrived(list[i]->id)) active.push_back(list[i]);
    }
  }
  // A victim's preemptor claims what it gave back (sched/claims.h): whenever a workload that
  // yields to a waiting preemptor is in the cycle, so is the preemptor (it is tried first).
  // A gang holding nodes is in every cycle too, so that its hold persists (sched types.h).
  if (!holding_.empty() ||
      std::any_of(active.begin(), active.end(), [](const WorkloadRecord* r) { return !r->yields_to.empty(); })) {
    std::unordered_set<const WorkloadRecord*> in(active.begin(), active.end());
    const size_t n = active.size();
    for (size_t i = 0; i < n; ++i) {
      if (active[i]->yields_to.empty()) continue;
      const WorkloadRecord* p = FindWorkload(active[i]->yields_to);
      if (p != nullptr && p->waiting() && in.insert(p).second) active.push_back(p);
    }
    for (const auto& id : holding_) {
      const WorkloadRecord* g = FindWorkload(id);
      if (g != nullptr && g->waiting() && in.insert(g).second) active.push_back(g);
    }
  }
  std::sort(active.begin(), active.end(), [](const WorkloadRecord* a, const WorkloadRecord* b) {
    return a->submitted != b->submitted ? a->submitted < b->submitted : a->id < b->id;
  });
  for (const WorkloadRecord* r : active) {
    std::string why;
    if (r->waiting() && r->not_before > now) {
      // A retry backs off (restartPolicy.backoffSeconds, doubling): not admitted before then.
      index.unschedulable.emplace_back(r->id, "retry backoff: not before " + FormatTime(r->not_before));
      continue;
    }
    if (r->waiting() && (!r->hold.empty() || (!suspended_queues_.empty() && suspended_queues_.count(r->spec.queue)))) {
      // Operator control (server/fleet.h): held or suspended work, and a suspended queue's, waits.
      index.unschedulable.emplace_back(r->id, HoldReason(*r));
      continue;
    }
    auto w = ToWorkloadInfo(*r, queue_index, node_index, device_pos, why);
    if (!w) {
      index.unschedulable.emplace_back(r->id, why);
      continue;
    }
    // Temporary quota in force: admission charges the queue only for what it does not cover.
    for (const auto& g : r->quota_grants) {
      if (ToMicros(g.until) != 0 && g.until <= now) continue;
      w->quota_grant.Add(sched::QuotaKey(g.resource), LedgerAmount(g.resource, g.amount));
    }
    w->holding = holding_.count(r->id) != 0;
    index.workload_ids.push_back(r->id);
    s.workloads.push_back(std::move(*w));
    // Units an elastic workload lacks (scale-up, a replica lost with its node) wait as slices.
    if (!r->holds_quota()) continue;
    for (int32_t unit : MissingUnits(*r)) {
      auto sw = ToWorkloadInfo(*r, queue_index, node_index, device_pos, why, unit);
      if (!sw) continue;
      index.slices.emplace(static_cast<int32_t>(index.workload_ids.size()), SnapshotIndex::Slice{r->id, unit});
      index.workload_ids.push_back(sw->id);
      s.workloads.push_back(std::move(*sw));
    }
  }
  return s;
}

void Ledger::RebuildBase() {
  sched::Snapshot& s = base_;
  s = sched::Snapshot{};
  base_node_index_.clear();
  base_queue_index_.clear();
  base_device_pos_.clear();
  base_generation_ = generation_;
  std::map<std::string, int>& node_index = base_node_index_;
  std::vector<std::map<int, int>>& device_pos = base_device_pos_;
  std::map<std::string, int>& queue_index = base_queue_index_;
  // 1. The flavor universe: what nodes have, what quotas name, what is configured.
  if (flavors_generation_ != generation_) {
    std::set<std::string> seen;
    flavors_.clear();
    auto add = [&](const Flavor& f) {
      if (f.is_accelerator() && seen.insert(f.name()).second) flavors_.push_back(f);
    };
    for (const auto& [name, n] : nodes_) {
      for (const auto& d : n.node.devices) add(d.flavor);
    }
    for (const Queue* q : config_->queues()) {
      for (const auto& quota : q->quotas) add(quota.resource.flavor);
    }
    for (const FlavorConfig* f : config_->flavors()) add(f->flavor);
    flavors_generation_ = generation_;
  }
  // 2. Nodes, with device index → position per node.
  for (const auto& [name, rec] : nodes_) {
    const Node& n = rec.node;
    sched::NodeInfo ni;
    ni.name = n.name;
    ni.cluster = n.cluster;
    ni.pool = n.pool;
    ni.labels = n.labels;
    ni.taints = n.taints;
    ni.state = rec.EffectiveState();  // a cordon keeps new work off (server/fleet.h)
    ni.cpu_milli = n.cpu_milli;
    ni.memory_bytes = n.memory_bytes;
    for (const auto& [xname, amount] : n.extended) {
      if (auto x = ExtendedResource::Parse(xname); x.ok()) sched::SetExtended(&ni.extended, x->Intern(), amount);
    }
    std::map<std::string, int> domains;
    std::map<int, int> pos;
    for (const Device& d : n.devices) {
      sched::DeviceInfo di;
      di.index = d.index;
      di.flavor = d.flavor.Intern();
      di.memory_bytes = d.memory_bytes;
      di.healthy = d.health == DeviceHealth::kHealthy;
      if (!d.topology.interconnect_domain.empty()) {
        di.domain = domains.emplace(d.topology.interconnect_domain, static_cast<int>(domains.size())).first->second;
      }
      di.numa = d.topology.numa_node;
      pos[d.index] = static_cast<int>(ni.devices.size());
      ni.devices.push_back(di);
      auto& of_flavor = ni.flavor_runtime_versions[di.flavor];
      for (const auto& [rt, text] : d.runtime_versions) {
        auto v = Version::Parse(text);
        if (!v.ok()) continue;
        if (!of_flavor.count(rt)) of_flavor[rt] = v->numbers();
        if (!ni.runtime_versions.count(rt)) ni.runtime_versions[rt] = v->numbers();
      }
      if (!d.driver_version.empty() && !ni.runtime_versions.count("driver")) {
        if (auto v = Version::Parse(d.driver_version); v.ok()) ni.runtime_versions["driver"] = v->numbers();
      }
    }
    node_index[name] = static_cast<int>(s.nodes.size());
    device_pos.push_back(std::move(pos));
    s.nodes.push_back(std::move(ni));
  }
  // 3. Cohorts, queues, flavor weights, pools and clusters: the one translation (sched).
  for (const std::string& problem : sched::AddTenancy(*config_, &s, &queue_index)) {
    ABACUS_LOG_WARN("config: {} (left out of scheduling)", problem);
  }
  auto checker = std::make_shared<const FitChecker>(s, queue_index, flavors_, config_);
  MutexLock lock(config_mu_);
  fit_checker_ = std::move(checker);
}

void Ledger::ApplyAdmission(const sched::Snapshot& snapshot, const sched::Admission& a, WorkloadRecord& record) {
  record.requeue_reason = RequeueReason::kNone;
  record.evict_reason = RequeueReason::kNone;
  record.group_flavors.clear();
  for (FlavorId f : a.group_flavors) record.group_flavors.push_back(Flavor::FromId(f).name());
  record.placements.clear();
  for (const sched::TaskPlacement& p : a.placements) record.placements.push_back(ToPlacement(snapshot, p));
}

PlacementRecord Ledger::ToPlacement(const sched::Snapshot& snapshot, const sched::TaskPlacement& p) {
  PlacementRecord pr;
  pr.group = p.group;
  pr.replica = p.replica;
  const sched::NodeInfo& node = snapshot.nodes[p.node];
  pr.node = node.name;
  pr.cpu_milli = p.cpu_milli;
  pr.memory_bytes = p.memory_bytes;
  for (const auto& g : p.devices) pr.devices.push_back({node.devices[g.device].index, g.milli, g.memory});
  return pr;
}

}  // namespace abacus::server
