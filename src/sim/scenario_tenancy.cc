#include "sim/scenario_tenancy.h"

#include <algorithm>
#include <vector>

#include "sched/tenancy_snapshot.h"
#include "tenancy/tenancy_config.h"
#include "workload/documents.h"

namespace abacus::sim {

void AddTenancyBlock(std::string_view yaml, const std::string& file, int first_line, sched::Snapshot* cluster,
                     std::map<std::string, int32_t>* queues, std::map<std::string, int32_t>* cohorts,
                     Diagnostics* diags) {
  const size_t problems_before = diags->size();
  // Blank lines before the block's text keep the parser's line numbers the file's.
  std::string text(static_cast<size_t>(std::max(0, first_line - 1)), '\n');
  text += yaml;
  ParsedDocuments parsed = ParseDocuments(text, file);
  for (const Diagnostic& d : parsed.diagnostics.items()) diags->Add(d);
  if (!parsed.extensions.empty() || !parsed.governance.empty()) {
    diags->Add(file, first_line, "", "tenancy: only tenancy documents (Tenant, Project, Cohort, Queue, Pool, Flavor, Cluster)");
  }
  std::vector<Document> tenancy;
  for (Document& d : parsed.documents) {
    if (d.workload() != nullptr || std::holds_alternative<PriorityClass>(d.object) ||
        std::holds_alternative<ReservationConfig>(d.object)) {
      diags->Add(file, d.source.line, "kind",
                 "a tenancy block holds Tenant, Project, Cohort, Queue, Pool, Flavor and Cluster documents, not " +
                     std::string(d.kind()) + " (write workloads, priority classes and reservations as scenario lines)");
      continue;
    }
    tenancy.push_back(std::move(d));
  }
  TenancyConfig config;
  Diagnostics problems;
  AddToTenancyConfig(tenancy, config, problems);
  config.CheckReferences(problems);
  for (const Diagnostic& d : problems.items()) diags->Add(d);
  if (!problems.empty()) return;
  for (const Cohort* c : config.cohorts()) {
    if (cohorts->count(c->name)) diags->Add(file, first_line, "", "cohort '" + c->name + "' declared twice");
  }
  for (const Queue* q : config.queues()) {
    if (queues->count(q->name)) diags->Add(file, first_line, "", "queue '" + q->name + "' declared twice");
  }
  if (diags->size() != problems_before) return;
  const size_t first_cohort = cluster->cohorts.size();
  std::map<std::string, int> added;
  // The one translation the server's ledger and the event simulator use.
  for (const std::string& p : sched::AddTenancy(config, cluster, &added)) diags->Add(file, first_line, "", p);
  for (size_t i = first_cohort; i < cluster->cohorts.size(); ++i) {
    (*cohorts)[cluster->cohorts[i].name] = static_cast<int32_t>(i);
  }
  for (const auto& [name, index] : added) (*queues)[name] = index;
}

}  // namespace abacus::sim
