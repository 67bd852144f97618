// The route table and the one authorization step (route_table.h).
#include "server/route_table.h"

#include <httplib.h>

#include "common/ascii.h"
#include "server/control_plane.h"
#include "server/governance.h"
#include "server/request_authorization.h"

namespace abacus::server {
namespace {

using govern::Action;
using govern::Resource;

// The route the request this thread serves matched (MatchRequest), and its first capture.
struct MatchedRoute {
  const Route* route = nullptr;
  std::string name;
};
thread_local MatchedRoute t_route;

// The beginning of `pattern` before its first regular-expression character.
std::string LiteralPrefix(const std::string& pattern) {
  size_t end = pattern.find_first_of("()[]{}.*+?^$|\\");
  return pattern.substr(0, end == std::string::npos ? pattern.size() : end);
}

// A request no route matches (the server answers 404 unless a file or the dashboard serves it).
Status AuthorizeUnrouted(const httplib::Request& req, RequestContext& ctx) {
  const govern::Principal& who = ctx.caller.principal;
  const std::string& m = req.method;
  const bool admin = who.HasRole(Role::kAdmin);
  if (req.path.rfind("/api/v1/", 0) != 0) {
    // Not the API (the web UI's static files): readable by every user, anything else admin only.
    if (!IsMutating(m) || admin) return Status::OK();
    return PermissionDenied(who.ToString() + " may not " + m + " " + req.path);
  }
  // The audit entry's object kind: the path's first segment under /api/v1/.
  size_t start = req.path.find_first_not_of('/', 8);
  if (start == std::string::npos) {
    return admin ? Status::OK() : PermissionDenied(who.ToString() + " may not " + m + " " + req.path);
  }
  ctx.object_kind = req.path.substr(start, req.path.find('/', start) - start);
  if (admin) {
    ctx.action = AsciiLower(m) + " " + req.path;
    return Status::OK();
  }
  return PermissionDenied(who.ToString() + " may not " + m + " " + req.path + " (admin only)");
}

// Fills the audit part of `ctx` from `a`; `name` is the path's first capture.
void NoteAudit(const Access& a, const std::string& name, RequestContext& ctx) {
  if (!a.audited) ctx.audit = false;
  if (!a.audit.empty()) ctx.action = a.audit;
  if (!a.object_kind.empty()) ctx.object_kind = a.object_kind;
  if (!a.object_name.empty()) ctx.object_name = a.object_name;
  if (a.named) ctx.object_name = name;
}

// `a`'s rule for the caller of `ctx`; `name` is the path's first capture.
Status AuthorizeDeclared(ControlPlane& cp, const Access& a, const std::string& name, const httplib::Request& req,
                         RequestContext& ctx) {
  const govern::Principal& who = ctx.caller.principal;
  switch (a.rule) {
    case Rule::kPublic:
    case Rule::kAnyUser:
      return Status::OK();
    case Rule::kWorkload:
      return AuthorizeWorkload(cp, ctx, name, a.action);
    case Rule::kCluster:
      return govern::Authorize(who, a.action, Resource::ForCluster(a.resource, a.resource_named ? name : ""));
    case Rule::kQueue: {
      // A queue the caller may not see answers exactly like a missing one: 404, as the handler
      // answers an admin for a missing queue.
      auto q = cp.GetQueue(name);
      if (q.ok()) ctx.tenant = q->queue.tenant;
      Resource queue = Resource::ForTenantObject("queue", name, ctx.tenant);
      if (!q.ok() || !govern::Sees(&who, queue)) {
        return who.HasRole(Role::kAdmin) ? Status::OK() : NotFound(QueueNotFound(name));
      }
      return govern::Authorize(who, a.action, queue);
    }
    case Rule::kCrossTenant:
      return AuthorizeCrossTenant(who, req.path);
    case Rule::kReports:
      return AuthorizeReports(who, name);
    case Rule::kAgent:
      return govern::Authorize(who, a.action, Resource::ForNode(""));
  }
  return PermissionDenied(who.ToString() + " may not make this request");
}

// A declaration of `rule` and `action`, its entry named `audit` about an object of kind `kind`.
Access Declared(Rule rule, Action action, std::string audit = "", std::string kind = "") {
  Access a;
  a.rule = rule;
  a.action = action;
  a.audit = std::move(audit);
  a.object_kind = std::move(kind);
  return a;
}

}  // namespace

Access Public() { return Declared(Rule::kPublic, Action::kRead); }

Access AnyUser(std::string audit, std::string kind) {
  return Declared(Rule::kAnyUser, Action::kRead, std::move(audit), std::move(kind));
}

Access OnWorkload(Action action, std::string audit) {
  return Declared(Rule::kWorkload, action, std::move(audit), "workload");
}

Access OnCluster(Action action, std::string resource, std::string audit, std::string kind, bool named) {
  Access a = Declared(Rule::kCluster, action, std::move(audit), std::move(kind));
  a.resource = std::move(resource);
  a.named = named;
  a.resource_named = named;
  return a;
}

Access OnQueue(Action action, std::string audit) {
  Access a = Declared(Rule::kQueue, action, std::move(audit), "queue");
  a.named = true;
  return a;
}

Access CrossTenant() { return Declared(Rule::kCrossTenant, Action::kRead); }

Access Reports() { return Declared(Rule::kReports, Action::kRead); }

Access ForAgent(Action action, bool audited, std::string audit, std::string kind) {
  Access a = Declared(Rule::kAgent, action, std::move(audit), std::move(kind));
  a.audited = audited;
  return a;
}

Access WithDryRun(Access a) {
  a.dry_run = true;
  return a;
}

void RouteTable::Add(const std::string& method, const std::string& pattern, Access access, RouteHandler handler) {
  routes_.push_back(Route{method, pattern, std::move(access), std::regex(pattern), LiteralPrefix(pattern)});
  if (method == "GET") {
    server_.Get(pattern, std::move(handler));
  } else if (method == "POST") {
    server_.Post(pattern, std::move(handler));
  } else if (method == "PUT") {
    server_.Put(pattern, std::move(handler));
  } else if (method == "PATCH") {
    server_.Patch(pattern, std::move(handler));
  } else if (method == "DELETE") {
    server_.Delete(pattern, std::move(handler));
  }
}

const Route* RouteTable::Match(const std::string& method, const std::string& path, std::smatch* m) const {
  // cpp-httplib serves HEAD with the GET routes and tries a method's routes in order.
  const std::string& as = method == "HEAD" ? std::string("GET") : method;
  for (const Route& r : routes_) {
    if (r.method != as || path.compare(0, r.literal.size(), r.literal) != 0) continue;
    if (std::regex_match(path, *m, r.regex)) return &r;
  }
  return nullptr;
}

const Route* MatchRequest(const RouteTable& table, const httplib::Request& req) {
  std::smatch m;
  t_route.route = table.Match(req.method, req.path, &m);
  t_route.name = t_route.route != nullptr && m.size() > 1 ? m[1].str() : "";
  return t_route.route;
}

Status AuthorizeRequest(ControlPlane& cp, const httplib::Request& req, RequestContext& ctx) {
  const Caller& caller = ctx.caller;
  const govern::Principal& who = caller.principal;
  const Route* route = t_route.route;
  // An agent's routes are noted first: a refused agent call's entry names what it asked for.
  if (route != nullptr && route->access.rule == Rule::kAgent) NoteAudit(route->access, t_route.name, ctx);
  if (caller.IsBootstrapAgent()) return cp.governance().AuthorizeBootstrap(caller, req.method, req.path);
  if (who.kind != govern::Principal::Kind::kUser) {
    return PermissionDenied(who.ToString() + " may not " + req.method + " " + req.path +
                            " (agent credentials: /api/v1/agent/ only)");
  }
  if (route == nullptr) return AuthorizeUnrouted(req, ctx);
  if (route->access.rule != Rule::kAgent) NoteAudit(route->access, t_route.name, ctx);
  return AuthorizeDeclared(cp, route->access, t_route.name, req, ctx);
}

bool IsDryRun(const httplib::Request& req) {
  if (t_route.route == nullptr || !t_route.route->access.dry_run || !req.has_param("dryRun")) return false;
  // Any value but 0 or false is a dry run: a misspelt value never stores what was only to be tried.
  std::string v = req.get_param_value("dryRun");
  return v != "0" && v != "false";
}

}  // namespace abacus::server
