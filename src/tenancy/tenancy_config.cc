#include "tenancy/tenancy_config.h"

#include <algorithm>
#include <set>

namespace abacus {

int SourceLocation::LineOf(const std::string& field) const {
  auto it = fields.find(field);
  return it != fields.end() && it->second > 0 ? it->second : line;
}

std::string SourceLocation::ToString() const {
  if (file.empty()) return line > 0 ? "line " + std::to_string(line) : "";
  return line > 0 ? file + ":" + std::to_string(line) : file;
}

template <typename T>
const T* TenancyConfig::Table<T>::Find(std::string_view name) const {
  auto it = index.find(name);
  return it == index.end() ? nullptr : &items[it->second].value;
}

template <typename T>
Status TenancyConfig::Table<T>::Add(std::string_view kind, std::string name, T value,
                                    SourceLocation loc) {
  auto it = index.find(name);
  if (it != index.end()) {
    std::string where = items[it->second].loc.ToString();
    return AlreadyExists("duplicate " + std::string(kind) + " '" + name + "'" +
                         (where.empty() ? "" : " (first defined at " + where + ")"));
  }
  index.emplace(std::move(name), items.size());
  items.push_back({std::move(value), std::move(loc)});
  return Status::OK();
}

Status TenancyConfig::AddTenant(Tenant t, SourceLocation loc) {
  std::string name = t.name;
  return tenants_.Add("Tenant", std::move(name), std::move(t), std::move(loc));
}
Status TenancyConfig::AddProject(Project p, SourceLocation loc) {
  std::string name = p.FullName();
  return projects_.Add("Project", std::move(name), std::move(p), std::move(loc));
}
Status TenancyConfig::AddCohort(Cohort c, SourceLocation loc) {
  std::string name = c.name;
  return cohorts_.Add("Cohort", std::move(name), std::move(c), std::move(loc));
}
Status TenancyConfig::AddQueue(Queue q, SourceLocation loc) {
  std::string name = q.name;
  return queues_.Add("Queue", std::move(name), std::move(q), std::move(loc));
}
Status TenancyConfig::AddPriorityClass(PriorityClass pc, SourceLocation loc) {
  std::string name = pc.name;
  return priority_classes_.Add("PriorityClass", std::move(name), std::move(pc), std::move(loc));
}
Status TenancyConfig::AddFlavor(FlavorConfig f, SourceLocation loc) {
  std::string name = f.flavor.name();
  return flavors_.Add("Flavor", std::move(name), std::move(f), std::move(loc));
}
Status TenancyConfig::AddPool(PoolConfig p, SourceLocation loc) {
  std::string name = p.name;
  return pools_.Add("Pool", std::move(name), std::move(p), std::move(loc));
}

const Tenant* TenancyConfig::FindTenant(std::string_view name) const { return tenants_.Find(name); }
const Project* TenancyConfig::FindProject(std::string_view n) const { return projects_.Find(n); }
const Cohort* TenancyConfig::FindCohort(std::string_view name) const { return cohorts_.Find(name); }
const Queue* TenancyConfig::FindQueue(std::string_view name) const { return queues_.Find(name); }
const FlavorConfig* TenancyConfig::FindFlavor(std::string_view n) const { return flavors_.Find(n); }
const PoolConfig* TenancyConfig::FindPool(std::string_view name) const { return pools_.Find(name); }
const ClusterConfig* TenancyConfig::FindCluster(std::string_view name) const { return clusters_.Find(name); }
Status TenancyConfig::AddCluster(ClusterConfig c, SourceLocation loc) {
  std::string name = c.name;
  return clusters_.Add("Cluster", std::move(name), std::move(c), std::move(loc));
}

const ReservationConfig* TenancyConfig::FindReservation(std::string_view name) const { return reservations_.Find(name); }
Status TenancyConfig::AddReservation(ReservationConfig r, SourceLocation loc) {
  std::string name = r.name;
  return reservations_.Add("Reservation", std::move(name), std::move(r), std::move(loc));
}

const PriorityClass* TenancyConfig::FindPriorityClass(std::string_view name) const {
  if (const auto* pc = priority_classes_.Find(name)) return pc;
  return FindDefaultPriorityClass(name);
}

std::vector<const PriorityClass*> TenancyConfig::AllPriorityClasses() const {
  std::vector<const PriorityClass*> out = priority_classes();
  for (const PriorityClass& pc : DefaultPriorityClasses()) {
    if (priority_classes_.Find(pc.name) == nullptr) out.push_back(&pc);
  }
  return out;
}

const SourceLocation* TenancyConfig::LocationOf(std::string_view kind, std::string_view name) const {
  auto find = [&](const auto& table) -> const SourceLocation* {
    auto it = table.index.find(name);
    return it == table.index.end() ? nullptr : &table.items[it->second].loc;
  };
  if (kind == "Tenant") return find(tenants_);
  if (kind == "Project") return find(projects_);
  if (kind == "Cohort") return find(cohorts_);
  if (kind == "Queue") return find(queues_);
  if (kind == "PriorityClass") return find(priority_classes_);
  if (kind == "Flavor") return find(flavors_);
  if (kind == "Pool") return find(pools_);
  if (kind == "Cluster") return find(clusters_);
  if (kind == "Reservation") return find(reservations_);
  return nullptr;
}

Result<std::vector<std::string>> TenancyConfig::CohortChain(std::string_view cohort) const {
  std::vector<std::string> chain;
  std::string current(cohort);
  while (!current.empty()) {
    const Cohort* c = cohorts_.Find(current);
    if (c == nullptr) return NotFound("unknown cohort '" + current + "'");
    if (std::find(chain.begin(), chain.end(), current) != chain.end()) {
      std::string path;
      for (const auto& n : chain) path += n + " -> ";
      return FailedPrecondition("cohort cycle: " + path + current);
    }
    chain.push_back(current);
    current = c->parent;
  }
  return chain;
}

int64_t TenancyConfig::FlavorWeightMilli(const Flavor& flavor) const {
  const FlavorConfig* f = flavors_.Find(flavor.name());
  return f == nullptr ? 1000 : f->weight_milli;
}

void TenancyConfig::CheckReferences(Diagnostics& diags) const {
  auto report = [&](const SourceLocation& loc, const std::string& field, std::string message) {
    diags.Add(loc.file, loc.LineOf(field), field, std::move(message));
  };
  auto check_quotas = [&](const std::vector<Quota>& quotas, const SourceLocation& loc) {
    if (flavors_.items.empty()) return;
    for (size_t i = 0; i < quotas.size(); ++i) {
      const auto& r = quotas[i].resource;
      if (r.kind == QuotaResource::Kind::kDevices && flavors_.Find(r.flavor.name()) == nullptr) {
        std::string field = "quotas[" + std::to_string(i) + "].resource";
        report(loc, field, "unknown flavor '" + r.flavor.name() + "' (no Flavor document defines it)");
      }
    }
  };

  for (const auto& e : tenants_.items) {
    if (pools_.items.empty()) break;
    for (size_t i = 0; i < e.value.pools.size(); ++i) {
      if (pools_.Find(e.value.pools[i]) == nullptr) {
        report(e.loc, "pools[" + std::to_string(i) + "]", "unknown pool '" + e.value.pools[i] + "'");
      }
    }
  }
  for (const auto& e : projects_.items) {
    if (!tenants_.items.empty() && tenants_.Find(e.value.tenant) == nullptr) {
      report(e.loc, "tenant", "unknown tenant '" + e.value.tenant + "'");
    }
  }
  for (const auto& e : queues_.items) {
    if (!tenants_.items.empty() && tenants_.Find(e.value.tenant) == nullptr) {
      report(e.loc, "tenant", "unknown tenant '" + e.value.tenant + "'");
    }
    if (!e.value.cohort.empty() && !cohorts_.items.empty() &&
        cohorts_.Find(e.value.cohort) == nullptr) {
      report(e.loc, "cohort", "unknown cohort '" + e.value.cohort + "'");
    }
    if (!clusters_.items.empty()) {
      for (const char* field : {"clusters", "preferredClusters"}) {
        const auto& list = std::string_view(field) == "clusters" ? e.value.clusters : e.value.preferred_clusters;
        for (size_t i = 0; i < list.size(); ++i) {
          if (clusters_.Find(list[i]) == nullptr) {
            report(e.loc, std::string(field) + "[" + std::to_string(i) + "]", "unknown cluster '" + list[i] + "'");
          }
        }
      }
    }
    check_quotas(e.value.quotas, e.loc);
  }
  std::set<std::string> cycle_reported;
  for (const auto& e : cohorts_.items) {
    const Cohort& c = e.value;
    if (!c.parent.empty() && cohorts_.Find(c.parent) == nullptr) {
      report(e.loc, "parent", "unknown parent cohort '" + c.parent + "'");
    }
    auto chain = CohortChain(c.name);
    if (!chain.ok() && chain.status().code() == StatusCode::kFailedPrecondition) {
      // Report a cycle once, at the first of its members to be defined.
      std::vector<std::string> members;
      std::string current = c.name;
      std::set<std::string> seen;
      while (seen.insert(current).second) current = cohorts_.Find(current)->parent;
      // `current` is on the cycle; collect it.
      std::string start = current;
      do {
        members.push_back(current);
        current = cohorts_.Find(current)->parent;
      } while (current != start);
      if (std::find(members.begin(), members.end(), c.name) != members.end() &&
          cycle_reported.insert(*std::min_element(members.begin(), members.end())).second) {
        std::string path;
        for (const auto& m : members) path += m + " -> ";
        report(e.loc, "parent", "cohort cycle: " + path + start);
      }
    }
    check_quotas(c.quotas, e.loc);
  }
  for (const auto& e : pools_.items) {
    if (tenants_.items.empty()) break;
    for (size_t i = 0; i < e.value.tenants.size(); ++i) {
      if (tenants_.Find(e.value.tenants[i]) == nullptr) {
        report(e.loc, "tenants[" + std::to_string(i) + "]",
               "unknown tenant '" + e.value.tenants[i] + "'");
      }
    }
  }
  for (const auto& e : reservations_.items) {
    const ReservationConfig& r = e.value;
    if (!r.tenant.empty() && !tenants_.items.empty() && tenants_.Find(r.tenant) == nullptr) {
      report(e.loc, "tenant", "unknown tenant '" + r.tenant + "'");
    }
    if (!r.queue.empty() && !queues_.items.empty() && queues_.Find(r.queue) == nullptr) {
      report(e.loc, "queue", "unknown queue '" + r.queue + "'");
    }
    if (!r.pool.empty() && !pools_.items.empty() && pools_.Find(r.pool) == nullptr) {
      report(e.loc, "devices.pool", "unknown pool '" + r.pool + "'");
    }
    if (!r.cluster.empty() && !clusters_.items.empty() && clusters_.Find(r.cluster) == nullptr) {
      report(e.loc, "devices.cluster", "unknown cluster '" + r.cluster + "'");
    }
  }
}

}  // namespace abacus
