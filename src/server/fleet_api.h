// REST routes of operator control (server/fleet.h; docs/api.md "Fleet control"):
//   POST /api/v1/nodes/{name}/cordon|uncordon|drain
//   POST /api/v1/workloads/{id}/hold|release|suspend|resume|requeue|priority
//   POST /api/v1/queues/{name}/suspend|resume
// Governance authorizes each before the handler runs (governance_api.cc) and audits it.
#pragma once

namespace abacus::server {

class ControlPlane;
class RouteTable;

// Adds the routes above to `t`.
void AddFleetRoutes(RouteTable& t, ControlPlane& cp);

}  // namespace abacus::server
