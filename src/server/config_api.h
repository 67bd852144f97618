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
// Adds the writes: POST /api/v1/apply (any mix of documents; ?dryRun) and the same per kind
// (/api/v1/{tenants,projects,cohorts,queues,priorityclasses,pools,clusters,flavors,users,
// policies,reservations}); Apply checks each document against the caller's rights.
void AddApplyRoutes(RouteTable& t, ControlPlane& cp);

}  // namespace abacus::server
