#include "server/workload_checks.h"

#include "server/governance.h"
#include "server/secrets.h"

namespace abacus::server {

Status CheckWorkloads(const WorkloadCheckers& checkers, const govern::Principal* caller, std::vector<Document>& docs,
                      Diagnostics& diags, RequestContext* context) {
  // Another tenant's queue or project reads as unknown, not as forbidden.
  ReferenceVisible visible = govern::SeenBy(caller);
  for (const Document& d : docs) {
    if (const Workload* w = d.workload()) CheckWorkloadReferences(*w, d.source, checkers.config, diags, visible);
  }
  if (!diags.empty()) return diags.ToStatus();
  ABACUS_RETURN_IF_ERROR(checkers.governance.CheckSubmit(caller, docs, context));  // roles, admission policies
  for (const Document& d : docs) {
    if (const Workload* w = d.workload()) ABACUS_RETURN_IF_ERROR(checkers.secrets.CheckReferences(*w));
  }
  return Status::OK();
}

}  // namespace abacus::server
