#include "server/reservations_api.h"

#include <httplib.h>

#include "server/control_plane.h"
#include "server/governance_api.h"
#include "server/http_answer.h"
#include "server/route_table.h"
#include "server/write_views_json.h"

namespace abacus::server {

void AddReservationRoutes(RouteTable& t, ControlPlane& cp) {
  t.Delete(R"(/api/v1/reservations/([^/]+))",
           OnCluster(govern::Action::kApplyConfig, "reservation", "reservation-delete", "reservation", true),
           [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, AppliedJson(cp.DeleteReservation(req.matches[1], CurrentRequest())));
  });
}

}  // namespace abacus::server
