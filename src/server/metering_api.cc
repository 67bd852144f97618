#include "server/metering_api.h"

#include <httplib.h>

#include <string>

#include "server/control_plane.h"
#include "server/http_answer.h"
#include "server/http_request.h"
#include "server/read_views_json.h"
#include "server/request_authorization.h"
#include "server/route_table.h"

namespace abacus::server {
namespace {

using govern::Action;

// The query parameter `name`, "" when absent.

}  // namespace

void AddMeteringRoutes(RouteTable& t, ControlPlane& cp) {
  t.Get("/api/v1/pricelists", OnCluster(Action::kRead, "node"),
        [&cp](const httplib::Request&, httplib::Response& res) {
    SendJson(res, 200, PriceListsJson(cp.ListPriceLists()));
  });
  t.Get(R"(/api/v1/reports/([a-z]+))", Reports(),
        [&cp](const httplib::Request& req, httplib::Response& res) {
    if (Status st = OnlyParams(req, {"from", "to", "by", "format", "prices", "labelSelector", "threshold"}); !st.ok()) {
      return SendStatus(res, st);
    }
    ControlPlane::ReportQuery q;
    q.from = Param(req, "from");
    q.to = Param(req, "to");
    q.by = Param(req, "by");
    q.format = Param(req, "format");
    q.prices = Param(req, "prices");
    q.label_selector = Param(req, "labelSelector");
    q.tenant_visible = RequestReportTenants();
    if (req.has_param("threshold")) {
      Result<double> threshold = NumberParam(req, "threshold", 0, 0, 1);  // a share, like 0.05
      if (!threshold.ok()) return SendStatus(res, threshold.status());
      q.threshold = *threshold;
    }
    auto r = cp.Report(req.matches[1], q);
    if (!r.ok()) return SendStatus(res, r.status());
    res.status = 200;
    res.set_content(r->body, r->content_type);
  });
}

}  // namespace abacus::server
