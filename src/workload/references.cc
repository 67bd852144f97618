// Cross-references from a workload to the tenancy objects it names (see documents.h).
#include "workload/documents.h"

namespace abacus {

void CheckWorkloadReferences(const Workload& w, const SourceLocation& loc, const TenancyConfig& config,
                             Diagnostics& diags, const ReferenceVisible& visible) {
  auto report = [&](const std::string& field, std::string message) {
    diags.Add(loc.file, loc.LineOf(field), field, std::move(message));
  };
  const PriorityClass* pc = config.FindPriorityClass(w.priority_class);
  if (pc == nullptr) report("priorityClass", "unknown priority class '" + w.priority_class + "'");

  // Another tenant's project or queue, where the submitter may not see it, is a missing one.
  auto hidden = [&](std::string_view kind, const std::string& name, const std::string& tenant) {
    return visible && !visible(kind, name, tenant);
  };
  const Project* project = config.FindProject(w.project);
  if (project != nullptr && hidden("project", project->FullName(), project->tenant)) project = nullptr;
  if (!config.projects().empty() && project == nullptr) {
    report("project", "unknown project '" + w.project + "'");
  }
  const Queue* queue = config.FindQueue(w.queue);
  if (queue != nullptr && hidden("queue", queue->name, queue->tenant)) queue = nullptr;
  if (!config.queues().empty() && queue == nullptr) {
    report("queue", "unknown queue '" + w.queue + "'");
  }
  if (queue != nullptr) {
    if (queue->tenant != w.tenant()) {
      report("queue", "queue '" + queue->name + "' belongs to tenant '" + queue->tenant +
                          "', not to tenant '" + w.tenant() + "' of project " + w.project);
    }
    if (pc != nullptr && pc->borrowed_only && queue->cohort.empty()) {
      report("priorityClass", "priority class '" + pc->name +
                                  "' runs only on borrowed capacity but queue '" + queue->name +
                                  "' is in no cohort");
    }
    for (QuotaResource r : {QuotaResource::Cpu(), QuotaResource::Memory()}) {
      if (queue->FindQuota(r) == nullptr) {
        report("queue", "queue '" + queue->name + "' has no quota for " + r.Name());
      }
    }
    for (size_t i = 0; i < w.spec.task_groups.size(); ++i) {
      const auto& acc = w.spec.task_groups[i].resources.accelerators;
      if (!acc) continue;
      bool any = false;
      for (const auto& q : queue->quotas) {
        any = any || (q.resource.kind == QuotaResource::Kind::kDevices && acc->flavor.Matches(q.resource.flavor));
      }
      if (!any) {
        std::string field = "spec.taskGroups[" + std::to_string(i) + "].resources.accelerators.flavor";
        report(field, "queue '" + queue->name + "' has no quota for a flavor matching '" +
                          acc->flavor.text() + "'");
      }
    }
  }
  if (const auto* s = w.inference(); s != nullptr && s->reservation && !s->reservation->pool.empty() &&
                                     !config.pools().empty() && config.FindPool(s->reservation->pool) == nullptr) {
    report("spec.reservation.pool", "unknown pool '" + s->reservation->pool + "'");
  }
  if (const auto* e = w.experiment(); e != nullptr && e->temporary_quota &&
                                      e->temporary_quota->resource.kind == QuotaResource::Kind::kDevices &&
                                      !config.flavors().empty() &&
                                      config.FindFlavor(e->temporary_quota->resource.flavor.name()) == nullptr) {
    report("spec.temporaryQuota.resource",
           "unknown flavor '" + e->temporary_quota->resource.flavor.name() + "'");
  }
}

}  // namespace abacus
