// Installs GET /ui and /ui/... on the HTTP server, answered from the embedded dashboard
// (server/ui_assets.h). The governance pre-routing handler lets these paths through without a
// token; every API call the page makes carries one.
#pragma once

namespace abacus::server {

class RouteTable;

// Adds /, /favicon.ico and the /ui routes to `t`, served without a token.
void AddUiRoutes(RouteTable& t);

}  // namespace abacus::server
