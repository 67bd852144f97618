// Installs GET /ui and /ui/... on the HTTP server, answered from the embedded dashboard
// (server/ui_assets.h). The governance pre-routing handler lets these paths through without a
// token; every API call the page makes carries one.
#pragma once

namespace httplib {
class Server;
}

namespace abacus::server {

// Adds the /ui routes to `s`.
void AddUiRoutes(httplib::Server& s);

}  // namespace abacus::server
