// The HTTP side of governance (docs/governance.md, docs/api.md "Governance"): every request is
// authenticated, rate-limited per token and authorized per route before its handler runs, and
// every mutating request is appended to the audit chain (with its request id) before its answer
// is sent. Plus the routes /api/v1/tokens, /users, /policies and /audit.
//
// The request being served is kept per HTTP thread (cpp-httplib runs the pre-routing handler,
// the route handler and the post-routing handler of one request on one thread), so that route
// handlers can ask who is calling without changing their signatures.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "govern/identity.h"

namespace httplib {
class Server;
struct Request;
}

namespace abacus {
struct Workload;
}

namespace abacus::server {

class ControlPlane;

// Installs the pre-routing handler (authentication; rate limit of `rate_limit` requests a second
// per token with bursts of `rate_burst`, none when rate_limit <= 0; authorization per route)
// and the post-routing handler (audit entry of a mutating request, X-Request-Id) on `s`.
void InstallGovernance(httplib::Server& s, ControlPlane& cp, double rate_limit, double rate_burst);
// Adds /api/v1/tokens, /api/v1/users, /api/v1/policies and /api/v1/audit.
void AddGovernanceRoutes(httplib::Server& s, ControlPlane& cp);

// True when `req` asks for a dry run (?dryRun=1; any value but 0 or false) on a route that has one: POST
// /api/v1/workloads, the apply routes, PUT and PATCH /api/v1/workloads/{id}. Such a request stores
// nothing and is not audited.
bool IsDryRun(const httplib::Request& req);
// The principal of the request this thread serves; outside a request, a principal without roles.
const govern::Principal& RequestPrincipal();
// The workload id that the pre-routing handler resolved a workload route's WORKLOAD (id or
// name) to among what the caller may see; `from_path` outside such a request. Handlers act on it,
// so that what was authorized is what is changed.
std::string RequestWorkloadId(const std::string& from_path);
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
