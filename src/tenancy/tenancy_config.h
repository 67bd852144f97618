// TenancyConfig: every tenancy object (tenants, projects, cohorts, queues, priority classes,
// flavors, pools) with where it was defined, and the cross-reference checks between them.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/diagnostic.h"
#include "common/status.h"
#include "tenancy/pool.h"
#include "tenancy/priority_class.h"
#include "tenancy/queue.h"
#include "tenancy/reservation.h"
#include "tenancy/tenant.h"
#include "tenancy/yaml_reader.h"

namespace abacus {

// Where an object was defined: file, line of its document and lines of its fields.
struct SourceLocation {
  std::string file;
  int line = 0;
  FieldLines fields;
  // Returns the line of `field`, else of the document.
  int LineOf(const std::string& field) const;
  // Returns "FILE:LINE" (or "" when unknown).
  std::string ToString() const;
};

class TenancyConfig {
 public:
  // Each Add keeps the object; AlreadyExists (naming where the first was defined) when an
  // object of that kind and name is already present. A PriorityClass may replace a default.
  Status AddTenant(Tenant t, SourceLocation loc = {});
  Status AddProject(Project p, SourceLocation loc = {});
  Status AddCohort(Cohort c, SourceLocation loc = {});
  Status AddQueue(Queue q, SourceLocation loc = {});
  Status AddPriorityClass(PriorityClass pc, SourceLocation loc = {});
  Status AddFlavor(FlavorConfig f, SourceLocation loc = {});
  Status AddPool(PoolConfig p, SourceLocation loc = {});
  Status AddCluster(ClusterConfig c, SourceLocation loc = {});
  Status AddReservation(ReservationConfig r, SourceLocation loc = {});

  // Checks every cross-reference and reports each problem at the referencing field:
  //   project → tenant; queue → tenant, cohort, quota flavors; cohort → parent (unknown
  //   parents, cycles), quota flavors; pool → tenants; tenant → pools.
  // A reference to a kind is checked only when at least one object of that kind is present
  // (offline validation of a partial set); cohort parents and cycles are always checked.
  void CheckReferences(Diagnostics& diags) const;

  const Tenant* FindTenant(std::string_view name) const;
  // `full_name` is "tenant/project".
  const Project* FindProject(std::string_view full_name) const;
  const Cohort* FindCohort(std::string_view name) const;
  const Queue* FindQueue(std::string_view name) const;
  // Returns a class added here, else the default of that name, else nullptr.
  const PriorityClass* FindPriorityClass(std::string_view name) const;
  const FlavorConfig* FindFlavor(std::string_view name) const;
  const PoolConfig* FindPool(std::string_view name) const;
  const ClusterConfig* FindCluster(std::string_view name) const;
  const ReservationConfig* FindReservation(std::string_view name) const;
  // Returns where the object of `kind` ("Queue", …) and `name` was defined, or nullptr.
  const SourceLocation* LocationOf(std::string_view kind, std::string_view name) const;

  // Objects in the order they were added.
  std::vector<const Tenant*> tenants() const { return All(tenants_); }
  std::vector<const Project*> projects() const { return All(projects_); }
  std::vector<const Cohort*> cohorts() const { return All(cohorts_); }
  std::vector<const Queue*> queues() const { return All(queues_); }
  std::vector<const PriorityClass*> priority_classes() const { return All(priority_classes_); }
  // Every class a workload may name: those added here, then each default not redefined here
  // (what FindPriorityClass finds).
  std::vector<const PriorityClass*> AllPriorityClasses() const;
  std::vector<const FlavorConfig*> flavors() const { return All(flavors_); }
  std::vector<const PoolConfig*> pools() const { return All(pools_); }
  std::vector<const ClusterConfig*> clusters() const { return All(clusters_); }
  std::vector<const ReservationConfig*> reservations() const { return All(reservations_); }

  // Returns the cohorts from `cohort` up to its root ([cohort, parent, …, root]);
  // NotFound for an unknown cohort, FailedPrecondition for a cycle.
  Result<std::vector<std::string>> CohortChain(std::string_view cohort) const;
  // Returns the fair-share weight of `flavor` in thousandths (1000 when not configured).
  int64_t FlavorWeightMilli(const Flavor& flavor) const;

 private:
  template <typename T>
  struct Table {
    struct Entry {
      T value;
      SourceLocation loc;
    };
    std::vector<Entry> items;
    std::map<std::string, size_t, std::less<>> index;
    const T* Find(std::string_view name) const;
    Status Add(std::string_view kind, std::string name, T value, SourceLocation loc);
  };
  template <typename T>
  static std::vector<const T*> All(const Table<T>& t) {
    std::vector<const T*> out;
    for (const auto& e : t.items) out.push_back(&e.value);
    return out;
  }

  Table<Tenant> tenants_;
  Table<Project> projects_;
  Table<Cohort> cohorts_;
  Table<Queue> queues_;
  Table<PriorityClass> priority_classes_;
  Table<FlavorConfig> flavors_;
  Table<PoolConfig> pools_;
  Table<ClusterConfig> clusters_;
  Table<ReservationConfig> reservations_;
};

}  // namespace abacus
