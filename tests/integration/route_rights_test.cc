// The rights of every route (issue 22, docs/governance.md "Authorization"): each route the server
// registers, tried by four callers — nobody (no token), a member of another tenant (mia, t2/p3),
// a viewer of the objects' tenant (vic, t1) and an admin (ann) — against objects of tenant t1.
// Each outcome is the authorization's: 401, 403, 404 (hidden or missing), or "pass" (the
// request reached its handler: any other status). The expected outcomes were recorded on the
// server as it was before the route table was rebuilt, so that the rebuild keeps every right.
#include <gtest/gtest.h>

#include <httplib.h>

#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "server/server_test_util.h"
#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;
namespace org = server::testing_org;

const std::string kOrg = org::TwoTenantOrgWithUsers();  // server_test_util.h: who is who

const std::string kJob =
    "kind: TrainingJob\nname: w1\nproject: t1/p1\nqueue: q1\nspec:\n  command: [\"true\"]\n  taskGroups:\n"
    "    - name: w\n      resources: {cpu: 1, memory: 1Gi}\n";

struct Cell {
  std::string method, path, body;
  std::string expected;  // outcomes for nobody, mia, vic, ann
};

// The callers, in the order of Cell::expected.
const std::vector<std::string> kCallers = {"nobody", "mia", "vic", "ann"};

std::string Outcome(int status) {
  if (status == 401 || status == 403 || status == 404) return std::to_string(status);
  return "pass";
}

TEST(RouteRightsTest, EveryRouteKeepsItsRightsForEveryCaller) {
  TempDir dir;
  ServerProcess server(dir.path());
  auto admin = server.Client();
  ASSERT_EQ(admin.Post("/api/v1/apply", kOrg, "application/yaml").status, 200);
  std::map<std::string, std::string> tokens = {{"nobody", ""}};
  for (const char* user : {"ann", "vic", "mia", "max"}) {
    auto r = admin.Post("/api/v1/tokens", json{{"user", user}}.dump(), "application/json");
    ASSERT_EQ(r.status, 201) << r.text;
    tokens[user] = r.body["token"];
  }
  httplib::Client join(server.url());
  join.set_bearer_token_auth(server.join_token().c_str());
  json reg = {{"name", "n1"}, {"cpuMilli", 32000}, {"memoryBytes", int64_t{64} << 30}, {"agentVersion", "test"}};
  auto registered = join.Post("/api/v1/agent/register", reg.dump(), "application/json");
  ASSERT_TRUE(registered);
  ASSERT_EQ(registered->status, 200) << registered->body;
  httplib::Client max(server.url());
  max.set_bearer_token_auth(tokens["max"].c_str());
  auto submitted = max.Post("/api/v1/workloads", kJob, "application/yaml");
  ASSERT_TRUE(submitted);
  ASSERT_EQ(submitted->status, 201) << submitted->body;
  const std::string secret = json{{"name", "s1"}, {"project", "t1/p1"}, {"stringData", {{"k", "v"}}}}.dump();
  ASSERT_EQ(admin.Post("/api/v1/secrets", secret, "application/json").status, 201);

  const std::string w = "/api/v1/workloads/w1";
  // Every route the server registers, once per method (the config kinds each); reads first, then
  // changes, the destructive ones last, so that each caller finds the objects as the one before.
  const std::vector<Cell> cells = {
      {"GET", "/", "", "pass pass pass pass"},
      {"GET", "/favicon.ico", "", "pass pass pass pass"},
      {"GET", "/ui/", "", "pass pass pass pass"},
      {"GET", "/healthz", "", "pass pass pass pass"},
      {"GET", "/readyz", "", "401 pass pass pass"},
      {"GET", "/metrics", "", "401 403 403 pass"},
      {"GET", "/api/v1/version", "", "401 pass pass pass"},
      {"GET", "/api/v1/whoami", "", "401 pass pass pass"},
      {"GET", "/api/v1/workloads", "", "401 pass pass pass"},
      {"GET", w, "", "401 404 pass pass"},
      {"GET", w + "/revisions", "", "401 404 pass pass"},
      {"GET", w + "/explain", "", "401 404 pass pass"},
      {"GET", w + "/events", "", "401 404 pass pass"},
      {"GET", w + "/tasks", "", "401 404 pass pass"},
      {"GET", w + "/logs", "", "401 404 404 404"},
      {"GET", "/api/v1/services/w1/endpoints", "", "401 404 pass pass"},
      {"GET", "/api/v1/evaluations", "", "401 pass pass pass"},
      {"GET", "/api/v1/tenants", "", "401 pass pass pass"},
      {"GET", "/api/v1/tenants/t1", "", "401 404 pass pass"},
      {"GET", "/api/v1/projects", "", "401 pass pass pass"},
      {"GET", "/api/v1/projects/t1/p1", "", "401 404 pass pass"},
      {"GET", "/api/v1/cohorts", "", "401 pass pass pass"},
      {"GET", "/api/v1/cohorts/c1", "", "401 pass pass pass"},
      {"GET", "/api/v1/priorityclasses", "", "401 pass pass pass"},
      {"GET", "/api/v1/pools", "", "401 pass pass pass"},
      {"GET", "/api/v1/clusters", "", "401 pass pass pass"},
      {"GET", "/api/v1/reservations", "", "401 pass pass pass"},
      {"GET", "/api/v1/queues", "", "401 pass pass pass"},
      {"GET", "/api/v1/queues/q1", "", "401 404 pass pass"},
      {"GET", "/api/v1/flavors", "", "401 pass pass pass"},
      {"GET", "/api/v1/flavors/none", "", "401 404 404 404"},
      {"GET", "/api/v1/nodes", "", "401 pass pass pass"},
      {"GET", "/api/v1/nodes/n1", "", "401 pass pass pass"},
      {"GET", "/api/v1/nodes/n1/events", "", "401 pass pass pass"},
      {"GET", "/api/v1/devices", "", "401 pass pass pass"},
      {"GET", "/api/v1/pricelists", "", "401 pass pass pass"},
      {"GET", "/api/v1/events", "", "401 pass pass pass"},
      {"GET", "/api/v1/shares", "", "401 pass pass pass"},
      {"GET", "/api/v1/shares/q1", "", "401 404 pass pass"},
      {"GET", "/api/v1/reports/usage", "", "401 403 pass pass"},
      {"GET", "/api/v1/tokens", "", "401 pass pass pass"},
      {"GET", "/api/v1/users", "", "401 pass pass pass"},
      {"GET", "/api/v1/users/max", "", "401 404 404 pass"},
      {"GET", "/api/v1/policies", "", "401 pass pass pass"},
      {"GET", "/api/v1/policies/none", "", "401 404 404 404"},
      {"GET", "/api/v1/secrets?project=t1/p1", "", "401 pass pass pass"},
      {"GET", "/api/v1/secrets/s1?project=t1/p1", "", "401 404 pass pass"},
      {"GET", "/api/v1/audit", "", "401 403 403 pass"},
      {"GET", "/api/v1/agent/assignments?node=n1&waitMs=0", "", "401 403 403 403"},
      {"GET", "/api/v1/nope", "", "401 403 403 404"},
      // Changes: bodies that the handlers refuse where the caller is let through, so that the
      // objects stay as they are for the next caller.
      {"POST", "/api/v1/workloads?dryRun=1", kJob, "401 pass pass pass"},
      {"POST", "/api/v1/workloads", "{", "401 pass pass pass"},
      {"PUT", w + "?dryRun=1", "{", "401 404 403 pass"},
      {"PATCH", w + "?dryRun=1", "{", "401 404 403 pass"},
      {"POST", w + "/rollback", "{", "401 404 403 pass"},
      {"POST", w + "/scale", "{", "401 404 403 pass"},
      {"POST", w + "/quota", "{", "401 404 403 pass"},
      {"POST", w + "/metrics", "{", "401 404 403 pass"},
      {"POST", w + "/priority", "{", "401 404 403 pass"},
      {"POST", w + "/hold", "{", "401 404 403 pass"},
      {"POST", w + "/release", "{", "401 404 403 pass"},
      {"POST", w + "/suspend", "{", "401 404 403 pass"},
      {"POST", w + "/resume", "{", "401 404 403 pass"},
      {"POST", w + "/requeue", "{", "401 404 403 pass"},
      {"POST", "/api/v1/apply", "{", "401 pass pass pass"},
      {"POST", "/api/v1/tenants", "{", "401 pass pass pass"},
      {"POST", "/api/v1/projects", "{", "401 pass pass pass"},
      {"POST", "/api/v1/cohorts", "{", "401 pass pass pass"},
      {"POST", "/api/v1/queues", "{", "401 pass pass pass"},
      {"POST", "/api/v1/priorityclasses", "{", "401 pass pass pass"},
      {"POST", "/api/v1/pools", "{", "401 pass pass pass"},
      {"POST", "/api/v1/clusters", "{", "401 pass pass pass"},
      {"POST", "/api/v1/flavors", "{", "401 pass pass pass"},
      {"POST", "/api/v1/reservations", "{", "401 pass pass pass"},
      {"POST", "/api/v1/users", "{", "401 pass pass pass"},
      {"POST", "/api/v1/policies", "{", "401 pass pass pass"},
      {"POST", "/api/v1/queues/q1/suspend", "{", "401 404 403 pass"},  // hidden: as missing
      {"POST", "/api/v1/queues/q1/resume", "{", "401 404 403 pass"},
      {"POST", "/api/v1/nodes", "{", "401 403 403 pass"},
      {"POST", "/api/v1/nodes/n1/reset", "{", "401 403 403 pass"},
      {"POST", "/api/v1/nodes/n1/cordon", "{", "401 403 403 pass"},
      {"POST", "/api/v1/nodes/n1/uncordon", "{", "401 403 403 pass"},
      {"POST", "/api/v1/nodes/n1/drain", "{", "401 403 403 pass"},
      {"POST", "/api/v1/tokens", "{", "401 pass pass pass"},
      {"POST", "/api/v1/secrets", "{", "401 pass pass pass"},
      {"POST", "/api/v1/secrets/reencrypt", "{", "401 pass pass pass"},
      {"POST", "/api/v1/agent/register", "{", "401 403 403 pass"},
      {"POST", "/api/v1/agent/status", "{", "401 403 403 pass"},
      {"POST", "/api/v1/agent/heartbeat", "{", "401 403 403 pass"},
      {"POST", "/api/v1/agent/logs", "{", "401 403 403 pass"},
      {"POST", "/api/v1/nope", "{", "401 403 403 404"},
      // Destructive ones, on objects that do not exist (a hidden object and a missing one look
      // alike) or last.
      {"DELETE", "/api/v1/tokens/tok-none", "", "401 404 404 404"},
      {"DELETE", "/api/v1/users/none", "", "401 404 404 404"},
      {"DELETE", "/api/v1/policies/none", "", "401 404 404 404"},
      {"DELETE", "/api/v1/secrets/none?project=t1/p1", "", "401 404 404 404"},
      {"DELETE", "/api/v1/reservations/none", "", "401 403 403 404"},
      {"DELETE", "/api/v1/nope", "", "401 403 403 404"},
      {"POST", w + "/cancel", "{}", "401 404 403 pass"},
      {"DELETE", w, "", "401 404 403 pass"},
  };

  std::ostringstream observed;
  int mismatches = 0;
  for (const Cell& c : cells) {
    std::string got;
    for (const std::string& caller : kCallers) {
      httplib::Client client(server.url());
      if (!tokens[caller].empty()) client.set_bearer_token_auth(tokens[caller].c_str());
      httplib::Result r = c.method == "GET"      ? client.Get(c.path)
                          : c.method == "POST"   ? client.Post(c.path, c.body, "application/json")
                          : c.method == "PUT"    ? client.Put(c.path, c.body, "application/json")
                          : c.method == "PATCH"  ? client.Patch(c.path, c.body, "application/json")
                                                 : client.Delete(c.path);
      ASSERT_TRUE(r) << c.method << " " << c.path << " as " << caller;
      got += (got.empty() ? "" : " ") + Outcome(r->status);
    }
    observed << got << "\n";
    if (got != c.expected) ++mismatches;
    EXPECT_EQ(got, c.expected) << c.method << " " << c.path << " (callers: nobody mia vic ann)";
  }
  if (mismatches > 0) std::cerr << "observed outcomes, one line per cell:\n" << observed.str();
}

}  // namespace
}  // namespace abacus::testing
