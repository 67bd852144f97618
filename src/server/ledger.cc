#include "server/ledger.h"

#include <algorithm>
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

struct KindName {
  std::string store_kind;
  std::string name;
};

KindName KeyOf(const SpecObject& o) {
  return std::visit(
      [](const auto& x) -> KindName {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Workload>) return {"", x.name};
        if constexpr (std::is_same_v<T, Tenant>) return {"tenant", x.name};
        if constexpr (std::is_same_v<T, Project>) return {"project", x.FullName()};
        if constexpr (std::is_same_v<T, Cohort>) return {"cohort", x.name};
        if constexpr (std::is_same_v<T, Queue>) return {"queue", x.name};
        if constexpr (std::is_same_v<T, PriorityClass>) return {"priorityclass", x.name};
        if constexpr (std::is_same_v<T, FlavorConfig>) return {"flavor", x.flavor.name()};
        if constexpr (std::is_same_v<T, PoolConfig>) return {"pool", x.name};
        if constexpr (std::is_same_v<T, ClusterConfig>) return {"cluster", x.name};
        if constexpr (std::is_same_v<T, ReservationConfig>) return {"reservation", x.name};
      },
      o);
}

void AddToConfig(TenancyConfig& c, const SpecObject& o) {
  Status st = std::visit(
      [&](const auto& x) -> Status {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Workload>) return Status::OK();
        if constexpr (std::is_same_v<T, Tenant>) return c.AddTenant(x);
        if constexpr (std::is_same_v<T, Project>) return c.AddProject(x);
        if constexpr (std::is_same_v<T, Cohort>) return c.AddCohort(x);
        if constexpr (std::is_same_v<T, Queue>) return c.AddQueue(x);
        if constexpr (std::is_same_v<T, PriorityClass>) return c.AddPriorityClass(x);
        if constexpr (std::is_same_v<T, FlavorConfig>) return c.AddFlavor(x);
        if constexpr (std::is_same_v<T, PoolConfig>) return c.AddPool(x);
        if constexpr (std::is_same_v<T, ClusterConfig>) return c.AddCluster(x);
        if constexpr (std::is_same_v<T, ReservationConfig>) return c.AddReservation(x);
      },
      o);
  if (!st.ok()) ABACUS_LOG_WARN("config: {}", st.ToString());
}

}  // namespace

std::string StoreKindOf(const SpecObject& object) { return KeyOf(object).store_kind; }

const std::vector<std::string>& ConfigStoreKinds() {
  static const std::vector<std::string> kinds = {"tenant", "project", "cohort", "flavor", "pool",
                                                 "cluster", "priorityclass", "queue", "reservation"};
  return kinds;
}

Ledger::Ledger() { RebuildConfig(); }

Status Ledger::Load(Store& store) {
  for (const auto& kind : ConfigStoreKinds()) {
    ABACUS_ASSIGN_OR_RETURN(auto records, store.List(kind));
    for (const auto& rec : records) {
      nlohmann::json j = nlohmann::json::parse(rec.json, nullptr, false);
      auto obj = SpecObjectFromJson(j);
      if (!obj.ok()) {
        ABACUS_LOG_ERROR("store {}/{}: {}", kind, rec.key, obj.status().ToString());
        continue;
      }
      config_objects_.emplace_back(kind + "/" + rec.key, std::move(*obj));
    }
  }
  RebuildConfig();
  ABACUS_ASSIGN_OR_RETURN(auto nodes, store.List(kNodeKind));
  for (const auto& rec : nodes) {
    auto n = NodeRecordFromJson(nlohmann::json::parse(rec.json, nullptr, false));
    if (!n.ok()) {
      ABACUS_LOG_ERROR("store node/{}: {}", rec.key, n.status().ToString());
      continue;
    }
    n->version = rec.version;
    PutNode(std::move(*n));
  }
  ABACUS_ASSIGN_OR_RETURN(auto suspensions, store.List(kQueueSuspensionKind));
  for (const auto& rec : suspensions) {
    nlohmann::json j = nlohmann::json::parse(rec.json, nullptr, false);
    if (!j.is_object()) continue;
    suspended_queues_[rec.key] = {j.value("by", ""), FromMicros(j.value("sinceUs", int64_t{0}))};
  }
  ABACUS_ASSIGN_OR_RETURN(auto workloads, store.List(kWorkloadKind));
  for (const auto& rec : workloads) {
    auto w = WorkloadRecordFromJson(nlohmann::json::parse(rec.json, nullptr, false));
    if (!w.ok()) {
      ABACUS_LOG_ERROR("store workload/{}: {}", rec.key, w.status().ToString());
      continue;
    }
    w->version = rec.version;
    PutWorkload(std::move(*w));
  }
  return Status::OK();
}

std::string Ledger::HoldReason(const WorkloadRecord& r) const {
  if (r.hold == "Suspended") {
    return "suspended by " + r.hold_by + ": it waits until `abacus resume " + r.spec.name + "`";
  }
  if (!r.hold.empty()) return "held by " + r.hold_by + ": it waits until `abacus release " + r.spec.name + "`";
  auto q = suspended_queues_.find(r.spec.queue);
  if (q != suspended_queues_.end()) {
    return "queue " + r.spec.queue + " is suspended (by " + q->second.by + "): it admits nothing until `abacus resume queue " +
           r.spec.queue + "`";
  }
  return "";
}

void Ledger::SetQueueSuspended(const std::string& queue, std::optional<QueueSuspension> suspension) {
  if (suspension) {
    suspended_queues_[queue] = std::move(*suspension);
  } else {
    suspended_queues_.erase(queue);
  }
}

void Ledger::RebuildConfig() {
  TenancyConfig c;
  for (const auto& [key, obj] : config_objects_) AddToConfig(c, obj);
  auto next = std::make_shared<const TenancyConfig>(std::move(c));
  {
    MutexLock lock(config_mu_);
    config_ = std::move(next);
  }
  NewGeneration();
}

void Ledger::NewGeneration() {
  ++generation_;
  MutexLock lock(config_mu_);
  fit_checker_.reset();
}

std::shared_ptr<const TenancyConfig> Ledger::ConfigSnapshot() const {
  MutexLock lock(config_mu_);
  return config_;
}

std::shared_ptr<const FitChecker> Ledger::FitCheckerSnapshot() const {
  MutexLock lock(config_mu_);
  return fit_checker_;
}

namespace {

// Adds or replaces each of `objects` in `held` (key "kind/name"): replacements keep their place,
// new objects come last, in order; one index instead of a scan per object.
void PutObjects(std::vector<std::pair<std::string, SpecObject>>& held, const std::vector<const SpecObject*>& objects) {
  std::unordered_map<std::string, size_t> index;  // key → position in `held`
  index.reserve(held.size() + objects.size());
  for (size_t i = 0; i < held.size(); ++i) index.emplace(held[i].first, i);
  for (const SpecObject* o : objects) {
    KindName k = KeyOf(*o);
    std::string key = k.store_kind + "/" + k.name;
    auto [it, added] = index.try_emplace(key, held.size());
    if (added) {
      held.emplace_back(std::move(key), *o);
    } else {
      held[it->second].second = *o;
    }
  }
}

}  // namespace

void Ledger::PutConfig(const SpecObject& object) { PutConfigs({&object}); }

void Ledger::PutConfigs(const std::vector<const SpecObject*>& objects) {
  if (objects.empty()) return;
  PutObjects(config_objects_, objects);
  RebuildConfig();
}

TenancyConfig Ledger::MergedConfig(const std::vector<const SpecObject*>& objects) const {
  auto merged = config_objects_;
  PutObjects(merged, objects);
  TenancyConfig c;
  for (const auto& [key, obj] : merged) AddToConfig(c, obj);
  return c;
}

void Ledger::PutNode(NodeRecord node) {
  std::string name = node.node.name;
  nodes_[name] = std::move(node);
  NewGeneration();
}

const NodeRecord* Ledger::FindNode(std::string_view name) const {
  auto it = nodes_.find(name);
  return it == nodes_.end() ? nullptr : &it->second;
}

void Ledger::PutWorkload(WorkloadRecord record) {
  auto it = workloads_.find(record.id);
  if (it == workloads_.end()) {
    by_name_.emplace(record.spec.name, record.id);
    std::string id = record.id;
    it = workloads_.emplace(std::move(id), std::move(record)).first;
  } else {
    it->second = std::move(record);
  }
  if (it->second.holds_quota()) holders_.insert(&it->second);
  if (!it->second.yields_to.empty()) claims_[it->second.yields_to].insert(it->second.id);
}

std::vector<std::string> Ledger::ClaimsOf(const std::string& preemptor) const {
  std::vector<std::string> out;
  auto it = claims_.find(preemptor);
  if (it == claims_.end()) return out;
  for (const auto& id : it->second) {
    const WorkloadRecord* r = FindWorkload(id);
    if (r != nullptr && r->yields_to == preemptor) out.push_back(id);
  }
  return out;
}

WorkloadRecord* Ledger::FindWorkload(std::string_view id) {
  auto it = workloads_.find(std::string(id));
  return it == workloads_.end() ? nullptr : &it->second;
}

const WorkloadRecord* Ledger::FindWorkload(std::string_view id) const {
  auto it = workloads_.find(std::string(id));
  return it == workloads_.end() ? nullptr : &it->second;
}

const WorkloadRecord* Ledger::Resolve(std::string_view id_or_name) const {
  if (const WorkloadRecord* r = FindWorkload(id_or_name)) return r;
  const WorkloadRecord* best = nullptr;
  auto [lo, hi] = by_name_.equal_range(id_or_name);
  for (auto it = lo; it != hi; ++it) {
    const WorkloadRecord* r = FindWorkload(it->second);
    if (r == nullptr) continue;
    if (best == nullptr || r->submitted > best->submitted ||
        (r->submitted == best->submitted && r->id > best->id)) {
      best = r;
    }
  }
  return best;
}

std::vector<const WorkloadRecord*> Ledger::Named(std::string_view name) const {
  std::vector<const WorkloadRecord*> out;
  auto [lo, hi] = by_name_.equal_range(name);
  for (auto it = lo; it != hi; ++it) {
    if (const WorkloadRecord* r = FindWorkload(it->second)) out.push_back(r);
  }
  return out;
}

size_t Ledger::active_count() const {
  size_t n = 0;
  for (const auto& [id, r] : workloads_) n += IsTerminal(r.state) ? 0 : 1;
  return n;
}

std::map<std::string, std::map<int, int32_t>> Ledger::DeviceUsage() const {
  std::map<std::string, std::map<int, int32_t>> usage;
  for (const auto& [id, r] : workloads_) {
    if (!r.holds_quota()) continue;
    for (const auto& p : r.placements) {
      for (const auto& d : p.devices) usage[p.node][d.index] += d.milli;
    }
  }
  return usage;
}

bool Ledger::RemoveConfig(const std::string& store_kind, const std::string& name) {
  const std::string key = store_kind + "/" + name;
  auto it = std::find_if(config_objects_.begin(), config_objects_.end(), [&](const auto& e) { return e.first == key; });
  if (it == config_objects_.end()) return false;
  config_objects_.erase(it);
  RebuildConfig();
  return true;
}

}  // namespace abacus::server
