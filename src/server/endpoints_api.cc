#include "server/endpoints_api.h"

#include <httplib.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>

#include "server/control_plane.h"
#include "server/governance_api.h"
#include "server/http_answer.h"
#include "server/http_request.h"
#include "server/http_server.h"
#include "server/service_endpoints.h"
#include "server/read_views_json.h"
#include "server/route_table.h"

namespace abacus::server {
namespace {

using nlohmann::json;
using std::chrono::steady_clock;

// The endpoints of `id` with "revision": a digest of what a gateway acts on (items, rollout,
// health check, autoscaling metric), equal as long as those are.
Result<json> Read(const ControlPlane& cp, const std::string& id) {
  auto view = cp.GetWorkload(id);
  if (!view.ok()) return view.status();
  auto out = ServiceEndpoints(WorkloadViewJson(*view));
  if (!out.ok()) return out.status();
  json digest = {out->value("items", json::array()), out->value("rollout", json::object()),
                 out->value("healthCheck", json()), out->value("autoscaling", json())};
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016zx", std::hash<std::string>{}(digest.dump()));
  (*out)["revision"] = std::string(hex);
  return out;
}

}  // namespace

void AddEndpointRoutes(RouteTable& t, const ControlPlane& cp) {
  t.Get(R"(/api/v1/services/([^/]+)/endpoints)", OnWorkload(govern::Action::kRead),
        [&cp](const httplib::Request& req, httplib::Response& res) {
    const std::string id = RequestWorkloadId(req.matches[1]);
    // ?waitChange=REVISION: answer once the endpoints differ from REVISION (a long poll on the
    // server's change feed), or after timeoutSeconds (default 30, at most 300) with them unchanged.
    const std::string known = req.has_param("waitChange") ? req.get_param_value("waitChange") : "";
    Result<int64_t> given_timeout = IntParam(req, "timeoutSeconds", 30, 0, 300);
    if (!given_timeout.ok()) return SendStatus(res, given_timeout.status());
    const int timeout = static_cast<int>(*given_timeout);
    const auto deadline = steady_clock::now() + std::chrono::seconds(timeout);
    ChangeFeed& feed = cp.feed();
    while (true) {
      const uint64_t version = feed.version();
      auto out = Read(cp, id);
      if (!out.ok()) return SendStatus(res, out.status());
      if (known.empty() || out->value("revision", "") != known || steady_clock::now() >= deadline ||
          !feed.WaitPast(version, deadline)) {
        return SendJson(res, 200, *out);
      }
    }
  });
}

}  // namespace abacus::server
