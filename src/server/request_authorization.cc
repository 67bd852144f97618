// Which requests a caller may make: each route's check, and the list filters (request_authorization.h).
#include "server/request_authorization.h"

#include <httplib.h>

#include <set>
#include <string_view>
#include <vector>

#include "server/control_plane.h"
#include "server/governance.h"

namespace abacus::server {
namespace {

using nlohmann::json;
using govern::Action;
using govern::Resource;

std::vector<std::string> Segments(std::string_view path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (end > start) out.emplace_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Data that spans every tenant (reports, metrics): only admins and unscoped viewers.
Status AuthorizeCrossTenant(const govern::Principal& who, const std::string& what) {
  for (const auto& b : who.roles) {
    if (who.kind != govern::Principal::Kind::kUser) break;
    if (b.role == Role::kAdmin) return Status::OK();
    if (b.role == Role::kViewer && b.tenant.empty() && b.project.empty()) return Status::OK();
  }
  return PermissionDenied(who.ToString() + " may not read " + what +
                          ": it spans every tenant (admin or an unscoped viewer only)");
}

// The tenants whose reports `who` reads (issue 23): those it is tenant admin of, and those it
// views as a whole (a viewer bound to a tenant, not to one project).
std::set<std::string> ReportTenants(const govern::Principal& who) {
  std::set<std::string> tenants;
  if (who.kind != govern::Principal::Kind::kUser) return tenants;
  for (const auto& b : who.roles) {
    if (b.tenant.empty()) continue;
    if (b.role == Role::kTenantAdmin || (b.role == Role::kViewer && b.project.empty())) tenants.insert(b.tenant);
  }
  return tenants;
}

bool SeesEverything(const govern::Principal& who) {
  if (who.kind != govern::Principal::Kind::kUser) return false;
  for (const auto& b : who.roles) {
    if (b.role == Role::kAdmin) return true;
    if (b.role == Role::kViewer && b.tenant.empty() && b.project.empty()) return true;
  }
  return false;
}

Resource ConfigResource(const std::string& kind, const json& item) {
  std::string name = item.value("name", "");
  if (kind == "tenant") return Resource::ForTenantObject("tenant", name, name);
  if (kind == "project") {
    std::string tenant = item.value("tenant", "");
    return Resource::ForTenantObject("project", tenant + "/" + name, tenant);
  }
  if (kind == "queue") return Resource::ForTenantObject("queue", name, item.value("tenant", ""));
  return Resource::ForCluster(kind, name);
}

// The workload route `id`: resolve the id or name among the workloads the caller may see (the
// handler then acts on that id, RequestWorkloadId), read (and remember for the audit entry) the
// workload, then check `action` on it. A workload the caller may not see is 404, exactly like a
// missing one; an ambiguous name is 409 listing the ids.
Status AuthorizeWorkload(ControlPlane& cp, RequestContext& ctx, const std::string& id, Action action) {
  const govern::Principal& who = ctx.caller.principal;
  bool everything = SeesEverything(who);
  std::function<bool(const Workload&)> visible;
  if (!everything) visible = [&who](const Workload& w) { return govern::MaySee(who, Resource::ForWorkload(w)); };
  ABACUS_ASSIGN_OR_RETURN(std::string resolved, cp.ResolveWorkload(id, visible));
  ctx.workload_id = resolved;
  if (everything && !ctx.audit) return Status::OK();
  auto w = cp.GetWorkload(resolved);
  if (!w.ok()) return Status::OK();  // the handler answers 404
  std::string name = w->record.spec.name;
  std::string project = w->record.spec.project;
  Resource r = Resource::ForWorkload(name, project);
  ctx.workload_id = w->record.id;
  ctx.object_kind = "workload";
  ctx.object_name = project + "/" + name;
  ctx.tenant = r.tenant;
  ctx.before = json({{"id", ctx.workload_id}, {"state", WorkloadStateName(w->record.state)}}).dump();
  Status st = govern::Authorize(who, action, r);
  if (st.ok()) return st;
  if (!govern::MaySee(who, r)) return NotFound("workload '" + id + "' not found");
  return st;
}

}  // namespace

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool IsMutating(const std::string& method) { return method != "GET" && method != "HEAD" && method != "OPTIONS"; }

// Decides whether the caller may make this request; fills the audit part of `ctx`.
Status AuthorizeRoute(ControlPlane& cp, const httplib::Request& req, RequestContext& ctx) {
  const Caller& caller = ctx.caller;
  const govern::Principal& who = caller.principal;
  const std::string& m = req.method;
  if (req.path == "/api/v1/agent/register") {
    ctx.action = "agent-register";
    ctx.object_kind = "node";
  } else if (req.path.rfind("/api/v1/agent/", 0) == 0) {
    ctx.audit = false;  // telemetry: heartbeats, assignments, task status, logs
  }
  if (caller.IsBootstrapAgent()) return cp.governance().AuthorizeBootstrap(caller, m, req.path);
  if (who.kind != govern::Principal::Kind::kUser) {
    return PermissionDenied(who.ToString() + " may not " + m + " " + req.path + " (agent credentials: /api/v1/agent/ only)");
  }
  const bool admin = who.HasRole(Role::kAdmin);
  if (req.path == "/readyz") return Status::OK();
  if (req.path == "/metrics") return AuthorizeCrossTenant(who, "/metrics");
  if (req.path.rfind("/api/v1/", 0) != 0) {
    // Not the API (the web UI's static files): readable by every user, anything else admin only.
    if (!IsMutating(m) || admin) return Status::OK();
    return PermissionDenied(who.ToString() + " may not " + m + " " + req.path);
  }
  std::vector<std::string> seg = Segments(std::string_view(req.path).substr(8));
  if (seg.empty()) return admin ? Status::OK() : PermissionDenied(who.ToString() + " may not " + m + " " + req.path);
  const std::string& top = seg[0];
  if (ctx.object_kind.empty()) ctx.object_kind = top;

  if (top == "workloads") {
    ctx.object_kind = "workload";
    if (seg.size() == 1) {
      ctx.action = "create";
      return Status::OK();  // POST: ControlPlane::Submit checks each workload; GET: filtered
    }
    const std::string& id = seg[1];
    Action action = Action::kRead;
    if (m == "DELETE" && seg.size() == 2) {
      action = Action::kCancel;
      ctx.action = "cancel";
    } else if (m == "POST") {
      std::string verb = seg.size() > 2 ? seg[2] : "";
      action = verb == "cancel" ? Action::kCancel : verb == "scale" ? Action::kScale : Action::kUpdate;
      ctx.action = verb == "cancel" || verb == "scale" ? verb : "update";
      if (verb == "quota") {  // a temporary quota decision: tenant admins and admins
        action = Action::kQuotaChange;
        ctx.action = "quota-decision";
      }
      // Operator control (fleet_api.h): each verb its own action and audit name.
      if (verb == "hold" || verb == "release" || verb == "suspend" || verb == "resume") {
        action = Action::kHold;
        ctx.action = verb;
      } else if (verb == "requeue") {
        action = Action::kRequeue;
        ctx.action = verb;
      } else if (verb == "priority") {
        action = Action::kPriorityChange;
        ctx.action = "priority-change";
      }
    } else if (m != "GET") {
      action = Action::kUpdate;
      ctx.action = "update";
    }
    return AuthorizeWorkload(cp, ctx, id, action);
  }
  if (top == "services") {  // GET …/services/{SERVICE}/endpoints (endpoints_api.h): read like the workload
    ctx.object_kind = "workload";
    if (seg.size() < 2 || IsMutating(m)) return PermissionDenied(who.ToString() + " may not " + m + " " + req.path);
    return AuthorizeWorkload(cp, ctx, seg[1], Action::kRead);
  }
  if (top == "queues" && seg.size() == 3 && IsMutating(m)) {  // suspend / resume (fleet_api.h)
    ctx.action = seg[2];
    ctx.object_kind = "queue";
    ctx.object_name = seg[1];
    auto q = cp.GetQueue(seg[1]);
    if (!q.ok()) return admin ? Status::OK() : PermissionDenied(who.ToString() + " may not " + seg[2] + " queue " + seg[1]);
    ctx.tenant = q->queue.tenant;
    return govern::Authorize(who, Action::kQueueControl, Resource::ForTenantObject("queue", seg[1], ctx.tenant));
  }
  if (top == "reservations" && m == "DELETE") {  // reservations_api.h: admins, as applying one
    ctx.action = "reservation-delete";
    ctx.object_kind = "reservation";
    ctx.object_name = seg.size() > 1 ? seg[1] : "";
    return govern::Authorize(who, Action::kApplyConfig, Resource::ForCluster("reservation", ctx.object_name));
  }
  static const std::set<std::string> kConfigKinds = {"apply",  "tenants", "projects", "cohorts",  "queues",
                                                     "priorityclasses", "pools", "clusters", "flavors",
                                                     "reservations"};
  if (kConfigKinds.count(top) > 0) {
    // POST: ControlPlane::Apply checks each document. GET: lists are filtered, cluster-level
    // kinds (cohorts, priority classes, pools, flavors) are readable by every user.
    ctx.action = "apply";
    ctx.object_kind = "config";
    return Status::OK();
  }
  if (top == "nodes" || top == "devices" || top == "pricelists") {
    if (!IsMutating(m)) return govern::Authorize(who, Action::kRead, Resource::ForCluster("node", ""));
    ctx.action = "node-put";
    ctx.object_kind = "node";
    if (top == "nodes" && seg.size() == 3 && seg[2] == "reset") {  // abacus node reset NAME
      ctx.action = "node-reset";
      ctx.object_name = seg[1];
    }
    if (top == "nodes" && seg.size() == 3 && (seg[2] == "cordon" || seg[2] == "uncordon" || seg[2] == "drain")) {
      ctx.action = seg[2];  // fleet_api.h
      ctx.object_name = seg[1];
      return govern::Authorize(who, Action::kNodeControl, Resource::ForCluster("node", seg[1]));
    }
    return govern::Authorize(who, Action::kApplyConfig, Resource::ForCluster("node", ""));
  }
  if (top == "version" && !IsMutating(m)) return Status::OK();  // any authenticated user
  // Who the caller is and what it may do: any authenticated caller, about itself (whoami_api.h).
  if (top == "whoami" && !IsMutating(m)) return Status::OK();
  // Fair share per queue: the handler keeps the queues the caller may see (shares_api.h).
  if (top == "shares" && !IsMutating(m)) return Status::OK();
  // Workload events: the handler keeps those of the workloads the caller may see (watch_api.cc).
  if (top == "events" && !IsMutating(m)) return Status::OK();
  // Archived evaluation results: the handler keeps those of the workloads the caller may see.
  if (top == "evaluations" && !IsMutating(m)) return Status::OK();
  if (top == "reports") {
    // Admins and unscoped viewers read every tenant's rows; tenant admins (and viewers of a whole
    // tenant) their own tenants' rows (RequestReportTenants).
    if (SeesEverything(who) || !ReportTenants(who).empty()) return Status::OK();
    return PermissionDenied(who.ToString() + " may not read report " + (seg.size() > 1 ? seg[1] : std::string()) +
                            ": reports are for admins, tenant admins (their tenants' rows) and viewers of a "
                            "whole tenant; ask a tenant admin for the report");
  }
  if (top == "agent") {
    Action a = req.path == "/api/v1/agent/register" ? Action::kAgentRegister
               : req.path == "/api/v1/agent/heartbeat" || req.path == "/api/v1/agent/assignments"
                   ? Action::kAgentHeartbeat
                   : Action::kAgentReport;
    return govern::Authorize(who, a, Resource::ForNode(""));
  }
  if (top == "tokens") {
    ctx.object_kind = "token";
    ctx.action = m == "DELETE" ? "token-revoke" : "token-create";
    if (seg.size() == 2 && seg[1] == "rotate-admin") {
      ctx.action = "admin-token-rotate";
      ctx.object_name = "admin";
    }
    return Status::OK();  // the handlers check each token
  }
  if (top == "users" || top == "policies") {
    ctx.object_kind = top == "users" ? "user" : "policy";
    ctx.action = m == "DELETE" ? ctx.object_kind + "-delete" : "apply";
    return Status::OK();  // the handlers (and Apply) check each object
  }
  if (top == "secrets") {
    ctx.object_kind = "secret";
    ctx.action = m == "DELETE" ? "secret-delete" : seg.size() == 2 && seg[1] == "reencrypt" ? "secret-reencrypt" : "secret-create";
    return Status::OK();  // the handlers (SecretVault) check each secret
  }
  if (top == "audit") return Status::OK();  // the handler filters by tenant
  if (admin) {
    ctx.action = Lower(m) + " " + req.path;
    return Status::OK();
  }
  return PermissionDenied(who.ToString() + " may not " + m + " " + req.path + " (admin only)");
}

std::string RequestNode() {
  if (!t_request.active || t_request.caller.via != Caller::Via::kNodeCredential) return "";
  return t_request.caller.bootstrap.name;
}

bool IsDryRun(const httplib::Request& req) {
  if (!req.has_param("dryRun")) return false;
  // PUT/PATCH of one workload (an update's diff, nothing stored).
  if ((req.method == "PUT" || req.method == "PATCH") && req.path.rfind("/api/v1/workloads/", 0) == 0 &&
      req.path.find('/', 18) == std::string::npos) {
    std::string v = req.get_param_value("dryRun");
    return v != "0" && v != "false";
  }
  if (req.method != "POST") return false;
  // Any value but 0 or false is a dry run: a misspelt value never stores what was only to be tried.
  std::string v = req.get_param_value("dryRun");
  if (v == "0" || v == "false") return false;
  static const std::set<std::string> kRoutes = {"/api/v1/workloads", "/api/v1/apply",  "/api/v1/tenants",
                                                "/api/v1/projects",  "/api/v1/cohorts", "/api/v1/queues",
                                                "/api/v1/priorityclasses", "/api/v1/pools", "/api/v1/clusters",
                                                "/api/v1/flavors",   "/api/v1/users",   "/api/v1/policies"};
  return kRoutes.count(req.path) != 0;
}

std::function<bool(const Workload&)> RequestWorkloadFilter() {
  if (!t_request.active || SeesEverything(t_request.caller.principal)) return nullptr;
  return [who = t_request.caller.principal](const Workload& w) { return govern::MaySee(who, Resource::ForWorkload(w)); };
}

std::function<bool(const std::string&)> RequestReportTenants() {
  if (!t_request.active || SeesEverything(t_request.caller.principal)) return nullptr;
  return [tenants = ReportTenants(t_request.caller.principal)](const std::string& tenant) {
    return tenants.count(tenant) != 0;
  };
}

json FilterVisibleConfig(const std::string& kind, json list) {
  if (!t_request.active || SeesEverything(t_request.caller.principal) || !list.contains("items")) return list;
  json kept = json::array();
  for (auto& item : list["items"]) {
    if (govern::MaySee(t_request.caller.principal, ConfigResource(kind, item))) kept.push_back(std::move(item));
  }
  list["items"] = std::move(kept);
  return list;
}

Result<json> VisibleConfig(const std::string& kind, Result<json> item) {
  if (!item.ok() || !t_request.active) return item;
  if (!govern::Authorize(t_request.caller.principal, Action::kRead, ConfigResource(kind, *item)).ok()) {
    return NotFound(kind + " '" + item->value("name", "") + "' not found");
  }
  return item;
}

}  // namespace abacus::server
