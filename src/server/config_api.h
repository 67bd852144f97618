// The reads of the configuration (docs/api.md): GET /api/v1/{tenants,projects,cohorts,
// priorityclasses,pools,clusters,reservations}[/NAME], /api/v1/queues[/NAME] (a watch too),
// /api/v1/flavors[/NAME], and what this server is, /api/v1/version. Each lists what the caller may
// see (FilterVisibleConfig, request_authorization.h). Writes go through POST /api/v1/apply.
#pragma once

namespace abacus::server {

class ControlPlane;
class RouteTable;

// Adds the routes above to `t`.
void AddConfigRoutes(RouteTable& t, ControlPlane& cp);

}  // namespace abacus::server
