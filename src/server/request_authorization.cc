// Which requests a caller may make: the rules route declarations use, and the list filters
// (request_authorization.h).
#include "server/request_authorization.h"

#include <set>

#include "server/control_plane.h"
#include "server/governance.h"

namespace abacus::server {
namespace {

using nlohmann::json;
using govern::Action;
using govern::Resource;

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

}  // namespace

bool IsMutating(const std::string& method) { return method != "GET" && method != "HEAD" && method != "OPTIONS"; }

Status AuthorizeCrossTenant(const govern::Principal& who, const std::string& what) {
  for (const auto& b : who.roles) {
    if (who.kind != govern::Principal::Kind::kUser) break;
    if (b.role == Role::kAdmin) return Status::OK();
    if (b.role == Role::kViewer && b.tenant.empty() && b.project.empty()) return Status::OK();
  }
  return PermissionDenied(who.ToString() + " may not read " + what +
                          ": it spans every tenant (admin or an unscoped viewer only)");
}

Status AuthorizeReports(const govern::Principal& who, const std::string& report) {
  // Admins and unscoped viewers read every tenant's rows; tenant admins (and viewers of a whole
  // tenant) their own tenants' rows (RequestReportTenants).
  if (SeesEverything(who) || !ReportTenants(who).empty()) return Status::OK();
  return PermissionDenied(who.ToString() + " may not read report " + report +
                          ": reports are for admins, tenant admins (their tenants' rows) and viewers of a "
                          "whole tenant; ask a tenant admin for the report");
}

Status AuthorizeWorkload(ControlPlane& cp, RequestContext& ctx, const std::string& id, Action action) {
  const govern::Principal& who = ctx.caller.principal;
  bool everything = SeesEverything(who);
  std::function<bool(const Workload&)> visible;
  if (!everything) visible = [&who](const Workload& w) { return govern::MaySee(who, Resource::ForWorkload(w)); };
  // The entry of a request for a workload not found names what was asked (the caller's own words).
  ctx.object_kind = "workload";
  ctx.object_name = id;
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

std::string RequestNode() {
  if (!t_request.active || t_request.caller.via != Caller::Via::kNodeCredential) return "";
  return t_request.caller.bootstrap.name;
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
