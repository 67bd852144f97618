// Which requests a caller may make (docs/governance.md "Authorization"): the rules the route
// table's declarations use (route_table.h), and the filters route handlers apply to what they list.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "govern/authorize.h"
#include "server/request_thread.h"

namespace abacus {
struct Workload;
}

namespace abacus::server {

class ControlPlane;

// True for a method that may change something (not GET, HEAD or OPTIONS).
bool IsMutating(const std::string& method);
// The node an agent route acts for: the node whose credential (Caller::Via::kNodeCredential) the
// pre-routing handler authenticated for the request this thread serves, so that an agent call is
// authenticated once; "" for any other caller and outside a request.
std::string RequestNode();
// Resolves the workload `id` (an id or a name) among those the caller of `ctx` may see (the
// handler then acts on that id, RequestWorkloadId), notes it for the audit entry, and checks
// `action` on it. A workload the caller may not see is 404, exactly like a missing one; an
// ambiguous name is 409 listing the ids.
Status AuthorizeWorkload(ControlPlane& cp, RequestContext& ctx, const std::string& id, govern::Action action);
// Data that spans every tenant (`what`: /metrics): admins and unscoped viewers only.
Status AuthorizeCrossTenant(const govern::Principal& who, const std::string& what);
// Reading usage report `report`: admins, unscoped viewers, tenant admins and whole-tenant viewers.
Status AuthorizeReports(const govern::Principal& who, const std::string& report);
// The filter GET /api/v1/workloads applies for the caller (null: every workload is visible).
std::function<bool(const Workload&)> RequestWorkloadFilter();
// The tenants whose rows the caller's reports hold (null: every tenant's, for admins and
// unscoped viewers; else tenant admins' and whole-tenant viewers' tenants).
std::function<bool(const std::string& tenant)> RequestReportTenants();
// Keeps the items of a config list (`kind`: "tenant", "project", "queue", "cohort", …) that the
// caller may see.
nlohmann::json FilterVisibleConfig(const std::string& kind, nlohmann::json list);
// NotFound when the caller may not see the config object `item`.
Result<nlohmann::json> VisibleConfig(const std::string& kind, Result<nlohmann::json> item);

}  // namespace abacus::server
