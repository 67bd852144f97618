#include "server/governance_api.h"

#include <httplib.h>

#include <cmath>
#include <random>
#include <set>
#include <string_view>
#include <vector>

#include "common/duration_parse.h"
#include "common/time_spec.h"
#include "common/log.h"
#include "common/nesting.h"
#include "govern/crypto.h"
#include "net/http_framing.h"
#include "server/control_plane.h"
#include "server/error_detail.h"
#include "server/governance.h"
#include "server/http_answer.h"
#include "server/http_server.h"
#include "workload/utf8.h"
#include "server/ui_assets.h"

namespace abacus::server {
namespace {

using nlohmann::json;
using govern::Action;
using govern::Resource;

constexpr size_t kSummaryMax = 1024;

// What the pre-routing handler learned about the request this thread serves.
struct RequestContext {
  bool active = false;
  Caller caller;
  std::string request_id;
  bool audit = false;     // a mutating request: its entry is written before the answer
  std::string action;     // audit action
  std::string object_kind, object_name, tenant;
  std::string before;
  std::string workload_id;  // a workload route: read again for the "after" summary
  bool audited = false;     // the handler committed the entry with its change (CommitAudited)
  std::string replayed_key;  // the answer is an earlier request's, by its Idempotency-Key
  std::shared_ptr<PendingRequestAudit> pending;  // claimed by the commit of the change, if any
};

thread_local RequestContext t_request;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Param(const httplib::Request& req, const char* name) {
  return req.has_param(name) ? req.get_param_value(name) : "";
}

std::string Truncate(std::string s) {
  if (s.size() > kSummaryMax) s = s.substr(0, kSummaryMax - 3) + "...";
  return s;
}

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

bool IsMutating(const std::string& method) { return method != "GET" && method != "HEAD" && method != "OPTIONS"; }

// An id a client may pass in X-Request-Id: 1–64 of [A-Za-z0-9._-].
bool GoodRequestId(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
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
  std::string name = w->value("name", "");
  std::string project = w->value("project", "");
  Resource r = Resource::ForWorkload(name, project);
  ctx.workload_id = w->value("id", id);
  ctx.object_kind = "workload";
  ctx.object_name = project + "/" + name;
  ctx.tenant = r.tenant;
  ctx.before = json({{"id", ctx.workload_id}, {"state", w->value("state", "")}}).dump();
  Status st = govern::Authorize(who, action, r);
  if (st.ok()) return st;
  if (!govern::MaySee(who, r)) return NotFound("workload '" + id + "' not found");
  return st;
}

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
    ctx.tenant = q->value("tenant", "");
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

// The "after" summary and result of a finished mutating request.
void FinishRecord(ControlPlane& cp, const httplib::Request& req, const httplib::Response& res,
                  const RequestContext& ctx, govern::AuditRecord& r) {
  const bool plain = !res.has_header("Content-Encoding");
  json body = plain ? json::parse(res.body, nullptr, false) : json();
  const bool ok = res.status >= 200 && res.status < 300;
  if (ok) {
    r.result = "ok";
  } else {
    r.result = std::to_string(res.status);
    if (body.is_object() && body.contains("error") && body["error"].is_object()) {
      r.result += ": " + body["error"].value("message", "");
    }
    r.result = Truncate(r.result);
  }
  if (!ok) return;
  if (!ctx.replayed_key.empty()) {
    // A repeat changes nothing: its entry is a note, not a second change.
    r.after = Truncate("replay of Idempotency-Key '" + ctx.replayed_key + "': the first answer again, nothing changed");
    return;
  }
  if (!ctx.workload_id.empty()) {
    json after;
    if (auto w = cp.GetWorkload(ctx.workload_id); w.ok()) after["state"] = w->value("state", "");
    if (ctx.action == "scale") {
      json b = json::parse(req.body, nullptr, false);
      if (b.is_object() && b.contains("replicas")) after["replicas"] = b["replicas"];
    }
    r.after = after.dump();
    return;
  }
  if (!body.is_object()) return;
  // (A successful `create` other than a replay never gets here: its entry is committed with
  // the workloads, ControlPlane::Submit.)
  if (ctx.action == "apply" && body.contains("items")) {
    r.after = Truncate(body["items"].dump());
  } else if (ctx.action == "node-put" && body.contains("name")) {
    r.object_name = body.value("name", "");
    r.after = Truncate(json({{"state", body.value("state", "")}, {"devices", body.value("devices", json::array()).size()}}).dump());
  } else if (ctx.action == "agent-register") {
    r.object_name = body.value("node", r.object_name);  // never the credential
  } else if (ctx.object_kind == "token") {
    // Never the secret.
    r.after = json({{"id", body.value("id", "")}, {"user", body.value("user", "")}, {"active", body.value("active", false)},
                    {"expiresAt", body.value("expiresAt", "")}})
                  .dump();
  }
}

Result<std::optional<Duration>> ParseTtl(const json& body) {
  if (!body.contains("expires") || body["expires"].is_null()) return std::optional<Duration>();
  if (!body["expires"].is_string()) return InvalidArgument("expires: expected a duration like \"30d\" or \"12h\"");
  std::string text = body["expires"].get<std::string>();
  if (text.empty() || text == "never") return std::optional<Duration>();
  auto d = ParseDurationSpec(text);
  if (!d.ok()) return d.status().WithContext("expires");
  if (d->count() <= 0) return InvalidArgument("expires: must be positive");
  return std::optional<Duration>(*d);
}

}  // namespace

void NoteRequestObject(const std::string& kind, const std::string& name, const std::string& tenant) {
  RequestContext& ctx = t_request;
  if (!ctx.active) return;
  ctx.object_kind = kind;
  ctx.object_name = name;
  ctx.tenant = tenant;
}

std::string CurrentRequestId() { return t_request.active ? t_request.request_id : ""; }

std::string RequestWorkloadId(const std::string& from_path) {
  return t_request.active && !t_request.workload_id.empty() ? t_request.workload_id : from_path;
}

namespace {

// The fields of a request's entry that the request context knows (who, what, which object).
govern::AuditRecord ContextRecord(const RequestContext& ctx) {
  govern::AuditRecord r;
  r.actor = ctx.caller.Actor();
  r.action = ctx.action;
  r.object_kind = ctx.object_kind;
  r.object_name = ctx.object_name;
  r.tenant = ctx.tenant;
  r.before = Truncate(ctx.before);
  r.request_id = ctx.request_id;
  return r;
}

}  // namespace

std::optional<govern::AuditRecord> RequestAuditRecord(std::string after) {
  const RequestContext& ctx = t_request;
  if (!ctx.active || !ctx.audit || ctx.caller.principal.name.empty()) return std::nullopt;
  govern::AuditRecord r = ContextRecord(ctx);
  r.after = Truncate(std::move(after));
  r.result = "ok";
  return r;
}

void NoteRequestAudited() {
  if (t_request.active) t_request.audited = true;
}

void NoteRequestReplayed(const std::string& key) {
  if (t_request.active) t_request.replayed_key = key;
}

namespace {

thread_local std::shared_ptr<PendingRequestAudit> t_carried_audit;

// What a batch writes, for the "after" of the entry committed with it.
std::string BatchSummary(const WriteBatch& batch) {
  json out = json::array();
  for (const WriteOp& op : batch.ops()) {
    if (const auto* put = std::get_if<PutOp>(&op)) {
      out.push_back("put " + put->kind + "/" + put->key);
    } else if (const auto* del = std::get_if<DeleteOp>(&op)) {
      out.push_back("delete " + del->kind + "/" + del->key);
    } else if (const auto* event = std::get_if<EventOp>(&op)) {
      out.push_back("event " + event->object_kind + "/" + event->object_key + " " + event->type);
    }
  }
  return Truncate(out.dump());
}

}  // namespace

std::shared_ptr<PendingRequestAudit> CurrentRequestAudit() {
  RequestContext& ctx = t_request;
  if (!ctx.active) return t_carried_audit;
  if (!ctx.audit || ctx.audited || ctx.caller.principal.name.empty()) return nullptr;
  if (!ctx.pending) ctx.pending = std::make_shared<PendingRequestAudit>();
  // What the request knows now (its object is noted while it is served); fixed once claimed.
  if (!ctx.pending->claimed.load()) ctx.pending->record = ContextRecord(ctx);
  return ctx.pending;
}

CarryRequestAudit::CarryRequestAudit(std::shared_ptr<PendingRequestAudit> pending)
    : previous_(std::exchange(t_carried_audit, std::move(pending))) {}

CarryRequestAudit::~CarryRequestAudit() { t_carried_audit = std::move(previous_); }

std::optional<govern::AuditRecord> ClaimRequestAudit(PendingRequestAudit* pending, const WriteBatch& batch) {
  if (pending == nullptr || batch.empty() || pending->committed.load() || pending->claimed.exchange(true)) {
    return std::nullopt;
  }
  govern::AuditRecord r = pending->record;
  r.after = BatchSummary(batch);
  r.result = "ok";
  return r;
}

void SettleRequestAudit(PendingRequestAudit* pending, bool committed) {
  if (pending == nullptr) return;
  if (committed) {
    pending->committed = true;
  } else {
    pending->claimed = false;
  }
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

const govern::Principal& RequestPrincipal() {
  static const govern::Principal kNobody = govern::Principal::User("anonymous", {});
  return t_request.active ? t_request.caller.principal : kNobody;
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

// A request id no other request of this process gets, hard to guess across restarts: "req-" and
// 16 hex digits from a per-thread generator seeded once from the system's random source (a
// correlation id, not a secret; RAND_bytes per request cost 2% of a submission's CPU).
std::string NewRequestId() {
  thread_local uint64_t state = [] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }();
  // splitmix64: a bijection of the counter, so ids of one thread never repeat.
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  std::string id = "req-0000000000000000";
  for (size_t i = id.size(); i > 4; --i, z >>= 4) id[i - 1] = "0123456789abcdef"[z & 15];
  return id;
}

void InstallGovernance(httplib::Server& s, ControlPlane& cp, double rate_limit, double rate_burst) {
  cp.governance().SetRateLimit(rate_limit, rate_burst);
  s.set_pre_routing_handler([&cp](const httplib::Request& req, httplib::Response& res) {
    RequestContext& ctx = t_request;
    ctx = RequestContext();
    // The API does not serve byte ranges: answers are whole JSON documents (and an answer cut
    // to a range would not parse). (httplib owns `req` as a non-const object.)
    const_cast<httplib::Request&>(req).ranges.clear();
    if (req.path == "/healthz") return httplib::Server::HandlerResponse::Unhandled;
    // The dashboard's static files and login page need no token; its API calls carry one.
    // So do "/" (a redirect to /ui/) and the browser's /favicon.ico (no content).
    if ((req.method == "GET" || req.method == "HEAD") &&
        (IsUiPath(req.path) || req.path == "/" || req.path == "/favicon.ico")) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    ctx.active = true;
    std::string client_id = req.get_header_value("X-Request-Id");
    ctx.request_id = GoodRequestId(client_id) ? client_id : NewRequestId();
    // A refusal before the body was read: the connection cannot carry another request.
    auto refuse = [&](const Status& st) {
      SendStatus(res, st);
      if (!req.get_header_value("Content-Length").empty()) res.set_header("Connection", "close");
      return httplib::Server::HandlerResponse::Handled;
    };
    // Names, ids and filters come from the path and the query: they must be UTF-8 (they end up
    // in JSON answers and audit entries).
    if (FindInvalidUtf8(req.path)) return refuse(InvalidArgument("request path is not valid UTF-8"));
    for (const auto& [k, v] : req.params) {
      if (FindInvalidUtf8(k) || FindInvalidUtf8(v)) return refuse(InvalidArgument("query parameters are not valid UTF-8"));
    }
    std::string header = req.get_header_value("Authorization");
    auto caller = cp.governance().Authenticate(header.rfind("Bearer ", 0) == 0 ? header.substr(7) : "");
    if (!caller.ok()) {
      res.set_header("WWW-Authenticate", "Bearer realm=\"abacus\"");
      return refuse(caller.status());
    }
    ctx.caller = std::move(*caller);
    std::string bucket;
    if (double wait = cp.governance().Throttle(ctx.caller, &bucket); wait > 0) {
      cp.metrics().rejected_busy.fetch_add(1);
      int seconds = std::max(1, static_cast<int>(std::ceil(wait)));
      res.set_header("Retry-After", std::to_string(seconds));
      return refuse(ResourceExhausted("rate limit exceeded for " + bucket + ": retry after " +
                                      std::to_string(seconds) + "s"));
    }
    ctx.audit = IsMutating(req.method) && !IsDryRun(req);  // a dry run changes nothing
    ctx.action = Lower(req.method);
    if (ctx.audit) {
      // The answer of a mutating request is small: sent uncompressed, the post-routing handler
      // can read it for the audit entry. (httplib owns `req` as a non-const object.)
      const_cast<httplib::Request&>(req).headers.erase("Accept-Encoding");
    }
    Status allowed = AuthorizeRoute(cp, req, ctx);
    if (!allowed.ok()) return refuse(allowed);
    return httplib::Server::HandlerResponse::Unhandled;
  });
  s.set_post_routing_handler([&cp](const httplib::Request& req, httplib::Response& res) {
    cp.metrics().requests.Count(req.path, res.status);
    RequestContext& ctx = t_request;
    if (!ctx.active) return;
    ctx.active = false;
    res.set_header("X-Request-Id", ctx.request_id);
    if (!ctx.replayed_key.empty()) res.set_header("Idempotent-Replayed", "true");
    // Unauthenticated and throttled requests are not recorded (anyone could flood the chain).
    if (!ctx.audit || res.status == 401 || res.status == 429 || ctx.caller.principal.name.empty()) return;
    if (ctx.audited) return;  // committed with the change itself (CommitAudited)
    if (ctx.pending && ctx.pending->committed.load()) return;  // claimed by the change's commit
    govern::AuditRecord r = ContextRecord(ctx);
    FinishRecord(cp, req, res, ctx, r);
    Governance& gov = cp.governance();
    if (Status st = gov.WaitAudit(gov.EnqueueAudit(std::move(r))); !st.ok()) {
      ABACUS_LOG_ERROR("audit entry of request {} not written: {}", ctx.request_id, st.ToString());
    }
  });
}

void AddGovernanceRoutes(httplib::Server& s, ControlPlane& cp) {
  // ---- tokens
  s.Post("/api/v1/tokens", [&cp](const httplib::Request& req, httplib::Response& res) {
    auto parsed = ParseJsonBody(req.body.empty() ? "{}" : req.body);
    if (!parsed.ok()) return SendStatus(res, parsed.status());
    json body = std::move(*parsed);
    if (!body.is_object()) return SendError(res, 400, "invalid_argument", "body: expected {\"user\", \"description\", \"expires\"}");
    auto ttl = ParseTtl(body);
    if (!ttl.ok()) return SendStatus(res, ttl.status());
    std::string user = body.contains("user") && body["user"].is_string() ? body["user"].get<std::string>() : "";
    std::string description =
        body.contains("description") && body["description"].is_string() ? body["description"].get<std::string>() : "";
    Send(res, cp.governance().IssueToken(RequestPrincipal(), user, description, *ttl), 201);
  });
  s.Get("/api/v1/tokens", [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, cp.governance().ListTokens(RequestPrincipal(), Param(req, "user")));
  });
  s.Post("/api/v1/tokens/rotate-admin", [&cp](const httplib::Request& req, httplib::Response& res) {
    // No field is read, but a body sent is checked like any other: a malformed request never
    // rotates the token.
    auto parsed = ParseJsonBody(req.body.empty() ? "{}" : req.body);
    if (!parsed.ok()) return SendStatus(res, parsed.status());
    if (!parsed->is_object()) return SendError(res, 400, "invalid_argument", "body: expected a JSON object or none");
    Send(res, cp.governance().RotateAdminToken(RequestPrincipal()));
  });
  s.Delete(R"(/api/v1/tokens/([^/]+))", [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, cp.governance().RevokeToken(RequestPrincipal(), req.matches[1]));
  });

  // ---- users and policies: documents through apply (POST: http_server.cc); reads filtered
  s.Get("/api/v1/users", [&cp](const httplib::Request&, httplib::Response& res) {
    Send(res, cp.governance().ListUsers(RequestPrincipal()));
  });
  s.Get(R"(/api/v1/users/([^/]+))", [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, cp.governance().GetUser(RequestPrincipal(), req.matches[1]));
  });
  s.Delete(R"(/api/v1/users/([^/]+))", [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, cp.governance().DeleteUser(RequestPrincipal(), req.matches[1]));
  });
  s.Get("/api/v1/policies", [&cp](const httplib::Request&, httplib::Response& res) {
    Send(res, cp.governance().ListPolicies(RequestPrincipal()));
  });
  s.Get(R"(/api/v1/policies/([^/]+))", [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, cp.governance().GetPolicy(RequestPrincipal(), req.matches[1]));
  });
  s.Delete(R"(/api/v1/policies/([^/]+))", [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, cp.governance().DeletePolicy(RequestPrincipal(), req.matches[1]));
  });

  // ---- secrets (server/secrets.h): values go in, never out
  s.Post("/api/v1/secrets", [&cp](const httplib::Request& req, httplib::Response& res) {
    auto parsed = ParseJsonBody(req.body);
    if (!parsed.ok()) return SendStatus(res, parsed.status());
    Send(res, cp.secrets().Create(RequestPrincipal(), *parsed), 201);
  });
  s.Post("/api/v1/secrets/reencrypt", [&cp](const httplib::Request& req, httplib::Response& res) {
    auto parsed = ParseJsonBody(req.body.empty() ? "{}" : req.body);
    if (!parsed.ok()) return SendStatus(res, parsed.status());
    if (!parsed->is_object()) return SendError(res, 400, "invalid_argument", "body: expected a JSON object or none");
    Send(res, cp.secrets().Reencrypt(RequestPrincipal()));
  });
  s.Get("/api/v1/secrets", [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, cp.secrets().List(RequestPrincipal(), Param(req, "project"), Param(req, "tenant")));
  });
  s.Get(R"(/api/v1/secrets/([^/]+))", [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, cp.secrets().Get(RequestPrincipal(), req.matches[1], Param(req, "project"), Param(req, "tenant")));
  });
  s.Delete(R"(/api/v1/secrets/([^/]+))", [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, cp.secrets().Delete(RequestPrincipal(), req.matches[1], Param(req, "project"), Param(req, "tenant")));
  });

  // ---- audit: JSON lines (the caller's tenants only, for a tenant-admin), or ?verify=1
  s.Get("/api/v1/audit", [&cp](const httplib::Request& req, httplib::Response& res) {
    const govern::Principal& who = RequestPrincipal();
    Governance& gov = cp.governance();
    std::string verify = Param(req, "verify");
    if (!verify.empty() && verify != "0" && verify != "false") {
      if (Status st = govern::Authorize(who, Action::kAuditRead, Resource::ForCluster("audit", "")); !st.ok()) {
        return SendStatus(res, st);
      }
      auto report = gov.VerifyAudit();
      if (!report.ok()) return SendStatus(res, report.status());
      json out = {{"ok", report->ok}, {"entries", report->checked}, {"reason", report->reason},
                  {"anchors", report->anchors}, {"anchoredSeq", report->anchored_seq}};
      if (!report->ok) out["firstBadSeq"] = report->first_bad_seq;
      return Send(res, out);
    }
    if (who.kind != govern::Principal::Kind::kUser || (!who.HasRole(Role::kAdmin) && !who.HasRole(Role::kTenantAdmin))) {
      return SendStatus(res, govern::Authorize(who, Action::kAuditRead, Resource::ForCluster("audit", "")));
    }
    AuditQuery q;
    try {
      if (req.has_param("after")) q.after_seq = std::stoll(req.get_param_value("after"));
      if (req.has_param("limit")) q.limit = std::stoul(req.get_param_value("limit"));
    } catch (...) {
      return SendError(res, 400, "invalid_argument", "after, limit: expected non-negative integers");
    }
    if (std::string since = Param(req, "since"); !since.empty()) {
      auto t = ParseTimeSpec(since, gov.clock().Now());  // "24h": the last day (common/time_spec.h)
      if (!t.ok()) return SendError(res, 400, "invalid_argument", "since: " + t.status().message());
      q.since = *t;
    }
    auto entries = gov.ReadAudit(q);
    if (!entries.ok()) return SendStatus(res, entries.status());
    std::string out;
    for (const auto& e : *entries) {
      Resource r = Resource::ForTenantObject("audit", std::to_string(e.seq), e.record.tenant);
      if (!govern::Authorize(who, Action::kAuditRead, r).ok()) continue;
      out += govern::AuditEntryToJson(e).dump();
      out += '\n';
    }
    res.status = 200;
    res.set_content(out, "application/x-ndjson");
  });
}

}  // namespace abacus::server
