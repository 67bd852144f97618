#include "server/nodes_api.h"

#include <httplib.h>

#include <optional>

#include "server/control_plane.h"
#include "server/http_answer.h"
#include "server/http_request.h"
#include "server/read_views_json.h"
#include "server/request_authorization.h"
#include "server/request_thread.h"
#include "server/route_table.h"
#include "server/watch_api.h"
#include "server/write_views_json.h"

namespace abacus::server {

using govern::Action;
using nlohmann::json;

void AddNodeRoutes(RouteTable& t, ControlPlane& cp) {
  t.Get("/api/v1/nodes", OnCluster(Action::kRead, "node"),
        [&cp](const httplib::Request& req, httplib::Response& res) {
    // Each device names the holders the caller may see; other tenants' work is hiddenMilli.
    auto visible = RequestWorkloadFilter();
    if (IsWatchRequest(req)) {
      return ServeListWatch(cp, [&cp, visible] { return NodesJson(cp.ListNodes(visible)); }, req, res);
    }
    SendJson(res, 200, NodesJson(cp.ListNodes(visible)));
  });
  t.Get(R"(/api/v1/nodes/([^/]+))", OnCluster(Action::kRead, "node"),
        [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, NodeJson(cp.GetNode(req.matches[1], RequestWorkloadFilter())));
  });
  t.Post("/api/v1/nodes", OnCluster(Action::kApplyConfig, "node", "node-put", "node"),
         [&cp](const httplib::Request& req, httplib::Response& res) {
    std::optional<json> parsed = JsonBodyOr400(req, res);
    if (!parsed) return;
    Send(res, NodeRecordJson(cp.PutNode(*parsed, CurrentRequest())), 201);
  });
  t.Get("/api/v1/devices", OnCluster(Action::kRead, "node"),
        [&cp](const httplib::Request&, httplib::Response& res) { SendJson(res, 200, DevicesJson(cp.ListDevices())); });
}

}  // namespace abacus::server
