// The route table (issue 22): requests find the route cpp-httplib dispatches them to, and every
// route the server serves carries its access declaration.
#include "server/route_table.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <map>
#include <set>
#include <string>

#include "server/control_plane_fixture.h"
#include "server/http_server.h"
#include "server/request_authorization.h"

namespace abacus::server {
namespace {

using govern::Action;

void Nothing(const httplib::Request&, httplib::Response&) {}

TEST(RouteTableTest, MatchesTheRouteTheServerDispatchesTo) {
  httplib::Server s;
  RouteTable t(s);
  t.Get(R"(/api/v1/things/([^/]+))", OnWorkload(Action::kRead), Nothing);
  t.Get("/api/v1/things/special", AnyUser(), Nothing);  // shadowed: the first route matches
  t.Post(R"(/api/v1/things/([^/]+)/go)", OnWorkload(Action::kUpdate, "go"), Nothing);
  std::smatch m;
  const std::string special = "/api/v1/things/special";  // `m` refers into it
  const Route* r = t.Match("GET", special, &m);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->access.rule, Rule::kWorkload);
  EXPECT_EQ(m[1].str(), "special");
  EXPECT_EQ(t.Match("HEAD", "/api/v1/things/x", &m), r);  // HEAD is served by the GET routes
  r = t.Match("POST", "/api/v1/things/x/go", &m);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->access.audit, "go");
  EXPECT_EQ(t.Match("POST", "/api/v1/things/x", &m), nullptr);
  EXPECT_EQ(t.Match("GET", "/api/v1/things/x/y", &m), nullptr);
  EXPECT_EQ(t.Match("DELETE", "/api/v1/things/x", &m), nullptr);
}

class ServerRoutesTest : public testing_cp::ControlPlaneFixture {};

// Every route is declared once, with what its audit entry says, and only the health check and
// the dashboard are served without a token; the dry runs are the documented ones.
TEST_F(ServerRoutesTest, EveryRouteCarriesItsDeclaration) {
  Open();
  HttpServer server(*cp_, HttpOptions{});
  std::set<std::string> seen, open, dry;
  for (const Route& r : server.routes().routes()) {
    const std::string name = r.method + " " + r.pattern;
    EXPECT_TRUE(seen.insert(name).second) << name << " is declared twice";
    if (r.access.rule == Rule::kPublic) open.insert(name);
    if (r.access.dry_run) dry.insert(name);
    if (IsMutating(r.method) && r.access.audited) {
      EXPECT_FALSE(r.access.object_kind.empty()) << name << ": its audit entry names no object kind";
      EXPECT_FALSE(r.access.audit.empty()) << name << ": its audit entry names no action";
    }
  }
  EXPECT_GE(seen.size(), 90u);
  EXPECT_EQ(open, (std::set<std::string>{"GET /", "GET /favicon.ico", "GET /ui(/.*)?", "GET /healthz"}));
  const std::string w = R"(/api/v1/workloads/([^/]+))";
  std::set<std::string> want = {"POST /api/v1/workloads", "PUT " + w, "PATCH " + w};
  for (const char* kind : {"apply", "tenants", "projects", "cohorts", "queues", "priorityclasses", "pools", "clusters",
                           "flavors", "users", "policies"}) {
    want.insert(std::string("POST /api/v1/") + kind);
  }
  EXPECT_EQ(dry, want);
}

}  // namespace
}  // namespace abacus::server
