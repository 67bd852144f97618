// The metering routes (docs/metering.md): GET /api/v1/pricelists (the price lists, as node
// readers see them) and GET /api/v1/reports/{KIND} (`abacus report`: ControlPlane::Report, the
// rows filtered to the tenants the caller may see: RequestReportTenants).
#pragma once

namespace abacus::server {

class ControlPlane;
class RouteTable;

// Adds the routes above to `t`.
void AddMeteringRoutes(RouteTable& t, ControlPlane& cp);

}  // namespace abacus::server
