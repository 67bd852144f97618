// The one rule a workload passes before it is stored, for a submission and for an update alike
// (issue 22.4: one copy of each rule; an update once skipped the secrets check): the queue,
// project and priority class it names exist and the caller may see them, the caller's roles and
// its tenant's admission policies allow it (which sets its admission outcome), and every secret
// it names exists in its project or tenant with the keys it asks for.
//
//   Diagnostics diags;
//   ABACUS_RETURN_IF_ERROR(CheckWorkloads({*governance_, *secrets_, *ledger_.ConfigSnapshot()},
//                                         caller, docs, diags, context));
#pragma once

#include <vector>

#include "common/diagnostic.h"
#include "common/status.h"
#include "govern/authorize.h"
#include "server/request_context.h"
#include "tenancy/tenancy_config.h"
#include "workload/documents.h"

namespace abacus::server {

class Governance;
class SecretVault;

// What the checks read: the roles and policies, the secrets, the configuration now.
struct WorkloadCheckers {
  const Governance& governance;
  SecretVault& secrets;
  const TenancyConfig& config;
};

// Checks each workload of `docs` in that order: references (added to `diags`, which may already
// hold the documents' own problems, with FILE:LINE; any → their Status), then roles and
// admission (PermissionDenied naming policy and rule; sets each workload's admission), then
// secrets (FailedPrecondition naming secret and key). `caller` null: a trusted in-process caller.
Status CheckWorkloads(const WorkloadCheckers& checkers, const govern::Principal* caller, std::vector<Document>& docs,
                      Diagnostics& diags, RequestContext* context);

}  // namespace abacus::server
