// The node routes (docs/api.md): GET /api/v1/nodes (a watch too; each device names the holders
// the caller may see, other tenants' work as hiddenMilli), GET /api/v1/nodes/NAME, POST
// /api/v1/nodes (a node record put by an admin) and GET /api/v1/devices. The operator verbs on a
// node are in fleet_api.h, the agents' own routes in agent_api.h.
#pragma once

namespace abacus::server {

class ControlPlane;
class RouteTable;

// Adds the routes above to `t`.
void AddNodeRoutes(RouteTable& t, ControlPlane& cp);

}  // namespace abacus::server
