// GET /api/v1/services/{SERVICE}/endpoints (docs/api.md "Service endpoints"): the replicas of an
// InferenceService a gateway routes to (service_endpoints.h). SERVICE is an id or a name,
// resolved and authorized like GET /api/v1/workloads/{W} (a service the caller may not see is
// 404, like a missing one). ?watch=1&after=V: a long poll that answers once the service changed
// after store version V (or after timeoutSeconds, default 30), so gateways follow it without
// polling.
#pragma once

namespace abacus::server {

class ControlPlane;
class RouteTable;

// Adds GET /api/v1/services/{SERVICE}/endpoints.
void AddEndpointRoutes(RouteTable& t, const ControlPlane& cp);

}  // namespace abacus::server
