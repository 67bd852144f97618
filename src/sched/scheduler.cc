#include "sched/scheduler.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <queue>
#include <unordered_map>

#include "common/check.h"
#include "sched/invariants.h"
#include "sched/order.h"
#include "sched/preempt.h"

namespace abacus::sched {

std::string_view FlavorModeName(FlavorMode m) {
  switch (m) {
    case FlavorMode::kFit: return "Fit";
    case FlavorMode::kBorrow: return "Borrow";
    case FlavorMode::kPreempt: return "Preempt";
    case FlavorMode::kNoFit: return "NoFit";
  }
  return "?";
}

std::string_view PreemptionReasonName(PreemptionReason r) {
  switch (r) {
    case PreemptionReason::kReclaimQuota: return "ReclaimQuota";
    case PreemptionReason::kInQueuePriority: return "InQueuePriority";
    case PreemptionReason::kMakeRoom: return "MakeRoom";
  }
  return "?";
}

ResourceVector WorkloadUsage(const WorkloadInfo& w, const std::vector<FlavorId>& group_flavors) {
  ResourceVector v;
  for (size_t g = 0; g < w.groups.size(); ++g) {
    const TaskRequest& t = w.groups[g].task;
    int64_t n = w.groups[g].replicas;
    v.Add(ResourceKey::Cpu(), t.cpu_milli * n);
    v.Add(ResourceKey::Memory(), t.memory_bytes * n);
    for (const ExtendedAmount& e : t.extended) v.Add(ResourceKey::Extended(e.id), e.amount * n);
    FlavorId f = g < group_flavors.size() ? group_flavors[g] : kCpuFlavorId;
    if (t.needs_devices() && f != kCpuFlavorId) v.Add(ResourceKey::Devices(f), t.device_milli() * n);
  }
  if (!w.quota_grant.IsZero()) return v.SaturatingSub(w.quota_grant);
  return v;
}

namespace {

constexpr size_t kMaxFlavorCombos = 16;
constexpr size_t kAheadIds = 3;

struct Option {
  size_t combo = 0;  // position among the flavor combinations, the queue's order
  std::vector<FlavorId> flavors;
  ResourceVector usage;
  QuotaCheck quota;
  bool placement_failed = false;
  PlacementDetail placement;
};

// "name (id)" for reasons that name another workload; the id alone when it has no other name.
std::string NameAndId(const WorkloadInfo& w) { return w.name == w.id ? w.id : w.name + " (" + w.id + ")"; }

// Appends `sep` and the decimal digits of `v` (no temporary strings: this key is built for
// every waiting workload a cycle looks at).
void AppendField(std::string& k, int64_t v, char sep = '|') {
  char buf[24];
  buf[0] = sep;
  auto [end, ec] = std::to_chars(buf + 1, buf + sizeof(buf), v);
  k.append(buf, static_cast<size_t>(end - buf));
}

std::string ShapeKey(const WorkloadInfo& w, int32_t group, FlavorId flavor, bool rules_active) {
  const TaskRequest& t = w.groups[group].task;
  std::string k;
  k.reserve(96);
  k += std::to_string(w.queue);
  AppendField(k, flavor);
  AppendField(k, t.cpu_milli);
  AppendField(k, t.memory_bytes);
  AppendField(k, t.device_count);
  AppendField(k, t.share_milli);
  AppendField(k, t.device_memory);
  AppendField(k, static_cast<int>(t.topology));
  AppendField(k, w.groups[group].replicas);
  for (const ExtendedAmount& e : t.extended) {
    k += "|x";
    k += std::to_string(e.id);
    AppendField(k, e.amount, '=');
  }
  for (const auto& [a, b] : t.node_selector) k.append("|s").append(a).append("=").append(b);
  for (const auto& p : t.pools) k.append("|p").append(p);
  if (!t.reserved_pool.empty()) k.append("|R").append(t.reserved_pool).append(t.pool_overflow ? "+" : "");
  for (const auto& tol : t.tolerations) k.append("|t").append(tol.key).append("=").append(tol.value);
  for (const auto& r : t.runtime) k.append("|r").append(r.text);
  // Placement rules make the answer depend on the group's own tasks and its service's name.
  if (rules_active) k.append("|k").append(RuleCountKey(w, group)).append("|n").append(w.name);
  return k;
}

bool HasRules(const WorkloadInfo& w) {
  return std::any_of(w.groups.begin(), w.groups.end(), [](const TaskGroupRequest& g) { return !g.rules.empty(); });
}

class Cycle {
 public:
  Cycle(const Snapshot& s, const SchedulerConfig& c, bool measure)
      : s_(s),
        c_(c),
        measure_(measure),
        node_pool_(NodePoolIds(s.nodes, &pool_names_)),
        cluster_(s.nodes),
        quota_(s.queues, s.cohorts),
        placer_(cluster_, node_pool_, QueuePoolAccess(s.queues, pool_names_, s.pool_tenants), c.policy),
        reserved_by_(s.nodes.size(), kNone),
        excluded_(s.workloads.size(), 0),
        leaving_(s.cohorts.size() + s.queues.size()),
        eff_prio_(s.workloads.size(), 0),
        usage_(s.workloads.size()),
        pending_slot_(s.workloads.size(), -1),
        tree_epoch_(s.cohorts.size() + s.queues.size(), 0),
        admitted_since_(s.cohorts.size() + s.queues.size()) {
    if (cluster_.num_clusters() > 1 || !s.clusters.empty()) placer_.SetClusterRules(s.queues, s.clusters);
    if (!s.window_reservations.empty()) {
      placer_.SetReservations(ReservationGate(s.nodes, s.queues, s.window_reservations, s.now));
    }
    cluster_.SetRules(s.workloads);
  }

  CycleResult Run();

 private:
  void LoadAdmitted();
  void BuildQueues();
  void SetUpFgd();
  double Share(QueueIndex q) const;
  bool WouldBorrow(QueueIndex q, WorkloadIndex w) const;
  std::string FairShareNote(QueueIndex q) const;
  void NoteFairShare();
  bool Attempt(WorkloadIndex w, bool at_head);
  std::vector<std::vector<FlavorId>> FlavorCombos(const WorkloadInfo& w, std::string* why) const;
  bool Reserve(WorkloadIndex w, const std::vector<FlavorId>& flavors);
  PendingReason& Pend(WorkloadIndex w, PendingCode code, std::string message);
  PlacementDetail ExplainPlacement(WorkloadIndex w, const Option& o);
  void FillPositions();
  std::vector<WorkloadIndex> Claimants();
  std::string NeverAdmissible(const WorkloadInfo& wl, const std::vector<Option>& options) const;
  std::string NeverHeld(const WorkloadInfo& wl, const Option& o) const;
  std::string NeverPlaceable(const WorkloadInfo& wl, const std::vector<FlavorId>& flavors) const;
  std::string NeverPlaceableGroup(const WorkloadInfo& wl, size_t g, FlavorId f) const;
  std::string NeverFits(const WorkloadInfo& wl, const std::vector<Option>& options) const;
  bool HeldForPreemptor(WorkloadIndex w);
  std::string StoppingVictims(const std::vector<WorkloadIndex>& victims) const;
  const std::vector<WorkloadIndex>& Leaving(WorkloadIndex w);

  const Snapshot& s_;
  const SchedulerConfig& c_;
  bool measure_;
  std::vector<std::string> pool_names_;
  std::vector<int32_t> node_pool_;
  ClusterState cluster_;
  QuotaState quota_;
  Placer placer_;
  std::vector<WorkloadIndex> reserved_by_;
  std::vector<uint8_t> excluded_;    // evicting, or chosen as a victim this cycle
  std::vector<std::vector<WorkloadIndex>> leaving_;  // the excluded, per cohort tree
  std::vector<WorkloadIndex> leaving_scratch_;       // Leaving's answer for reserved capacity
  std::vector<int32_t> eff_prio_;
  std::vector<int32_t> min_preemptible_;             // per queue
  std::vector<ResourceVector> usage_;
  std::vector<std::vector<WorkloadIndex>> pending_;  // per queue, in queue order
  std::vector<std::vector<WorkloadIndex>> running_;  // per queue, admitted
  std::unique_ptr<Sorter> sorter_;                   // fair share across queues
  // Fair share that remembers (Snapshot::fair_share), per queue; empty when off.
  std::vector<double> fair_factor_;
  std::vector<uint8_t> would_borrow_;                // per queue: its head, when last queued, would borrow
  std::unordered_map<std::string, PlacementDetail> explain_cache_;
  std::vector<int32_t> pending_slot_;
  // Preemptor claims: per workload, the preemptor it yields to (kNone: none), and what became of
  // each claimant tried first (-1 not tried, 0 left pending, 1 admitted).
  std::vector<WorkloadIndex> yields_to_;
  std::vector<int8_t> claim_outcome_;
  mutable std::unordered_map<FlavorId, int64_t> all_devices_milli_;  // per flavor, every node (NeverPlaceable)
  mutable std::unordered_map<FlavorId, int32_t> largest_node_devices_;  // per flavor, the most on one node
  mutable std::unordered_map<std::string, std::string> never_placeable_;  // ShapeKey → NeverPlaceableGroup
  // Failed victim searches, remembered until their cohort tree changes: a request at least as
  // large with no higher priority from the same queue would fail the same way.
  struct FailedSearch {
    uint64_t epoch;
    int32_t priority;
    ResourceVector usage;
    std::string why_not;
  };
  std::vector<uint64_t> tree_epoch_;
  // Per tree: for each priority of preemptible work admitted this cycle, the epoch of the last
  // such admission. A failed search stays valid while no possible victim (priority at most the
  // searcher's) has been admitted since.
  std::vector<std::vector<std::pair<int32_t, uint64_t>>> admitted_since_;
  bool SearchStillFails(size_t tree, const FailedSearch& f) const {
    for (const auto& [prio, epoch] : admitted_since_[tree]) {
      if (prio <= f.priority && epoch > f.epoch) return false;
    }
    return true;
  }
  std::map<std::pair<QueueIndex, std::vector<FlavorId>>, FailedSearch> failed_searches_;
  size_t TreeOf(QueueIndex q) const {
    CohortIndex root = quota_.Root(q);
    return root == kNone ? s_.cohorts.size() + static_cast<size_t>(q) : static_cast<size_t>(root);
  }
  CycleResult result_;
};

void Cycle::LoadAdmitted() {
  running_.assign(s_.queues.size(), {});
  min_preemptible_.assign(s_.queues.size(), INT32_MAX);
  for (WorkloadIndex i = 0; i < static_cast<WorkloadIndex>(s_.workloads.size()); ++i) {
    const WorkloadInfo& w = s_.workloads[i];
    eff_prio_[i] = EffectivePriority(w, s_.now);
    if (!w.admitted) continue;
    ABACUS_CHECK(w.queue >= 0 && w.queue < static_cast<QueueIndex>(s_.queues.size()), "workload in unknown queue");
    usage_[i] = WorkloadUsage(w, w.group_flavors);
    quota_.Add(w.queue, usage_[i], w.borrowed_only);
    for (const auto& p : w.placements) cluster_.Allocate(w, p);  // aborts on double allocation
    running_[w.queue].push_back(i);
    if (w.preemptible) min_preemptible_[w.queue] = std::min(min_preemptible_[w.queue], eff_prio_[i]);
    if (w.evicting) {
      excluded_[i] = 1;
      leaving_[TreeOf(w.queue)].push_back(i);
    }
  }
}

void Cycle::BuildQueues() {
  pending_.assign(s_.queues.size(), {});
  size_t waiting = 0;
  for (WorkloadIndex i = 0; i < static_cast<WorkloadIndex>(s_.workloads.size()); ++i) {
    const WorkloadInfo& w = s_.workloads[i];
    if (w.admitted) continue;
    ABACUS_CHECK(w.queue >= 0 && w.queue < static_cast<QueueIndex>(s_.queues.size()), "workload in unknown queue");
    pending_[w.queue].push_back(i);
    ++waiting;
  }
  result_.pending.reserve(waiting);  // most waiting workloads get a reason: no regrowth
  for (auto& list : pending_) {
    std::sort(list.begin(), list.end(), [&](WorkloadIndex a, WorkloadIndex b) {
      return BeforeInQueue(s_.workloads[a], eff_prio_[a], s_.workloads[b], eff_prio_[b]);
    });
  }
  size_t nf = Flavor::InternedCount();
  std::vector<int64_t> weights(nf, 1000);
  for (const auto& [f, wgt] : s_.flavor_weight_milli) {
    if (f < nf) weights[f] = wgt;
  }
  ClusterTotals totals;
  totals.cpu_milli = cluster_.total_cpu_milli();
  totals.memory_bytes = cluster_.total_memory();
  totals.device_milli.resize(nf, 0);
  for (FlavorId f = 1; f < nf; ++f) totals.device_milli[f] = cluster_.total_milli(f);
  sorter_ = std::make_unique<DrfSorter>(std::move(totals), std::move(weights));
  if (s_.fair_share.size() == s_.queues.size() && !s_.queues.empty()) {
    fair_factor_.resize(s_.queues.size());
    for (size_t q = 0; q < s_.queues.size(); ++q) fair_factor_[q] = s_.fair_share[q].factor;
    would_borrow_.assign(s_.queues.size(), 0);
  }
}

void Cycle::SetUpFgd() {
  if (!UsesFgdDistribution(c_.policy)) return;
  if (!c_.fgd_distribution.empty()) {
    placer_.SetFgdDistribution(c_.fgd_distribution);
    return;
  }
  // The expected workload: task shapes of the pending workloads, by frequency.
  std::map<std::tuple<int64_t, int64_t, int32_t, int32_t>, int64_t> counts;
  int64_t total = 0;
  for (const auto& w : s_.workloads) {
    if (w.admitted) continue;
    for (const auto& g : w.groups) {
      const TaskRequest& t = g.task;
      auto key = std::make_tuple(t.cpu_milli, (t.memory_bytes + (1 << 20) - 1) >> 20, t.device_count,
                                 t.share_milli > 0 ? t.share_milli : (t.device_count > 0 ? 1000 : 0));
      counts[key] += g.replicas;
      total += g.replicas;
    }
  }
  std::vector<frag::WeightedShape> d;
  for (const auto& [k, n] : counts) {
    frag::TaskShape s;
    s.cpu_milli = std::get<0>(k);
    s.memory_mib = std::get<1>(k);
    s.num_gpu = std::get<2>(k);
    s.gpu_milli = std::get<3>(k);
    d.push_back({s, static_cast<double>(n) / static_cast<double>(total)});
  }
  placer_.SetFgdDistribution(std::move(d));
}

double Cycle::Share(QueueIndex q) const {
  return sorter_->Share(quota_.usage(q), s_.queues[q].weight_milli);
}

bool Cycle::WouldBorrow(QueueIndex q, WorkloadIndex w) const {
  if (quota_.Root(q) == kNone) return false;  // no cohort: nothing to borrow
  const WorkloadInfo& wl = s_.workloads[w];
  if (wl.borrowed_only) return true;
  // The request with each group on the first flavor of the queue's list it accepts (the first
  // option Attempt tries), against what is left of the queue's nominal quota.
  ResourceVector req;
  for (const auto& g : wl.groups) {
    const TaskRequest& t = g.task;
    req.Add(ResourceKey::Cpu(), t.cpu_milli * g.replicas);
    req.Add(ResourceKey::Memory(), t.memory_bytes * g.replicas);
    for (const ExtendedAmount& e : t.extended) req.Add(ResourceKey::Extended(e.id), e.amount * g.replicas);
    if (!t.needs_devices()) continue;
    for (const QuotaInfo& e : quota_.quotas(q)) {
      if (e.resource.type != ResourceType::kDeviceMilli) continue;
      if (std::find(t.flavors.begin(), t.flavors.end(), e.resource.flavor) == t.flavors.end()) continue;
      req.Add(e.resource, t.device_milli() * g.replicas);
      break;
    }
  }
  bool over = false;
  req.ForEach([&](ResourceKey r, int64_t v) {
    if (!over && v > 0 && quota_.Limits(q, r) && quota_.used(q, r) + v > quota_.nominal(q, r)) over = true;
  });
  return over;
}

std::string Cycle::FairShareNote(QueueIndex q) const {
  // The sibling (same cohort) competing for borrowed capacity with the highest factor: the one
  // that goes first against this queue, or the one this queue goes first against.
  const CohortIndex c = s_.queues[q].cohort;
  QueueIndex best = kNone;
  for (QueueIndex o : quota_.TreeQueues(q)) {
    if (o == q || s_.queues[o].cohort != c) continue;
    // Competing for borrowed capacity: its head would borrow, or it borrows now.
    bool borrows = would_borrow_[o] != 0;
    for (const QuotaInfo& e : s_.queues[o].quotas) borrows = borrows || quota_.IsOverNominal(o, e.resource);
    if (!borrows) continue;
    if (best == kNone || fair_factor_[o] > fair_factor_[best]) best = o;
  }
  if (best == kNone) return "";
  std::string unit = "device-h";
  for (const QuotaInfo& e : s_.queues[q].quotas) {
    if (e.resource.type != ResourceType::kDeviceMilli) continue;
    unit = Flavor::FromId(e.resource.flavor).kind() == DeviceKind::kNpu ? "NPU-h" : "GPU-h";
    break;
  }
  const QueueShare& mine = s_.fair_share[q];
  const QueueShare& other = s_.fair_share[best];
  const bool other_first = fair_factor_[best] > fair_factor_[q] ||
                           (fair_factor_[best] == fair_factor_[q] && Share(best) < Share(q));
  char factors[96];
  std::snprintf(factors, sizeof factors, " (fair-share factor %.3f vs %.3f)", mine.factor, other.factor);
  return "queue " + mine.queue + " decayed usage " + DeviceHoursText(mine.decayed_usage) + " " + unit + " vs " +
         other.queue + " " + DeviceHoursText(other.decayed_usage) + " " + unit + ": " +
         (other_first ? other.queue : mine.queue) + " first for borrowed capacity" + factors;
}

void Cycle::NoteFairShare() {
  // Every workload left pending in a queue whose head would borrow names the ordering.
  std::vector<std::string> notes(s_.queues.size());
  std::vector<uint8_t> done(s_.queues.size(), 0);
  for (size_t q = 0; q < s_.queues.size(); ++q) {
    if (!would_borrow_[q]) continue;
    for (WorkloadIndex w : pending_[q]) {
      if (pending_slot_[w] < 0) continue;
      if (!done[q]) {
        notes[q] = FairShareNote(static_cast<QueueIndex>(q));
        done[q] = 1;
      }
      if (notes[q].empty()) break;
      result_.pending[pending_slot_[w]].fair_share = notes[q];
    }
  }
}

std::vector<std::vector<FlavorId>> Cycle::FlavorCombos(const WorkloadInfo& w, std::string* why) const {
  // Per group, the queue's accelerator quota entries (in listed order) that the task accepts.
  std::vector<std::vector<FlavorId>> per_group;
  for (const auto& g : w.groups) {
    std::vector<FlavorId> cands;
    if (!g.task.needs_devices()) {
      cands.push_back(kCpuFlavorId);
    } else {
      for (const auto& q : quota_.quotas(w.queue)) {
        if (q.resource.type != ResourceType::kDeviceMilli) continue;
        if (std::find(g.task.flavors.begin(), g.task.flavors.end(), q.resource.flavor) != g.task.flavors.end()) {
          cands.push_back(q.resource.flavor);
        }
      }
      if (cands.empty()) {
        *why = "queue " + s_.queues[w.queue].name + " has no quota for any flavor matching '" + g.task.flavor_pattern +
               "' (task group " + g.name + ")";
        return {};
      }
    }
    per_group.push_back(std::move(cands));
  }
  // Their combinations in order, first choices first.
  std::vector<std::vector<FlavorId>> combos{{}};
  for (const auto& cands : per_group) {
    std::vector<std::vector<FlavorId>> next;
    for (const auto& prefix : combos) {
      for (FlavorId f : cands) {
        if (next.size() >= kMaxFlavorCombos) break;
        auto c = prefix;
        c.push_back(f);
        next.push_back(std::move(c));
      }
    }
    combos = std::move(next);
  }
  return combos;
}

PendingReason& Cycle::Pend(WorkloadIndex w, PendingCode code, std::string message) {
  if (pending_slot_[w] < 0) {
    pending_slot_[w] = static_cast<int32_t>(result_.pending.size());
    result_.pending.emplace_back();
  }
  PendingReason& r = result_.pending[pending_slot_[w]];
  r = PendingReason{};
  const WorkloadInfo& wl = s_.workloads[w];
  r.workload_id = wl.id;
  r.code = code;
  r.message = std::move(message);
  r.base_priority = wl.priority;
  r.effective_priority = eff_prio_[w];
  r.waited = std::max(Duration(0), s_.now - wl.submitted);
  if (wl.max_queue_wait.count() > 0 && r.waited > wl.max_queue_wait) r.overrun = r.waited - wl.max_queue_wait;
  return r;
}

PlacementDetail Cycle::ExplainPlacement(WorkloadIndex w, const Option& o) {
  const WorkloadInfo& wl = s_.workloads[w];
  int32_t g = o.placement.group;
  FlavorId f = g < static_cast<int32_t>(o.flavors.size()) ? o.flavors[g] : kCpuFlavorId;
  PlacementDetail d;
  std::string key = ShapeKey(wl, g, f, cluster_.rules().active());
  if (!placer_.reservations().empty()) {
    placer_.PrepareFor(wl);
    key += placer_.reservations().Key();
  }
  auto it = explain_cache_.find(key);
  if (it != explain_cache_.end()) {
    d = it->second;
  } else if (c_.detailed_reasons) {
    d = placer_.Explain(wl, g, f, reserved_by_, w);
    explain_cache_.emplace(key, d);
  } else {
    d = o.placement;
  }
  d.tasks_needed = o.placement.tasks_needed;
  d.tasks_placeable = o.placement.tasks_placeable;
  if (!o.placement.rule_example.empty()) d.rule_example = o.placement.rule_example;  // seen with its other tasks held
  return d;
}

bool Cycle::Reserve(WorkloadIndex w, const std::vector<FlavorId>& flavors) {
  const WorkloadInfo& wl = s_.workloads[w];
  placer_.PrepareFor(wl);
  std::vector<NodeIndex> chosen;
  for (size_t g = 0; g < wl.groups.size(); ++g) {
    const TaskRequest& t = wl.groups[g].task;
    if (!t.needs_devices() || t.share_milli > 0) continue;
    int32_t tasks = wl.groups[g].replicas;
    cluster_.VisitWholeFree(flavors[g], 0, /*ascending=*/false, [&](NodeIndex n) {
      if (reserved_by_[n] != kNone) return false;
      if (placer_.StaticFilter(n, wl.queue, t, flavors[g]) != FilterReason::kCount) return false;
      int32_t per_node = cluster_.device_count(n, flavors[g]) / std::max(1, t.device_count);
      if (per_node <= 0) return false;
      chosen.push_back(n);
      tasks -= per_node;
      return tasks <= 0;
    });
    if (tasks > 0) {
      chosen.clear();
      return false;  // it can never fit: reserving would only block others
    }
  }
  if (chosen.empty()) return false;
  for (NodeIndex n : chosen) reserved_by_[n] = w;
  result_.reservations.push_back({wl.id, chosen});
  return true;
}

bool Cycle::Attempt(WorkloadIndex w, bool at_head) {
  const WorkloadInfo& wl = s_.workloads[w];
  ++result_.stats.attempts;
  std::string no_flavor;
  auto combos = FlavorCombos(wl, &no_flavor);
  if (combos.empty()) {
    Pend(w, PendingCode::kNoFlavor, no_flavor);
    return false;
  }
  // 1. Flavor assignment and quota, then placement, first fitting combination wins.
  //    Nominal quota first, then borrowing (DESIGN §5.3): choices that fit within nominal are
  //    tried before any choice that would borrow, each in the queue's listed order.
  std::vector<Option> options;
  options.reserve(combos.size());
  for (auto& flavors : combos) {
    Option o;
    o.combo = options.size();
    o.usage = WorkloadUsage(wl, flavors);
    o.quota = CheckWorkload(quota_, wl, o.usage);
    o.flavors = std::move(flavors);
    options.push_back(std::move(o));
  }
  std::stable_sort(options.begin(), options.end(), [](const Option& a, const Option& b) {
    auto rank = [](FlavorMode m) { return m == FlavorMode::kFit ? 0 : m == FlavorMode::kBorrow ? 1 : 2; };
    return rank(a.quota.mode) < rank(b.quota.mode);
  });
  for (Option& o : options) {
    if (o.quota.mode == FlavorMode::kFit || o.quota.mode == FlavorMode::kBorrow) {
      std::vector<TaskPlacement> placements;
      if (placer_.Place(wl, w, o.flavors, reserved_by_, &placements, &o.placement)) {
        quota_.Add(wl.queue, o.usage, wl.borrowed_only);
        usage_[w] = o.usage;
        running_[wl.queue].push_back(w);
        if (wl.preemptible) min_preemptible_[wl.queue] = std::min(min_preemptible_[wl.queue], eff_prio_[w]);
        {
          size_t tree = TreeOf(wl.queue);
          ++tree_epoch_[tree];
          if (wl.preemptible) {
            auto& since = admitted_since_[tree];
            const int32_t prio = eff_prio_[w];  // what it keeps while it runs
            auto it = std::find_if(since.begin(), since.end(), [&](const auto& e) { return e.first == prio; });
            if (it == since.end()) {
              since.emplace_back(prio, tree_epoch_[tree]);
            } else {
              it->second = tree_epoch_[tree];
            }
          }
        }
        Admission a;
        a.workload = w;
        a.workload_id = wl.id;
        a.group_flavors = o.flavors;
        a.placements = std::move(placements);
        a.borrowing = o.quota.mode == FlavorMode::kBorrow;
        a.effective_priority = eff_prio_[w];
        result_.admissions.push_back(std::move(a));
        ++result_.stats.admitted;
        return true;
      }
      o.placement_failed = true;
    }
  }
  // 2. Preemption: the first option that quota could allow by reclaiming or by evicting
  //    lower-priority work, or whose placement failed.
  std::string why_not;
  bool tried_preemption = false;
  if (c_.enable_preemption) {
    for (const Option& o : options) {
      if (!o.placement_failed && o.quota.mode != FlavorMode::kPreempt && o.quota.mode != FlavorMode::kNoFit) continue;
      tried_preemption = true;
      auto memo_key = std::make_pair(wl.queue, o.flavors);
      // A group with placement rules fails for reasons of its own, reserved capacity searches
      // every tree, and non-preemptible work (it never borrows) fails where preemptible work of
      // its queue would not: none is remembered nor skipped.
      const bool ruled = HasRules(wl) || wl.reserved || !wl.preemptible;
      auto memo = ruled ? failed_searches_.end() : failed_searches_.find(memo_key);
      if (memo != failed_searches_.end() && SearchStillFails(TreeOf(wl.queue), memo->second) &&
          eff_prio_[w] <= memo->second.priority && memo->second.usage.FitsIn(o.usage)) {
        if (why_not.empty()) why_not = memo->second.why_not;
        ++result_.stats.victim_searches_skipped;
        continue;
      }
      ++result_.stats.victim_searches;
      const std::vector<WorkloadIndex>& leaving = Leaving(w);
      PreemptionContext ctx{s_.workloads, usage_, running_, eff_prio_, min_preemptible_, excluded_,
                            leaving, reserved_by_, cluster_, quota_, placer_,
                            fair_factor_.empty() ? nullptr : &fair_factor_};
      VictimSearchResult vr = FindVictims(ctx, w, o.flavors, o.usage);
      if (!vr.found) {
        if (why_not.empty()) why_not = vr.why_not;
        if (!ruled) failed_searches_[memo_key] = {tree_epoch_[TreeOf(wl.queue)], eff_prio_[w], o.usage, vr.why_not};
        continue;
      }
      if (vr.victims.empty()) {
        // Name what it waits for: its own victims still stopping (else any stopping in the tree).
        std::vector<WorkloadIndex> mine;
        for (WorkloadIndex v : leaving) {
          if (s_.workloads[v].yields_to == wl.id) mine.push_back(v);
        }
        Pend(w, PendingCode::kWaitingForPreemption,
             mine.empty() ? "waiting for " + StoppingVictims(leaving) + ", already stopping"
                          : "waiting for " + StoppingVictims(mine));
        return false;
      }
      ++tree_epoch_[TreeOf(wl.queue)];
      for (const auto& v : vr.victims) {
        if (TreeOf(s_.workloads[v.workload].queue) != TreeOf(wl.queue)) ++tree_epoch_[TreeOf(s_.workloads[v.workload].queue)];
        excluded_[v.workload] = 1;
        leaving_[TreeOf(s_.workloads[v.workload].queue)].push_back(v.workload);
        const WorkloadInfo& vw = s_.workloads[v.workload];
        PreemptionReason reason = v.reason;
        if (o.placement_failed && o.quota.mode != FlavorMode::kPreempt && reason == PreemptionReason::kReclaimQuota) {
          reason = PreemptionReason::kMakeRoom;
        }
        result_.preemptions.push_back({v.workload, vw.id, wl.id, reason, vw.grace_seconds, w});
        ++result_.stats.preempted;
      }
      {
        std::vector<WorkloadIndex> victims;
        for (const auto& v : vr.victims) victims.push_back(v.workload);
        Pend(w, PendingCode::kWaitingForPreemption, "waiting for " + StoppingVictims(victims));
      }
      // Keep what it waits for: nobody backfills into the space being freed.
      for (const auto& v : vr.victims) {
        for (const auto& p : s_.workloads[v.workload].placements) {
          if (reserved_by_[p.node] == kNone) reserved_by_[p.node] = w;
        }
      }
      return false;
    }
  }
  // 3. Pending: name the real bottleneck.
  const Option* placement_opt = nullptr;
  for (const Option& o : options) {
    if (o.placement_failed) {
      placement_opt = &o;
      break;
    }
  }
  if (placement_opt != nullptr) {
    PlacementDetail d = ExplainPlacement(w, *placement_opt);
    std::string flavor = d.flavor == kCpuFlavorId ? "cpu" : Flavor::FromId(d.flavor).name();
    std::string msg = "quota allows it, but no node has room for it now";
    PendingCode code = PendingCode::kPlacement;
    // Never, only when no flavor choice could ever run: not this one, nor one quota holds back now.
    if (std::string never = NeverFits(wl, options); !never.empty()) {
      code = PendingCode::kInvalid;
      msg = "never fits: " + never;
    }
    if (code == PendingCode::kPlacement && !result_.reservations.empty()) {
      // Would it fit if no node were held for a gang? Then the reservation is the reason.
      std::vector<WorkloadIndex> unreserved(reserved_by_.size(), kNone);
      std::vector<TaskPlacement> trial;
      if (placer_.Place(wl, w, placement_opt->flavors, unreserved, &trial, nullptr)) {
        for (const auto& p : trial) cluster_.Release(wl, p);
        std::string holder;
        for (const auto& res : result_.reservations) holder += (holder.empty() ? "" : ", ") + res.workload_id;
        code = PendingCode::kReservedForGang;
        msg = "room exists only on nodes held for gang workload(s) " + holder + " ahead of it";
      }
    }
    if (code == PendingCode::kPlacement && !d.reservation_note.empty()) msg += "; " + d.reservation_note;
    PendingReason& r = Pend(w, code, msg);
    r.placement = d;
    if (tried_preemption) r.preemption = why_not;
    if (at_head && wl.gang && c_.enable_gang_reservation && Reserve(w, placement_opt->flavors)) {
      r.message += "; holding " + std::to_string(result_.reservations.back().nodes.size()) +
                   " node(s) for it so smaller work does not delay it";
    }
    return false;
  }
  const Option& first = options.front();
  if (std::string never = NeverAdmissible(wl, options); !never.empty()) {
    PendingReason& r = Pend(w, PendingCode::kInvalid, "never fits: " + never);
    if (tried_preemption) r.preemption = why_not;
    return false;
  }
  std::string msg;
  std::optional<QuotaDetail> detail;
  if (first.quota.shortage) {
    detail = quota_.Detail(wl.queue, *first.quota.shortage, first.quota.needed, first.quota.limiting_cohort);
  }
  if (detail) {
    msg += DescribeQuota(*detail, s_.queues[wl.queue].name);
  } else {
    msg += "does not fit";
  }
  if (first.quota.borrow_refused) {
    msg += "; it would borrow, and non-preemptible work (its priority class) runs only within its queue's nominal "
           "quota: borrowed quota must stay reclaimable by its owner";
  }
  if (options.size() > 1) msg += " (and " + std::to_string(options.size() - 1) + " other flavor choice(s) do not fit either)";
  PendingReason& r = Pend(w, PendingCode::kQuota, msg);
  r.quota = detail;
  if (tried_preemption) r.preemption = why_not;
  return false;
}

// What already stops that a victim search for `w` counts on: its cohort tree's, and for reserved
// capacity (which may evict in any queue) also its own victims in other trees.
const std::vector<WorkloadIndex>& Cycle::Leaving(WorkloadIndex w) {
  const WorkloadInfo& wl = s_.workloads[w];
  const size_t own_tree = TreeOf(wl.queue);
  if (!wl.reserved) return leaving_[own_tree];
  leaving_scratch_ = leaving_[own_tree];
  for (size_t t = 0; t < leaving_.size(); ++t) {
    if (t == own_tree) continue;
    for (WorkloadIndex v : leaving_[t]) {
      if (s_.workloads[v].yields_to == wl.id) leaving_scratch_.push_back(v);
    }
  }
  return leaving_scratch_;
}

std::string Cycle::StoppingVictims(const std::vector<WorkloadIndex>& victims) const {
  std::string out = std::to_string(victims.size()) + " preempted workload(s) to stop: ";
  for (size_t i = 0; i < victims.size() && i < kAheadIds; ++i) {
    const WorkloadInfo& v = s_.workloads[victims[i]];
    out += (i ? ", " : "") + NameAndId(v);
    // Its checkpoint grace: set by the caller while it stops, else it starts now.
    Time end = v.evicting ? v.stop_deadline : s_.now + std::chrono::seconds(v.grace_seconds);
    if (v.evicting && ToMicros(v.stop_deadline) == 0) continue;
    out += end > s_.now ? ", grace ends in " + FormatDuration(end - s_.now) : ", grace over";
  }
  if (victims.size() > kAheadIds) out += ", …";
  return out;
}

std::string Cycle::NeverAdmissible(const WorkloadInfo& wl, const std::vector<Option>& options) const {
  // Best-effort work runs only on borrowed capacity: a queue in no cohort has none to lend it.
  if (wl.borrowed_only && quota_.Root(wl.queue) == kNone) {
    return "its priority class is best-effort (runs only on capacity borrowed from a cohort) and queue " +
           s_.queues[wl.queue].name + " is in no cohort; submit it with another priority class or put the queue in a cohort";
  }
  // Every flavor choice asks more of something than the queue could ever hold.
  std::string first;
  for (const Option& o : options) {
    std::string why = NeverHeld(wl, o);
    if (why.empty()) return "";
    if (first.empty()) first = why;
  }
  return first;
}

std::string Cycle::NeverHeld(const WorkloadInfo& wl, const Option& o) const {
  std::string why;
  o.usage.ForEach([&](ResourceKey r, int64_t amount) {
    if (!why.empty() || r.type == ResourceType::kDeviceMemory) return;
    std::string how;
    int64_t most = quota_.MostEver(wl.queue, r, &how);
    if (amount <= most) return;
    const std::string name = r.ToString();
    auto num = [&](int64_t v) { return r.type == ResourceType::kCpu ? std::to_string(v / 1000) : FormatAmount(r, v); };
    why = "needs " + num(amount) + " " + name + ", at most " + num(most) + " can ever be free to queue " +
          s_.queues[wl.queue].name + " (" + how + ")";
  });
  return why;
}

std::string Cycle::NeverFits(const WorkloadInfo& wl, const std::vector<Option>& options) const {
  if (std::string never = NeverAdmissible(wl, options); !never.empty()) return never;
  std::vector<std::pair<size_t, std::string>> reasons;  // per flavor choice, in the queue's order
  for (const Option& o : options) {
    std::string why = NeverHeld(wl, o);
    // A whole-device task bigger than every node of its flavor (healthy or not: it may recover).
    for (size_t g = 0; why.empty() && g < wl.groups.size(); ++g) {
      const TaskRequest& t = wl.groups[g].task;
      const FlavorId f = g < o.flavors.size() ? o.flavors[g] : kCpuFlavorId;
      if (!t.needs_devices() || t.share_milli != 0 || f == kCpuFlavorId) continue;
      if (largest_node_devices_.empty()) {
        largest_node_devices_[kCpuFlavorId] = 0;
        for (const NodeInfo& node : s_.nodes) {
          std::unordered_map<FlavorId, int32_t> count;
          for (const auto& dev : node.devices) ++count[dev.flavor];
          for (const auto& [flavor, n] : count) largest_node_devices_[flavor] = std::max(largest_node_devices_[flavor], n);
        }
      }
      auto it = largest_node_devices_.find(f);
      const int32_t largest = it == largest_node_devices_.end() ? 0 : it->second;
      if (largest < t.device_count) {
        why = "a task needs " + std::to_string(t.device_count) + " " + Flavor::FromId(f).name() +
              " on one node, the largest node has " + std::to_string(largest);
      }
    }
    if (why.empty()) why = NeverPlaceable(wl, o.flavors);
    if (why.empty()) return "";
    reasons.emplace_back(o.combo, std::move(why));
  }
  if (reasons.size() == 1) return reasons[0].second;
  std::sort(reasons.begin(), reasons.end());
  std::string out;
  for (const auto& reason : reasons) {
    const size_t combo = reason.first;
    const std::string& why = reason.second;
    const Option& o = *std::find_if(options.begin(), options.end(), [&](const Option& x) { return x.combo == combo; });
    std::string flavors;
    for (FlavorId f : o.flavors) {
      if (f != kCpuFlavorId) flavors += (flavors.empty() ? "" : "+") + Flavor::FromId(f).name();
    }
    out += (out.empty() ? "on " : "; on ") + flavors + ": " + why;
  }
  return out;
}

std::string Cycle::NeverPlaceable(const WorkloadInfo& wl, const std::vector<FlavorId>& flavors) const {
  for (size_t g = 0; g < wl.groups.size(); ++g) {
    const FlavorId f = g < flavors.size() ? flavors[g] : kCpuFlavorId;
    // The same shape in the same queue gets the same answer all cycle: remember it.
    auto [it, fresh] = never_placeable_.try_emplace(ShapeKey(wl, static_cast<int32_t>(g), f, cluster_.rules().active()));
    if (fresh) it->second = NeverPlaceableGroup(wl, g, f);
    if (!it->second.empty()) return it->second;
  }
  return "";
}

std::string Cycle::NeverPlaceableGroup(const WorkloadInfo& wl, size_t g, FlavorId f) const {
  {
    const TaskRequest& t = wl.groups[g].task;
    // 1. More devices of the flavor than the whole cluster has.
    if (t.needs_devices() && f != kCpuFlavorId) {
      const int64_t need = t.device_milli() * wl.groups[g].replicas;
      // Every device of the flavor, on nodes not ready and unhealthy too: they may come back.
      if (all_devices_milli_.empty()) {
        all_devices_milli_[kCpuFlavorId] = 0;
        for (const NodeInfo& node : s_.nodes) {
          for (const auto& dev : node.devices) all_devices_milli_[dev.flavor] += 1000;
        }
      }
      auto it = all_devices_milli_.find(f);
      const int64_t total = it == all_devices_milli_.end() ? 0 : it->second;
      if (need > total) {
        return "needs " + FormatDeviceMilli(need) + " " + Flavor::FromId(f).name() + ", the cluster has " +
               FormatDeviceMilli(total) + " in all";
      }
    }
    // 2. maxPerNode: more tasks than the nodes it may use can take at that many per node.
    if (const int32_t max = wl.groups[g].rules.max_per_node; max > 0) {
      int64_t nodes = 0;
      for (NodeIndex n = 0; n < cluster_.num_nodes(); ++n) {
        FilterReason r = placer_.StaticFilter(n, wl.queue, t, f);
        if (r != FilterReason::kCount && r != FilterReason::kNotReady && r != FilterReason::kWindowReserved) continue;
        bool has = !t.needs_devices() || f == kCpuFlavorId;
        for (const auto& d : s_.nodes[n].devices) has |= d.flavor == f;
        nodes += has;
      }
      if (nodes > 0 && wl.groups[g].replicas > nodes * max) {
        return "needs " + std::to_string(wl.groups[g].replicas) + " tasks at maxPerNode " + std::to_string(max) +
               ", but only " + std::to_string(nodes) + " node(s) may take them (room for " +
               std::to_string(nodes * max) + ")";
      }
    }
    // 3. A constraint no node meets (node state aside: a node comes back).
    std::array<int32_t, static_cast<size_t>(FilterReason::kCount)> ruled{};
    bool any = false;
    for (NodeIndex n = 0; n < cluster_.num_nodes() && !any; ++n) {
      FilterReason r = placer_.StaticFilter(n, wl.queue, t, f);
      if (r == FilterReason::kCount || r == FilterReason::kNotReady || r == FilterReason::kWindowReserved) {
        bool has = !t.needs_devices() || f == kCpuFlavorId;
        for (const auto& d : s_.nodes[n].devices) has |= d.flavor == f;
        any = has;
        if (!has) ++ruled[static_cast<size_t>(FilterReason::kNoDevice)];
      } else {
        ++ruled[static_cast<size_t>(r)];
      }
    }
    if (any || s_.nodes.empty()) return "";
    if (ruled[static_cast<size_t>(FilterReason::kRuntime)] > 0) {
      // Name the versions there are: "no node has cuda>=12.4: 2 have 12.2".
      for (const auto& req : t.runtime) {
        std::map<std::string, int32_t> have;
        for (const NodeInfo& node : s_.nodes) {
          bool has = !t.needs_devices() || f == kCpuFlavorId;
          for (const auto& d : node.devices) has |= d.flavor == f;
          if (!has) continue;  // only nodes with its flavor tell what there is
          const std::vector<int64_t>* v = nullptr;
          if (auto fr = node.flavor_runtime_versions.find(f); fr != node.flavor_runtime_versions.end()) {
            if (auto it = fr->second.find(req.name); it != fr->second.end()) v = &it->second;
          }
          if (v == nullptr) {
            if (auto it = node.runtime_versions.find(req.name); it != node.runtime_versions.end()) v = &it->second;
          }
          std::string text = "none";
          if (v != nullptr) {
            text.clear();
            for (size_t i = 0; i < v->size(); ++i) text += (i ? "." : "") + std::to_string((*v)[i]);
          }
          ++have[text];
        }
        std::string list;
        for (const auto& [text, count] : have) {
          const std::string verb = count == 1 ? " has " : " have ";
          list += (list.empty() ? "" : ", ") + std::to_string(count) + verb + (text == "none" ? "no " + req.name : text);
        }
        return "no node has " + req.text + ": " + list;
      }
    }
    std::string parts;
    for (size_t i = 0; i < ruled.size(); ++i) {
      if (ruled[i] == 0) continue;
      parts += (parts.empty() ? "" : ", ") + std::to_string(ruled[i]) + " by " +
               std::string(FilterReasonName(static_cast<FilterReason>(i)));
      if (static_cast<FilterReason>(i) == FilterReason::kSelector) {
        std::string sel;
        for (const auto& [k, v] : t.node_selector) sel += (sel.empty() ? "" : ",") + k + "=" + v;
        parts += " (" + sel + ")";
      }
    }
    return "no node can ever host task group " + wl.groups[g].name + ": all " + std::to_string(s_.nodes.size()) +
           " ruled out, " + parts;
  }
}

std::vector<WorkloadIndex> Cycle::Claimants() {
  // Victims name their preemptor by id; only pending preemptors can claim anything.
  std::unordered_map<std::string_view, WorkloadIndex> pending_by_id;
  std::vector<WorkloadIndex> claimants;
  bool any = false;
  for (WorkloadIndex i = 0; i < static_cast<WorkloadIndex>(s_.workloads.size()); ++i) {
    const WorkloadInfo& w = s_.workloads[i];
    any |= !w.yields_to.empty();
    // A gang holding nodes keeps them: it is tried before anyone could take them.
    if (w.holding && !w.admitted && w.gang && c_.enable_gang_reservation) claimants.push_back(i);
  }
  if (!any && claimants.empty()) return claimants;  // nothing claims: no per-workload state this cycle
  yields_to_.assign(s_.workloads.size(), kNone);
  claim_outcome_.assign(s_.workloads.size(), -1);
  for (WorkloadIndex i = 0; any && i < static_cast<WorkloadIndex>(s_.workloads.size()); ++i) {
    if (!s_.workloads[i].admitted) pending_by_id.emplace(s_.workloads[i].id, i);
  }
  for (WorkloadIndex i = 0; any && i < static_cast<WorkloadIndex>(s_.workloads.size()); ++i) {
    const WorkloadInfo& w = s_.workloads[i];
    if (w.yields_to.empty()) continue;
    auto it = pending_by_id.find(w.yields_to);
    if (it == pending_by_id.end() || it->second == i) continue;  // started or gone: the claim is over
    yields_to_[i] = it->second;
    claimants.push_back(it->second);
  }
  std::sort(claimants.begin(), claimants.end());
  claimants.erase(std::unique(claimants.begin(), claimants.end()), claimants.end());
  std::stable_sort(claimants.begin(), claimants.end(), [&](WorkloadIndex a, WorkloadIndex b) {
    return BeforeInQueue(s_.workloads[a], eff_prio_[a], s_.workloads[b], eff_prio_[b]);
  });
  return claimants;
}

bool Cycle::HeldForPreemptor(WorkloadIndex w) {
  WorkloadIndex p = yields_to_.empty() ? kNone : yields_to_[w];
  if (p == kNone || claim_outcome_[p] == 1) return false;  // no claim, or its preemptor started
  const WorkloadInfo& wl = s_.workloads[w];
  const WorkloadInfo& pw = s_.workloads[p];
  const std::string by = NameAndId(pw);
  if (wl.yield_count >= kChurnLimit) {
    Pend(w, PendingCode::kHeldForPreemptor,
         "preempted " + std::to_string(wl.yield_count) + " times in a row for " + by +
             ", which reclaimed the capacity; to stop the churn it waits until " + by + " has started");
    return true;
  }
  const bool preemptor_waits = pending_slot_[p] >= 0 &&
                               result_.pending[pending_slot_[p]].code == PendingCode::kWaitingForPreemption;
  if (!preemptor_waits) return false;  // its preemptor cannot use the capacity now: the claim lapses
  Pend(w, PendingCode::kHeldForPreemptor,
       "the capacity it gave back is held for " + by + ", which reclaimed it and waits for its other victims to stop");
  return true;
}

void Cycle::FillPositions() {
  for (size_t q = 0; q < pending_.size(); ++q) {
    int32_t position = 0;
    std::vector<std::string> ahead;
    for (WorkloadIndex w : pending_[q]) {
      if (pending_slot_[w] < 0) continue;  // admitted this cycle
      PendingReason& r = result_.pending[pending_slot_[w]];
      r.position = ++position;
      r.ahead = position - 1;
      r.ahead_ids = ahead;
      if (ahead.size() < kAheadIds) ahead.push_back(s_.workloads[w].id);
    }
  }
}

CycleResult Cycle::Run() {
  LoadAdmitted();
  BuildQueues();
  SetUpFgd();
  // Heap of queues by their next head: priority first, then fair share, then age.
  struct Entry {
    // Fair share over time (0 when off): 0 when its head fits in nominal quota, else
    // 2 − its queue's fair-share factor, so those within nominal go first and, among
    // borrowers, the higher factor. Fields ordered to keep an entry at 32 bytes.
    double fair;
    double share;
    Time submitted;
    int32_t priority;
    QueueIndex queue;
  };
  auto worse = [](const Entry& a, const Entry& b) {
    if (a.priority != b.priority) return a.priority < b.priority;
    if (a.fair != b.fair) return a.fair > b.fair;
    if (a.share != b.share) return a.share > b.share;
    if (a.submitted != b.submitted) return a.submitted > b.submitted;
    return a.queue > b.queue;
  };
  std::priority_queue<Entry, std::vector<Entry>, decltype(worse)> heap(worse);
  std::vector<size_t> next(s_.queues.size(), 0);
  std::vector<uint8_t> head_failed(s_.queues.size(), 0);
  auto push = [&](QueueIndex q) {
    if (next[q] >= pending_[q].size()) return;
    WorkloadIndex w = pending_[q][next[q]];
    double fair = 0;
    if (!fair_factor_.empty()) {
      const bool borrow = WouldBorrow(q, w);
      would_borrow_[q] = borrow ? 1 : 0;
      if (borrow) fair = 2.0 - fair_factor_[q];
    }
    heap.push({fair, Share(q), s_.workloads[w].submitted, eff_prio_[w], q});
  };
  // 0. Capacity freed by a preemption goes to its preemptor: preemptors that victims yield to
  //    are tried first, before anyone else competes for what the victims gave back.
  for (WorkloadIndex w : Claimants()) claim_outcome_[w] = Attempt(w, true) ? 1 : 0;
  for (QueueIndex q = 0; q < static_cast<QueueIndex>(s_.queues.size()); ++q) push(q);
  while (!heap.empty()) {
    QueueIndex q = heap.top().queue;
    heap.pop();
    WorkloadIndex w = pending_[q][next[q]++];
    auto start = measure_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    bool ok = !claim_outcome_.empty() && claim_outcome_[w] >= 0 ? claim_outcome_[w] == 1
              : HeldForPreemptor(w)                               ? false
                                                                  : Attempt(w, !head_failed[q]);
    if (measure_) {
      result_.stats.decision_ns.push_back(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
    }
    if (!ok) {
      head_failed[q] = 1;
      if (s_.queues[q].strategy == QueueingStrategy::kStrictFifo) {
        // The head blocks the rest of a StrictFIFO queue.
        for (size_t i = next[q]; i < pending_[q].size(); ++i) {
          Pend(pending_[q][i], PendingCode::kBlockedByStrictFifo,
               "StrictFIFO queue " + s_.queues[q].name + " is blocked behind its head " + NameAndId(s_.workloads[w]) +
                   ", which cannot be admitted now; nothing behind it starts first");
        }
        next[q] = pending_[q].size();
        continue;
      }
    }
    push(q);
  }
  FillPositions();
  if (!fair_factor_.empty()) NoteFairShare();
  result_.stats.pending = static_cast<int64_t>(result_.pending.size());
  return std::move(result_);
}

}  // namespace

CycleResult Schedule(const Snapshot& snapshot, const SchedulerConfig& config, bool measure) {
  Cycle cycle(snapshot, config, measure);
  CycleResult result = cycle.Run();
#ifndef NDEBUG
  // Debug builds re-check every invariant of the outcome (docs/scheduler.md, "Invariants").
  Status invariants = CheckInvariants(snapshot, result);
  ABACUS_CHECK(invariants.ok(), invariants.message());
#endif
  return result;
}

}  // namespace abacus::sched
