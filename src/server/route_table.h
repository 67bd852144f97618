// The server's one route table (issue 22, docs/governance.md "Authorization"): each route is
// declared once, with its method, path pattern, handler and access declaration (the rule and
// governance Action it is authorized by, its audit name and object kind, whether it has a dry
// run). The pre-routing handler looks up the route a request matches, as cpp-httplib will
// dispatch it, and authorizes the request from that declaration, once (AuthorizeRequest).
#pragma once

#include <cstdint>
#include <functional>
#include <regex>
#include <string>
#include <vector>

#include "common/status.h"
#include "govern/authorize.h"
#include "server/request_context.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace abacus::server {

class ControlPlane;

// How a route is authorized (after authentication, rate limits, and the agent credentials'
// own rules: AuthorizeBootstrap).
enum class Rule : uint8_t {
  kPublic,       // no token (GET /healthz, the dashboard): the pre-routing handler lets it through
  kAnyUser,      // any authenticated user; the handler filters what it lists or checks each object
  kWorkload,     // `action` on the workload the path names, resolved among those the caller may
                 // see (one it may not see is 404 like a missing one)
  kCluster,      // `action` on the cluster-level object of kind `resource`
  kQueue,        // `action` on the queue the path names, in its tenant (a missing one, or one the
                 // caller may not see: 404 QueueNotFound; admins reach the handler, which says so)
  kCrossTenant,  // data of every tenant: admins and unscoped viewers
  kReports,      // admins and unscoped viewers; tenant admins and whole-tenant viewers (their rows)
  kAgent,        // `action` on the node: an agent's call (users: admins)
};

// A route's access declaration. The audit fields are those of the request's audit entry.
struct Access {
  Rule rule = Rule::kAnyUser;
  govern::Action action = govern::Action::kRead;
  std::string audit;        // the entry's action; "" keeps the method in lower case
  std::string object_kind;  // the entry's object kind
  std::string object_name;  // a fixed object name ("" : none, or the path's with `named`)
  std::string resource;     // kCluster: the resource kind ("node", "reservation")
  bool named = false;       // the path's first capture names the object (the entry's object name)
  bool resource_named = false;  // kCluster: … and the resource authorized
  bool audited = true;      // false: never audited (agent telemetry)
  bool dry_run = false;     // ?dryRun=1 (any value but 0 or false) stores nothing, is not audited
};

// Declarations for the common cases.
// Served without a token.
Access Public();
// Any authenticated user; `audit` and `kind` name its audit entry.
Access AnyUser(std::string audit = "", std::string kind = "");
// `action` on the workload of the path's first capture; `audit` names the entry.
Access OnWorkload(govern::Action action, std::string audit = "");
// `action` on the cluster object `resource` (named by the path with `named`); entry `audit`, `kind`.
Access OnCluster(govern::Action action, std::string resource, std::string audit = "", std::string kind = "",
                 bool named = false);
// `action` on the queue of the path's first capture; `audit` names the entry.
Access OnQueue(govern::Action action, std::string audit);
// Admins and unscoped viewers only.
Access CrossTenant();
// Usage reports (AuthorizeReports).
Access Reports();
// `action` for an agent; `audited` false for its telemetry; `audit` and `kind` name its entry.
Access ForAgent(govern::Action action, bool audited, std::string audit = "", std::string kind = "");
// `a` with a dry run.
Access WithDryRun(Access a);

using RouteHandler = std::function<void(const httplib::Request&, httplib::Response&)>;

// One declared route.
struct Route {
  std::string method;   // GET (serves HEAD too), POST, PUT, PATCH or DELETE
  std::string pattern;  // cpp-httplib's: a regular expression the whole path matches
  Access access;
  std::regex regex;
  std::string literal;  // the pattern's literal beginning: a path without it cannot match
};

// The routes of one cpp-httplib server. Each route is registered with the server as it is
// declared, so that the server dispatches a request to the first route (in order of declaration)
// that Match finds. Declare every route before serving; reads are thread-safe after that.
class RouteTable {
 public:
  explicit RouteTable(httplib::Server& s) : server_(s) {}
  RouteTable(const RouteTable&) = delete;
  RouteTable& operator=(const RouteTable&) = delete;

  // Declares `method pattern` with its access and handler, and registers it with the server.
  void Add(const std::string& method, const std::string& pattern, Access access, RouteHandler handler);
  // Add for one method.
  void Get(const std::string& pattern, Access access, RouteHandler h) {
    Add("GET", pattern, std::move(access), std::move(h));
  }
  void Post(const std::string& pattern, Access access, RouteHandler h) {
    Add("POST", pattern, std::move(access), std::move(h));
  }
  void Put(const std::string& pattern, Access access, RouteHandler h) {
    Add("PUT", pattern, std::move(access), std::move(h));
  }
  void Patch(const std::string& pattern, Access access, RouteHandler h) {
    Add("PATCH", pattern, std::move(access), std::move(h));
  }
  void Delete(const std::string& pattern, Access access, RouteHandler h) {
    Add("DELETE", pattern, std::move(access), std::move(h));
  }

  // The route a `method` request for `path` is dispatched to (HEAD: a GET route), its captures
  // in `m` (which refers into `path`); null when none matches (the server answers 404).
  const Route* Match(const std::string& method, const std::string& path, std::smatch* m) const;
  // Every declared route, in order of declaration.
  const std::vector<Route>& routes() const { return routes_; }

 private:
  httplib::Server& server_;
  std::vector<Route> routes_;
};

// Finds the route `req` matches in `table` (null: none) and notes it, with the path's first
// capture, as the route of the request this thread serves (IsDryRun, AuthorizeRequest).
const Route* MatchRequest(const RouteTable& table, const httplib::Request& req);
// The one authorization step of a request (the pre-routing handler's, after authentication and
// rate limits): decides by the declaration of the route MatchRequest noted whether the caller of
// `ctx` may make `req`, filling the audit part of `ctx`. A request no route matches gets the
// default rule: outside /api/v1/ every user may read (the dashboard's files), anything else is
// for admins only.
Status AuthorizeRequest(ControlPlane& cp, const httplib::Request& req, RequestContext& ctx);
// True when `req` asks for a dry run (?dryRun=1; any value but 0 or false) on a route whose
// declaration has one (the route MatchRequest noted for the request this thread serves):
// POST /api/v1/workloads, the apply routes, PUT and PATCH /api/v1/workloads/{id}. Such a
// request stores nothing and is not audited.
bool IsDryRun(const httplib::Request& req);

}  // namespace abacus::server
