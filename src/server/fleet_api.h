// REST routes of operator control (server/fleet.h; docs/api.md "Fleet control"):
//   POST /api/v1/nodes/{name}/cordon|uncordon|drain
//   POST /api/v1/workloads/{id}/hold|release|suspend|resume|requeue|priority
//   POST /api/v1/queues/{name}/suspend|resume
// Governance authorizes each before the handler runs (governance_api.cc) and audits it.
#pragma once

namespace httplib {
class Server;
}

namespace abacus::server {

class ControlPlane;

// Adds the routes above to `s`.
void AddFleetRoutes(httplib::Server& s, ControlPlane& cp);

}  // namespace abacus::server
