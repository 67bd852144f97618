#include "server/whoami_api.h"

#include <httplib.h>

#include "net/http_framing.h"
#include "server/control_plane.h"
#include "server/error_detail.h"
#include "server/governance_api.h"
#include "server/http_answer.h"
#include "server/http_server.h"
#include "server/route_table.h"

namespace abacus::server {
namespace {

using nlohmann::json;
using govern::Action;
using govern::Resource;

// The Resource the query names: the workload W among those the caller may see (404 otherwise,
// exactly like GET /api/v1/workloads/W), or the node N; nullopt when it names neither.
Result<std::optional<Resource>> Named(const ControlPlane& cp, const httplib::Request& req) {
  const bool workload = req.has_param("workload"), node = req.has_param("node");
  if (workload && node) return InvalidArgument("whoami: ask about one workload or one node, not both");
  if (workload) {
    ABACUS_ASSIGN_OR_RETURN(std::string id, cp.ResolveWorkload(req.get_param_value("workload"), RequestWorkloadFilter()));
    ABACUS_ASSIGN_OR_RETURN(WorkloadView w, cp.GetWorkload(id));
    return std::optional<Resource>(Resource::ForWorkload(w.record.spec.name, w.record.spec.project));
  }
  if (node) {
    std::string name = req.get_param_value("node");
    ABACUS_RETURN_IF_ERROR(cp.GetNode(name).status());
    return std::optional<Resource>(Resource::ForCluster("node", name));
  }
  return std::optional<Resource>();
}

}  // namespace

json WhoAmI(const govern::Principal& who, const Resource* about) {
  json roles = json::array();
  for (const RoleBinding& b : who.roles) {
    json r = {{"role", std::string(RoleName(b.role))}, {"text", b.ToString()}};
    if (!b.tenant.empty()) r["tenant"] = b.tenant;
    if (!b.project.empty()) r["project"] = b.project;
    if (!b.node.empty()) r["node"] = b.node;
    roles.push_back(std::move(r));
  }
  json out = {{"name", who.name},
              {"kind", who.kind == govern::Principal::Kind::kAgent ? "agent" : "user"},
              {"roles", std::move(roles)}};
  if (!who.token_id.empty()) out["tokenId"] = who.token_id;
  if (about != nullptr) {
    json may = json::array();
    for (Action a : govern::kAllActions) {
      if (govern::Authorize(who, a, *about).ok()) may.push_back(std::string(govern::ActionName(a)));
    }
    out["about"] = about->ToString();
    out["may"] = std::move(may);
  }
  return out;
}

void AddWhoamiRoutes(RouteTable& t, ControlPlane& cp) {
  t.Get("/api/v1/whoami", AnyUser(), [&cp](const httplib::Request& req, httplib::Response& res) {
    auto named = Named(cp, req);
    if (!named.ok()) return Send(res, named.status());
    Send(res, WhoAmI(RequestPrincipal(), named->has_value() ? &**named : nullptr));
  });
}

}  // namespace abacus::server
