// The workload routes (docs/api.md): submit (POST /api/v1/workloads, dry run too), list (a watch
// too), get, update (PUT whole, PATCH merge, POST …/rollback), revisions, cancel (DELETE or POST
// …/cancel), scale, a temporary quota decision, pushed metrics, explain, events and logs (logs -f).
// Each declares its access where it is added (route_table.h); the control plane answers typed
// views that write_views_json.h / read_views_json.h encode here.
#pragma once

namespace abacus::server {

class ControlPlane;
class RouteTable;

// Adds the routes above to `t`.
void AddWorkloadRoutes(RouteTable& t, ControlPlane& cp);

}  // namespace abacus::server
