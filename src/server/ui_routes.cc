#include "server/ui_routes.h"

#include <httplib.h>

#include "server/route_table.h"
#include "server/ui_assets.h"

namespace abacus::server {
namespace {

// What a browser may do with the dashboard: its own scripts, styles and API only (no inline or
// foreign script, no plug-ins), never inside another site's frame, no referrer to other sites.
// uPlot and Preact set styles through the DOM, hence 'unsafe-inline' for styles alone.
void SetDashboardHeaders(httplib::Response& res) {
  res.set_header("Content-Security-Policy",
                 "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
                 "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'");
  res.set_header("X-Frame-Options", "DENY");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Referrer-Policy", "no-referrer");
}

}  // namespace

void AddUiRoutes(RouteTable& t) {
  // A browser pointed at the server lands on the dashboard; its icon request gets "no content"
  // instead of a 401 that the console shows as an error.
  t.Get("/", Public(), [](const httplib::Request&, httplib::Response& res) {
    res.status = 302;
    res.set_header("Location", "/ui/");
  });
  t.Get("/favicon.ico", Public(), [](const httplib::Request&, httplib::Response& res) { res.status = 204; });
  t.Get(R"(/ui(/.*)?)", Public(), [](const httplib::Request& req, httplib::Response& res) {
    UiAnswer a = ResolveUi(req.path, EmbeddedUiAssets());
    res.status = a.status;
    if (!a.location.empty()) res.set_header("Location", a.location);
    if (!a.cache_control.empty()) res.set_header("Cache-Control", a.cache_control);
    SetDashboardHeaders(res);
    res.set_content(std::string(a.body), a.content_type);
  });
}

}  // namespace abacus::server
