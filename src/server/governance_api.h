// The HTTP side of governance (docs/governance.md, docs/api.md "Governance"): every request is
// authenticated, rate-limited per token and authorized per route before its handler runs, and
// every mutating request is appended to the audit chain (with its request id) before its answer
// is sent. Plus the routes /api/v1/tokens, /users, /policies and /audit.
//
// The request being served is kept per HTTP thread (cpp-httplib runs the pre-routing handler,
// the route handler and the post-routing handler of one request on one thread), so that route
// handlers can ask who is calling without changing their signatures.
#pragma once

#include <chrono>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "govern/identity.h"
#include "server/change_feed.h"
#include "server/request_authorization.h"
#include "server/request_thread.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}

namespace abacus {
struct Workload;
}

namespace abacus::server {

class ControlPlane;
class RouteTable;

// Installs the pre-routing handler (authentication; rate limit of `rate_limit` requests a second
// per token with bursts of `rate_burst`, none when rate_limit <= 0; authorization by the
// declaration of the route of `routes` the request matches, route_table.h) and the post-routing
// handler (audit entry of a mutating request, X-Request-Id) on `s`. `routes` outlives `s`'s serving.
void InstallGovernance(httplib::Server& s, ControlPlane& cp, const RouteTable& routes, double rate_limit,
                       double rate_burst);
// Whether the caller of the request being served still stands — its token not revoked or
// expired, its user enabled with the same roles, its node credential not reset
// (Governance::StillStands) — so that a long poll (a watch, a log follow, an agent's
// assignments) answers what happened while it waited only to a caller that may still see it.
// Sends the 401 on `res` and returns false when it does not.
bool CallerStillStands(const ControlPlane& cp, const httplib::Request& req, httplib::Response& res);
// `deadline`, or earlier when the caller's token expires before it: a long poll waits no longer
// than its caller stands, then asks CallerStillStands (401) before it answers. A revocation or
// a role change wakes it at once instead (Governance::OnCredentialsChanged).
std::chrono::steady_clock::time_point CallerDeadline(const ControlPlane& cp,
                                                     std::chrono::steady_clock::time_point deadline);
// The place of one more long poll of the request's caller (ChangeFeed::TakePlace, by its user,
// or its bootstrap name): null with 429 sent when the caller, or the server, holds the most
// allowed. Held by the handler until it answers.
std::unique_ptr<ChangeFeed::Place> TakeLongPollPlace(const ControlPlane& cp, httplib::Response& res);
// Adds /api/v1/tokens, /api/v1/users, /api/v1/policies, /api/v1/secrets and /api/v1/audit.
void AddGovernanceRoutes(RouteTable& t, ControlPlane& cp);

}  // namespace abacus::server
