// Which requests a caller may make (docs/governance.md "Authorization"): the pre-routing
// handler's check of each route, and the filters route handlers apply to what they list.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "server/request_thread.h"

namespace httplib {
struct Request;
}

namespace abacus {
struct Workload;
}

namespace abacus::server {

class ControlPlane;

// `s` in lower case (ASCII).
std::string Lower(std::string s);
// True for a method that may change something (not GET, HEAD or OPTIONS).
bool IsMutating(const std::string& method);
// The node an agent route acts for: the node whose credential (Caller::Via::kNodeCredential) the
// pre-routing handler authenticated for the request this thread serves, so that an agent call is
// authenticated once; "" for any other caller and outside a request.
std::string RequestNode();
// Decides whether the caller may make this request; fills the audit part of `ctx`.
Status AuthorizeRoute(ControlPlane& cp, const httplib::Request& req, RequestContext& ctx);

// True when `req` asks for a dry run (?dryRun=1; any value but 0 or false) on a route that has one: POST
// /api/v1/workloads, the apply routes, PUT and PATCH /api/v1/workloads/{id}. Such a request stores
// nothing and is not audited.
bool IsDryRun(const httplib::Request& req);
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
