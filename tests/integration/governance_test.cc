// Governance against a real `abacus server` (issue 9, docs/governance.md): the authorization
// matrix (role × route × own/other project/tenant), isolation of lists, API tokens through the
// CLI, the audit chain detecting an edited or removed row of the SQLite file, each admission
// rule accepting and rejecting, and the rate limit per token.
#include <gtest/gtest.h>

#include <httplib.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <set>

#include "server/server_test_util.h"
#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;
namespace org = server::testing_org;

// t1 (projects p1 and p2, queue q1) and t2 (p3, q2), room for every job; one user per role:
// ann admin, tia tenant-admin of t1, max member of t1/p1, val viewer, vic viewer of t1.
const std::string kOrg = org::Org(
    org::TwoTenants("p3", {"p2"}), {{"cpu", "1000"}, {"memory", "4Ti"}},
    {org::User("ann", "admin"), org::TenantAdmin("tia", "t1"),
     org::Member("max", "t1/p1"), org::User("val", "viewer"),
     org::User("vic", "viewer", "tenant: t1")});

// The three columns of the matrix, seen from t1/p1: own project, another project of the same
// tenant, another tenant.
const char* kProjects[] = {"t1/p1", "t1/p2", "t2/p3"};
const char* kQueues[] = {"q1", "q1", "q2"};

std::string Job(const std::string& name, const std::string& project, const std::string& queue,
                const std::string& extra_spec = "", const std::string& top = "", int cpu = 1) {
  return "kind: TrainingJob\nname: " + name + "\nproject: " + project + "\nqueue: " + queue + "\n" + top +
         "spec:\n  command: [\"true\"]\n" + extra_spec + "  taskGroups:\n    - name: w\n      resources: {cpu: " +
         std::to_string(cpu) + ", memory: 1Gi}\n";
}

class GovernanceTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(); }
  void Start(std::vector<std::string> args = {}) {
    server_ = std::make_unique<ServerProcess>(dir_.path(), std::move(args));
    auto admin = server_->Client();
    auto applied = admin.Post("/api/v1/apply?filename=org.yaml", kOrg, "application/yaml");
    ASSERT_EQ(applied.status, 200) << applied.text;
    for (const char* user : {"ann", "tia", "max", "val", "vic"}) {
      auto r = admin.Post("/api/v1/tokens", json{{"user", user}, {"description", "test"}}.dump(), "application/json");
      ASSERT_EQ(r.status, 201) << r.text;
      ASSERT_EQ(r.body["token"].get<std::string>().size(), 64u);
      tokens_[user] = r.body["token"];
    }
  }
  cli::ApiClient As(const std::string& user) {
    if (user == "admin-token") return server_->Client();
    if (user == "join-token") return cli::ApiClient({server_->url(), server_->join_token()});
    return cli::ApiClient({server_->url(), tokens_.at(user)});
  }
  // Submits a workload as the bootstrap admin; returns its id.
  std::string Seed(const std::string& name, int col) {
    auto r = server_->Client().Post("/api/v1/workloads", Job(name, kProjects[col], kQueues[col]), "application/yaml");
    EXPECT_EQ(r.status, 201) << r.text;
    return r.body["items"][0].value("id", "");
  }
  std::set<std::string> Names(const json& list) {
    std::set<std::string> out;
    for (const auto& i : list["items"]) out.insert(i.value("name", ""));
    return out;
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::map<std::string, std::string> tokens_;
};

// 'A': allowed (2xx). 'D': denied, 403. 'H': denied and hidden, 404 (the caller may not see it).
void ExpectCell(char expected, const cli::ApiResponse& r, const std::string& what) {
  switch (expected) {
    case 'A': EXPECT_TRUE(r.ok()) << what << ": " << r.status << " " << r.text; break;
    case 'D': EXPECT_EQ(r.status, 403) << what << ": " << r.text; break;
    case 'H': EXPECT_EQ(r.status, 404) << what << ": " << r.text; break;
  }
}

TEST_F(GovernanceTest, AuthorizationMatrix) {
  // Per user, per route, per column (own project, same tenant, other tenant).
  struct Row {
    std::string user;
    std::string read, create, cancel, quota, policy;  // quota/policy: own tenant, other tenant
    char audit, nodes, reports, put_node, register_node;
    std::string token;  // own token, another user's token
  };
  const std::vector<Row> rows = {
      {"ann", "AAA", "AAA", "AAA", "AA", "AA", 'A', 'A', 'A', 'A', 'A', "AA"},
      // (quota: a tenant-admin changes no quota, its own tenant's included; issue 20 point 5)
      // (reports: a tenant admin and a viewer of a whole tenant read their tenant's rows; issue 23)
      {"tia", "AAH", "AAD", "AAH", "DD", "AD", 'A', 'A', 'A', 'D', 'D', "AH"},
      {"max", "AHH", "ADD", "AHH", "DD", "DD", 'D', 'A', 'D', 'D', 'D', "AH"},
      {"val", "AAA", "DDD", "DDD", "DD", "DD", 'D', 'A', 'A', 'D', 'D', "AH"},
      {"vic", "AAH", "DDD", "DDH", "DD", "DD", 'D', 'A', 'A', 'D', 'D', "AH"},
  };
  int serial = 0;
  for (const Row& row : rows) {
    auto api = As(row.user);
    for (int col = 0; col < 3; ++col) {
      std::string cell = row.user + " col " + std::to_string(col);
      std::string id = Seed("m" + std::to_string(++serial), col);
      ExpectCell(row.read[col], api.Get("/api/v1/workloads/" + id), cell + " read");
      ExpectCell(row.read[col], api.Get("/api/v1/workloads/" + id + "/events"), cell + " events");
      ExpectCell(row.create[col],
                 api.Post("/api/v1/workloads", Job("c" + std::to_string(++serial), kProjects[col], kQueues[col]),
                          "application/yaml"),
                 cell + " create");
      ExpectCell(row.cancel[col], api.Post("/api/v1/workloads/" + id + "/cancel", "{}", "application/json"),
                 cell + " cancel");
    }
    for (int t = 0; t < 2; ++t) {
      const std::string tenant = t == 0 ? "t1" : "t2";
      std::string cell = row.user + " tenant " + tenant;
      std::string queue = "kind: Queue\nname: " + std::string(t == 0 ? "q1" : "q2") + "\ntenant: " + tenant +
                          "\nquotas:\n  - {resource: cpu, nominal: " + std::to_string(1000 + ++serial) +
                          "}\n  - {resource: memory, nominal: 4Ti}\n";
      ExpectCell(row.quota[t], api.Post("/api/v1/apply", queue, "application/yaml"), cell + " quota-change");
      std::string policy = "kind: AdmissionPolicy\nname: pol-" + tenant + "\ntenants: [" + tenant +
                           "]\nspec:\n  maxResources: {cpu: " + std::to_string(100 + ++serial) + "}\n";
      ExpectCell(row.policy[t], api.Post("/api/v1/policies", policy, "application/yaml"), cell + " policy-change");
    }
    ExpectCell(row.audit, api.Get("/api/v1/audit"), row.user + " audit");
    ExpectCell(row.nodes, api.Get("/api/v1/nodes"), row.user + " nodes");
    ExpectCell(row.reports, api.Get("/api/v1/reports/usage?format=json"), row.user + " reports");
    json node = {{"name", "sim-" + row.user}, {"cpu", "8"}, {"memory", "32Gi"}, {"simulated", true}};
    ExpectCell(row.put_node, api.Post("/api/v1/nodes", node.dump(), "application/json"), row.user + " put node");
    json reg = {{"name", "agent-" + row.user}, {"cpuMilli", 8000}, {"memoryBytes", int64_t{32} << 30},
                {"devices", json::array()}, {"agentVersion", "test"}};
    ExpectCell(row.register_node, api.Post("/api/v1/agent/register", reg.dump(), "application/json"),
               row.user + " agent register");
    // Tokens: its own (issue, list) and another user's (revoke).
    ExpectCell(row.token[0], api.Post("/api/v1/tokens", json{{"description", "self"}}.dump(), "application/json"),
               row.user + " own token");
    auto other = server_->Client().Post("/api/v1/tokens", json{{"user", row.user == "ann" ? "max" : "ann"}}.dump(),
                                        "application/json");
    ASSERT_EQ(other.status, 201);
    ExpectCell(row.token[1], api.Delete("/api/v1/tokens/" + other.body["id"].get<std::string>()),
               row.user + " other's token");
    ExpectCell(row.user == "ann" ? 'A' : 'D', api.Post("/api/v1/apply", "kind: User\nname: zed\nroles: [{role: viewer}]\n",
                                                       "application/yaml"),
               row.user + " user-manage");
  }
  // Bootstrap tokens keep their exact rules: the admin token may do everything, the join token
  // only registers, a node credential only speaks for its own node.
  ExpectCell('A', As("admin-token").Get("/api/v1/workloads"), "admin token");
  auto join = As("join-token");
  ExpectCell('D', join.Get("/api/v1/workloads"), "join token list");
  json reg = {{"name", "gpu-x"}, {"cpuMilli", 8000}, {"memoryBytes", int64_t{32} << 30},
              {"devices", json::array()}, {"agentVersion", "test"}};
  auto registered = join.Post("/api/v1/agent/register", reg.dump(), "application/json");
  ASSERT_EQ(registered.status, 200) << registered.text;
  cli::ApiClient node({server_->url(), registered.body.value("nodeToken", "")});
  ExpectCell('D', node.Get("/api/v1/workloads"), "node credential list");
  ExpectCell('D', node.Get("/api/v1/nodes"), "node credential nodes");
  ExpectCell('A', node.Post("/api/v1/agent/heartbeat", json{{"node", "gpu-x"}}.dump(), "application/json"),
             "node heartbeat");
  ExpectCell('D', node.Post("/api/v1/agent/heartbeat", json{{"node", "gpu-y"}}.dump(), "application/json"),
             "node speaks for another");
  // Unknown tokens are 401.
  cli::ApiClient nobody({server_->url(), std::string(64, 'a')});
  EXPECT_EQ(nobody.Get("/api/v1/workloads").status, 401);
  // The registration is audited without its credential; heartbeats are not audited at all.
  auto audit = server_->Client().Get("/api/v1/audit");
  ASSERT_EQ(audit.status, 200);
  EXPECT_EQ(audit.text.find(registered.body.value("nodeToken", "")), std::string::npos);
  EXPECT_NE(audit.text.find(R"("action":"agent-register","actor":"join token")"), std::string::npos);
  EXPECT_EQ(audit.text.find("gpu-y"), std::string::npos);
  for (const auto& [user, secret] : tokens_) EXPECT_EQ(audit.text.find(secret), std::string::npos) << user;
}

// Every other route of the API (http_server.cc, governance_api.cc) × every role × own/other
// tenant: the routes AuthorizationMatrix leaves out. Columns of each expectation: ann (admin),
// tia (tenant-admin of t1), max (member of t1/p1), val (viewer), vic (viewer of t1), and the
// node credential of agent node gpu-m. 'A': allowed (not 401 or 403, not a hiding 404, no
// server error), 'D': 403, 'H': 404 "… not found" (hidden, like a missing object).
TEST_F(GovernanceTest, EveryRouteForEveryRole) {
  auto admin = server_->Client();
  ASSERT_EQ(admin.Post("/api/v1/nodes", json{{"name", "sim-m"}, {"cpu", "8"}, {"memory", "32Gi"}, {"simulated", true}}.dump(),
                       "application/json")
                .status,
            201);
  json reg = {{"name", "gpu-m"}, {"cpuMilli", 8000}, {"memoryBytes", int64_t{32} << 30},
              {"devices", json::array()}, {"agentVersion", "test"}};
  auto registered = As("join-token").Post("/api/v1/agent/register", reg.dump(), "application/json");
  ASSERT_EQ(registered.status, 200) << registered.text;
  const std::string own = Seed("own-w", 0), other = Seed("other-w", 2);
  for (const char* t : {"t1", "t2"}) {
    auto p = admin.Post("/api/v1/policies", "kind: AdmissionPolicy\nname: pol-" + std::string(t) + "\ntenants: [" + t +
                                                "]\nspec: {maxResources: {cpu: 500}}\n",
                        "application/yaml");
    ASSERT_EQ(p.status, 200) << p.text;
  }
  struct Route {
    std::string method, path, body;
    std::string expect;                // ann tia max val vic node
    std::function<void()> setup = {};  // run as the bootstrap admin before each call
  };
  auto user = [&](const std::string& name) {
    return [&, name] {
      admin.Post("/api/v1/users", "kind: User\nname: " + name + "\nroles: [{role: viewer}]\n", "application/yaml");
    };
  };
  auto policy = [&](const std::string& tenant) {
    return [&, tenant] {
      admin.Post("/api/v1/policies", "kind: AdmissionPolicy\nname: pol-" + tenant + "\ntenants: [" + tenant +
                                         "]\nspec: {maxResources: {cpu: 500}}\n",
                 "application/yaml");
    };
  };
  const std::vector<Route> routes = {
      {"GET", "/readyz", "", "AAAAAD"},
      {"GET", "/metrics", "", "ADDADD"},
      {"GET", "/api/v1/workloads", "", "AAAAAD"},
      {"GET", "/api/v1/workloads/" + own + "/explain", "", "AAAAAD"},
      {"GET", "/api/v1/workloads/" + other + "/explain", "", "AHHAHD"},
      {"GET", "/api/v1/workloads/" + own + "/logs", "", "AAAAAD"},
      {"GET", "/api/v1/workloads/" + other + "/logs", "", "AHHAHD"},
      {"POST", "/api/v1/workloads/" + own + "/scale", R"({"replicas": 2})", "AAADDD"},
      {"POST", "/api/v1/workloads/" + other + "/scale", R"({"replicas": 2})", "AHHDHD"},
      {"POST", "/api/v1/workloads/" + own + "/metrics", R"({"value": 1})", "AAADDD"},
      {"POST", "/api/v1/workloads/" + other + "/metrics", R"({"value": 1})", "AHHDHD"},
      {"POST", "/api/v1/workloads/" + own + "/quota", R"({"approve": true})", "AADDDD"},
      {"POST", "/api/v1/workloads/" + other + "/quota", R"({"approve": true})", "AHHDHD"},
      {"DELETE", "/api/v1/workloads/" + own, "", "AAADDD"},
      {"DELETE", "/api/v1/workloads/" + other, "", "AHHDHD"},
      {"GET", "/api/v1/tenants", "", "AAAAAD"},
      {"GET", "/api/v1/tenants/t1", "", "AAAAAD"},
      {"GET", "/api/v1/tenants/t2", "", "AHHAHD"},
      {"GET", "/api/v1/projects", "", "AAAAAD"},
      {"GET", "/api/v1/queues", "", "AAAAAD"},
      {"GET", "/api/v1/queues/q1", "", "AAAAAD"},
      {"GET", "/api/v1/queues/q2", "", "AHHAHD"},
      {"GET", "/api/v1/shares", "", "AAAAAD"},
      {"GET", "/api/v1/shares/q1", "", "AAAAAD"},
      {"GET", "/api/v1/shares/q2", "", "AHHAHD"},
      {"GET", "/api/v1/cohorts", "", "AAAAAD"},
      {"GET", "/api/v1/pools", "", "AAAAAD"},
      {"GET", "/api/v1/priorityclasses", "", "AAAAAD"},
      {"GET", "/api/v1/flavors", "", "AAAAAD"},
      {"GET", "/api/v1/nodes/sim-m", "", "AAAAAD"},
      {"GET", "/api/v1/devices", "", "AAAAAD"},
      {"GET", "/api/v1/pricelists", "", "AAAAAD"},
      {"GET", "/api/v1/evaluations", "", "AAAAAD"},
      {"GET", "/api/v1/evaluations?model=llama&baseline=1.0", "", "AAAAAD"},
      {"POST", "/api/v1/evaluations", "{}", "ADDDDD"},
      {"POST", "/api/v1/tenants", "kind: Tenant\nname: t1\n", "ADDDDD"},
      {"POST", "/api/v1/projects", "kind: Project\nname: p9\ntenant: t1\n", "AADDDD"},
      {"POST", "/api/v1/projects", "kind: Project\nname: p9\ntenant: t2\n", "ADDDDD"},
      {"POST", "/api/v1/cohorts", "kind: Cohort\nname: c9\n", "ADDDDD"},
      {"POST", "/api/v1/priorityclasses", "kind: PriorityClass\nname: pc9\nvalue: 9\n", "ADDDDD"},
      {"POST", "/api/v1/pools", "kind: Pool\nname: pool9\n", "ADDDDD"},
      {"POST", "/api/v1/flavors", "kind: Flavor\nname: gpu/nvidia/T4\n", "ADDDDD"},
      {"GET", "/api/v1/tokens", "", "AAAAAD"},
      {"GET", "/api/v1/users", "", "AAAAAD"},
      {"GET", "/api/v1/users/ann", "", "AHHAHD"},
      {"GET", "/api/v1/users/max", "", "AHAAHD"},
      {"DELETE", "/api/v1/users/zed", "", "AHHDHD", user("zed")},
      {"GET", "/api/v1/policies", "", "AAAAAD"},
      {"GET", "/api/v1/policies/pol-t1", "", "AAAAAD"},
      {"GET", "/api/v1/policies/pol-t2", "", "AHHAHD"},
      {"DELETE", "/api/v1/policies/pol-t1", "", "AADDDD", policy("t1")},
      {"DELETE", "/api/v1/policies/pol-t2", "", "AHHDHD", policy("t2")},
      {"GET", "/api/v1/audit?verify=1", "", "ADDDDD"},
      {"POST", "/api/v1/agent/status", R"({"node": "gpu-m", "tasks": []})", "DDDDDA"},
      {"POST", "/api/v1/agent/heartbeat", R"({"node": "gpu-m"})", "DDDDDA"},
      // (the node too is refused: task x.0.0.1 is not assigned to it; issue 20 point 3)
      {"POST", "/api/v1/agent/logs", R"({"node": "gpu-m", "taskId": "x.0.0.1", "stream": "stdout", "offset": 0, "data": ""})",
       "DDDDDD"},
      {"GET", "/api/v1/agent/assignments?node=gpu-m&waitMs=0", "", "DDDDDA"},
  };
  // ApiClient owns its connection through a raw pointer: kept in place, never copied or moved.
  std::vector<std::pair<std::string, std::unique_ptr<cli::ApiClient>>> callers;
  for (const char* u : {"ann", "tia", "max", "val", "vic"}) {
    callers.emplace_back(u, std::make_unique<cli::ApiClient>(cli::ClientConfig{server_->url(), tokens_.at(u)}));
  }
  callers.emplace_back("node gpu-m", std::make_unique<cli::ApiClient>(
                                         cli::ClientConfig{server_->url(), registered.body.value("nodeToken", "")}));
  for (const Route& r : routes) {
    ASSERT_EQ(r.expect.size(), callers.size()) << r.path;
    for (size_t i = 0; i < callers.size(); ++i) {
      if (r.setup) r.setup();
      cli::ApiClient& api = *callers[i].second;
      bool yaml = !r.body.empty() && r.body[0] != '{';
      cli::ApiResponse res = r.method == "GET"      ? api.Get(r.path)
                             : r.method == "DELETE" ? api.Delete(r.path)
                                                    : api.Post(r.path, r.body, yaml ? "application/yaml" : "application/json");
      std::string what = callers[i].first + " " + r.method + " " + r.path + (r.body.empty() ? "" : " " + r.body);
      // A hidden object answers exactly like a missing one: 404 "… not found". Other 404s (no
      // logs written yet, a task the server does not know) come from a handler that ran.
      const std::string message = res.body.is_object() && res.body.contains("error")
                                      ? res.body["error"].value("message", "")
                                      : "";
      const bool hidden = res.status == 404 && message.find("not found") != std::string::npos;
      switch (r.expect[i]) {
        case 'A':
          EXPECT_TRUE(res.status != 401 && res.status != 403 && !hidden && res.status > 0 && res.status < 500)
              << what << ": " << res.status << " " << res.text;
          break;
        case 'D': EXPECT_EQ(res.status, 403) << what << ": " << res.text; break;
        case 'H': EXPECT_TRUE(hidden) << what << ": " << res.status << " " << res.text; break;
      }
    }
  }
}

TEST_F(GovernanceTest, ListsAreFiltered) {
  for (int col = 0; col < 3; ++col) Seed("w" + std::to_string(col), col);
  auto names = [&](const std::string& user, const std::string& path) { return Names(As(user).Get(path).body); };
  using S = std::set<std::string>;
  EXPECT_EQ(names("max", "/api/v1/workloads"), (S{"w0"}));
  EXPECT_EQ(names("max", "/api/v1/workloads?tenant=t2"), S{});
  EXPECT_EQ(As("max").Get("/api/v1/workloads").body["total"], 1);
  EXPECT_EQ(names("tia", "/api/v1/workloads"), (S{"w0", "w1"}));
  EXPECT_EQ(names("vic", "/api/v1/workloads"), (S{"w0", "w1"}));
  EXPECT_EQ(names("val", "/api/v1/workloads"), (S{"w0", "w1", "w2"}));
  EXPECT_EQ(names("ann", "/api/v1/workloads"), (S{"w0", "w1", "w2"}));
  // Tenancy lists: a member sees its tenant's queues, tenants and projects.
  EXPECT_EQ(names("max", "/api/v1/queues"), (S{"q1"}));
  EXPECT_EQ(As("max").Get("/api/v1/queues/q2").status, 404);
  EXPECT_EQ(As("max").Get("/api/v1/queues/q1").status, 200);
  EXPECT_EQ(names("max", "/api/v1/tenants"), (S{"t1"}));
  EXPECT_EQ(names("max", "/api/v1/projects"), (S{"p1", "p2"}));
  EXPECT_EQ(names("val", "/api/v1/queues"), (S{"q1", "q2"}));
  // Fair shares follow the queues' visibility: another tenant's queue is absent (and 404).
  EXPECT_EQ(names("max", "/api/v1/shares"), (S{"q1"}));
  EXPECT_EQ(As("max").Get("/api/v1/shares/q2").status, 404);
  EXPECT_EQ(As("max").Get("/api/v1/shares/q1").status, 200);
  EXPECT_EQ(names("val", "/api/v1/shares"), (S{"q1", "q2"}));
  // Users and tokens: a user sees itself and its own tokens; an admin everything.
  EXPECT_EQ(names("max", "/api/v1/users"), (S{"max"}));
  EXPECT_EQ(names("ann", "/api/v1/users").size(), 5u);
  auto own = As("max").Get("/api/v1/tokens");
  ASSERT_EQ(own.status, 200);
  ASSERT_EQ(own.body["items"].size(), 1u);
  EXPECT_EQ(own.body["items"][0]["user"], "max");
  EXPECT_FALSE(own.body["items"][0].contains("sha256"));
  EXPECT_EQ(As("ann").Get("/api/v1/tokens").body["items"].size(), 5u);
  // Audit export: a tenant-admin reads its tenant's entries only.
  auto audit = As("tia").Get("/api/v1/audit");
  ASSERT_EQ(audit.status, 200);
  int creates = 0;
  for (size_t start = 0; start < audit.text.size();) {
    size_t end = audit.text.find('\n', start);
    json e = json::parse(audit.text.substr(start, end - start));
    EXPECT_EQ(e["tenant"], "t1") << e.dump();  // and the quota-change of q1 when the org was applied
    if (e["action"] == "create") ++creates;
    start = end + 1;
  }
  EXPECT_EQ(creates, 2);  // w0 and w1 were submitted in t1
}

TEST_F(GovernanceTest, TokensThroughTheCli) {
  auto with = [&](std::vector<std::string> args) {
    std::vector<std::string> conn = {"--server", server_->url(), "--token", server_->token()};
    args.insert(args.end(), conn.begin(), conn.end());
    return RunCli(args);
  };
  CliResult created = with({"token", "create", "--user", "max", "--expires", "30d", "--description", "ci"});
  ASSERT_EQ(created.code, 0) << created.err;
  std::string secret = created.out.substr(0, created.out.find('\n'));
  ASSERT_EQ(secret.size(), 64u) << created.out;
  EXPECT_NE(created.err.find("shown only this once"), std::string::npos);
  cli::ApiClient max({server_->url(), secret});
  EXPECT_EQ(max.Get("/api/v1/workloads").status, 200);
  CliResult listed = with({"token", "list", "--user", "max", "-o", "json"});
  ASSERT_EQ(listed.code, 0) << listed.err;
  json items = json::parse(listed.out);
  std::string id;
  for (const auto& t : items) {
    if (t["description"] == "ci") {
      id = t["id"];
      EXPECT_TRUE(t.contains("expiresAt"));
      EXPECT_TRUE(t.contains("lastUsedAt"));  // it was just used
    }
    EXPECT_EQ(t.dump().find(secret), std::string::npos);
  }
  ASSERT_FALSE(id.empty()) << listed.out;
  CliResult table = with({"token", "list"});
  EXPECT_NE(table.out.find(id), std::string::npos) << table.out;
  CliResult revoked = with({"token", "revoke", id});
  ASSERT_EQ(revoked.code, 0) << revoked.err;
  auto refused = max.Get("/api/v1/workloads");
  EXPECT_EQ(refused.status, 401);
  EXPECT_NE(refused.text.find("revoked"), std::string::npos) << refused.text;
  // Survives a restart: still revoked, the others still work.
  server_->Terminate();
  server_->Start();
  cli::ApiClient again({server_->url(), secret});
  EXPECT_EQ(again.Get("/api/v1/workloads").status, 401);
  EXPECT_EQ(As("max").Get("/api/v1/workloads").status, 200);
  EXPECT_EQ(with({"token", "create", "--user", "nobody"}).code, 1);
}

// `abacus get users|policies` and `describe user|policy`, filtered like the REST lists.
TEST_F(GovernanceTest, UsersAndPoliciesThroughTheCli) {
  auto as = [&](const std::string& token, std::vector<std::string> args) {
    std::vector<std::string> conn = {"--server", server_->url(), "--token", token};
    args.insert(args.end(), conn.begin(), conn.end());
    return RunCli(args);
  };
  auto applied = server_->Client().Post(
      "/api/v1/policies",
      "kind: AdmissionPolicy\nname: t2-rules\ntenants: [t2]\nspec:\n  network: isolated\n  pools: [test]\n"
      "  images: {allowedRegistries: [registry.local]}\n",
      "application/yaml");
  ASSERT_EQ(applied.status, 200) << applied.text;
  CliResult users = as(server_->token(), {"get", "users"});
  ASSERT_EQ(users.code, 0) << users.err;
  EXPECT_NE(users.out.find("ROLES"), std::string::npos) << users.out;
  EXPECT_NE(users.out.find("tenant-admin of t1"), std::string::npos) << users.out;
  EXPECT_NE(users.out.find("member of t1/p1"), std::string::npos) << users.out;
  CliResult own = as(tokens_.at("max"), {"get", "users", "-o", "json"});
  ASSERT_EQ(own.code, 0) << own.err;
  EXPECT_EQ(Names(json::parse(own.out)), (std::set<std::string>{"max"}));  // a member sees itself only
  CliResult policies = as(server_->token(), {"get", "policies"});
  ASSERT_EQ(policies.code, 0) << policies.err;
  EXPECT_NE(policies.out.find("t2-rules"), std::string::npos) << policies.out;
  EXPECT_NE(policies.out.find("network=isolated"), std::string::npos) << policies.out;
  EXPECT_NE(policies.out.find("pools=test"), std::string::npos) << policies.out;
  CliResult hidden = as(tokens_.at("max"), {"get", "policies", "-o", "json"});
  ASSERT_EQ(hidden.code, 0) << hidden.err;
  EXPECT_TRUE(Names(json::parse(hidden.out)).empty()) << hidden.out;  // t2's policy is not t1's business
  CliResult described = as(server_->token(), {"describe", "policy", "t2-rules"});
  ASSERT_EQ(described.code, 0) << described.err;
  EXPECT_NE(described.out.find("allowedRegistries"), std::string::npos) << described.out;
  CliResult user = as(tokens_.at("max"), {"describe", "user", "max"});
  ASSERT_EQ(user.code, 0) << user.err;
  EXPECT_NE(user.out.find("member"), std::string::npos) << user.out;
  EXPECT_NE(as(tokens_.at("max"), {"describe", "user", "ann"}).code, 0);
}

TEST_F(GovernanceTest, AuditChainDetectsTampering) {
  auto max = As("max");
  ASSERT_EQ(max.Post("/api/v1/workloads", Job("a1", "t1/p1", "q1"), "application/yaml").status, 201);
  ASSERT_EQ(max.Post("/api/v1/workloads", Job("a2", "t2/p3", "q2"), "application/yaml").status, 403);
  ASSERT_EQ(max.Post("/api/v1/workloads/a1/cancel", "{}", "application/json").status, 200);
  auto export_ = server_->Client().Get("/api/v1/audit");
  ASSERT_EQ(export_.status, 200);
  // Every entry carries actor, action, object, result, time and request id; denials too.
  bool saw_denial = false, saw_cancel = false;
  int64_t cancel_seq = 0;
  for (size_t start = 0; start < export_.text.size();) {
    size_t end = export_.text.find('\n', start);
    json e = json::parse(export_.text.substr(start, end - start));
    start = end + 1;
    EXPECT_FALSE(e["requestId"].get<std::string>().empty());
    if (e["actor"] == "user max" && e["action"] == "create" && e["result"].get<std::string>().rfind("403", 0) == 0) {
      saw_denial = true;
      EXPECT_EQ(e["object"]["name"], "t2/p3/a2");
    }
    if (e["actor"] == "user max" && e["action"] == "cancel") {
      saw_cancel = true;
      cancel_seq = e["seq"];
      EXPECT_EQ(e["result"], "ok");
      EXPECT_NE(e["before"].get<std::string>().find("Pending"), std::string::npos);
      EXPECT_NE(e["after"].get<std::string>().find("Cancelled"), std::string::npos);
    }
  }
  EXPECT_TRUE(saw_denial);
  ASSERT_TRUE(saw_cancel);
  auto verify = [&] {
    std::vector<std::string> conn = {"--server", server_->url(), "--token", server_->token()};
    std::vector<std::string> args = {"audit", "--verify"};
    args.insert(args.end(), conn.begin(), conn.end());
    return RunCli(args);
  };
  CliResult ok = verify();
  EXPECT_EQ(ok.code, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("audit chain OK"), std::string::npos) << ok.out;
  // Non-admins may not run the check.
  EXPECT_EQ(As("tia").Get("/api/v1/audit?verify=1").status, 403);

  // Edit one row of the journal while the server is stopped.
  server_->Terminate();
  std::string db = server_->data_dir() + "/abacus.db";
  std::string sql = "UPDATE journal SET json = replace(json, '\"result\":\"ok\"', '\"result\":\"denied\"') "
                    "WHERE stream = 'audit' AND seq = " + std::to_string(cancel_seq) + ";";
  if (std::system("command -v sqlite3 > /dev/null") != 0) GTEST_SKIP() << "sqlite3 is not installed";
  ASSERT_EQ(std::system(("sqlite3 '" + db + "' \"" + [&] {
                           std::string escaped;
                           for (char c : sql) escaped += c == '"' ? std::string("\\\"") : std::string(1, c);
                           return escaped;
                         }() + "\"").c_str()),
            0);
  server_->Start();
  auto report = server_->Client().Get("/api/v1/audit?verify=1");
  ASSERT_EQ(report.status, 200) << report.text;
  EXPECT_FALSE(report.body["ok"].get<bool>());
  EXPECT_EQ(report.body["firstBadSeq"], cancel_seq);
  std::string seq_text = "seq " + std::to_string(cancel_seq);
  EXPECT_NE(report.body["reason"].get<std::string>().find(seq_text), std::string::npos) << report.text;
  CliResult broken = verify();
  EXPECT_EQ(broken.code, 1);
  EXPECT_NE(broken.out.find("BROKEN"), std::string::npos) << broken.out;
  EXPECT_NE(broken.out.find(seq_text), std::string::npos) << broken.out;

  // Removing an entry is detected as well.
  server_->Terminate();
  ASSERT_EQ(std::system(("sqlite3 '" + db + "' \"DELETE FROM journal WHERE stream = 'audit' AND seq = 1;\"").c_str()), 0);
  server_->Start();
  report = server_->Client().Get("/api/v1/audit?verify=1");
  EXPECT_FALSE(report.body["ok"].get<bool>());
  EXPECT_EQ(report.body["firstBadSeq"], 1) << report.text;
}

TEST_F(GovernanceTest, EachAdmissionRuleAcceptsAndRejects) {
  auto tia = As("tia");
  int serial = 0;
  // Applies `spec` as t1's only policy, then checks that `good` is accepted and `bad` refused
  // with a message holding `why`.
  auto rule = [&](const std::string& spec, const std::string& good, const std::string& bad, const std::string& why) {
    std::string name = "rule-" + std::to_string(++serial);
    auto applied = tia.Post("/api/v1/policies", "kind: AdmissionPolicy\nname: " + name + "\ntenants: [t1]\nspec:\n" + spec,
                            "application/yaml");
    ASSERT_EQ(applied.status, 200) << applied.text;
    auto accepted = tia.Post("/api/v1/workloads", good, "application/yaml");
    EXPECT_EQ(accepted.status, 201) << name << ": " << accepted.text;
    auto refused = tia.Post("/api/v1/workloads", bad, "application/yaml");
    EXPECT_EQ(refused.status, 403) << name << ": " << refused.text;
    std::string message = refused.body["error"].value("message", "");
    EXPECT_NE(message.find("policy " + name), std::string::npos) << message;
    EXPECT_NE(message.find(why), std::string::npos) << message;
    // Other tenants are not bound by t1's policy.
    std::string other = bad;
    for (auto [from, to] : {std::pair{"t1/p1", "t2/p3"}, std::pair{"queue: q1", "queue: q2"}}) {
      other.replace(other.find(from), std::string(from).size(), to);
    }
    EXPECT_EQ(server_->Client().Post("/api/v1/workloads", other, "application/yaml").status, 201) << name;
    ASSERT_EQ(tia.Delete("/api/v1/policies/" + name).status, 200);
  };
  auto job = [&](const std::string& extra_spec, const std::string& top = "", int cpu = 1) {
    return Job("r" + std::to_string(++serial), "t1/p1", "q1", extra_spec, top, cpu);
  };
  const std::string digest(64, 'a');
  rule("  images: {allowedRegistries: [registry.local]}\n", job("  image: registry.local/x:1\n"),
       job("  image: docker.io/library/x:1\n"), "image registry docker.io is not allowed for tenant t1");
  rule("  images: {requireImage: true}\n", job("  image: registry.local/x:1\n"), job(""), "must run an image");
  rule("  images: {requireDigestFor: [production]}\n",
       job("  image: registry.local/x@sha256:" + digest + "\n", "priorityClass: production\n"),
       job("  image: registry.local/x:2\n", "priorityClass: production\n"),
       "priority class production requires an image pinned by digest");
  rule("  mounts: [{pathPrefix: /data/t1, access: read-only}]\n", job("  mounts: [{path: /data/t1/corpus}]\n"),
       job("  mounts: [{path: /etc}]\n"), "mount /etc is not allowed for tenant t1");
  rule("  mounts: [{pathPrefix: /data/t1, access: read-only}]\n", job("  mounts: [{path: /data/t1/corpus}]\n"),
       job("  mounts: [{path: /data/t1/corpus, readOnly: false}]\n"), "may only be read-only");
  rule("  maxResources: {cpu: 4}\n", job("", "", 2), job("", "", 8), "above the maximum");
  rule("  pools: [train]\n", job("", "", 1),
       "kind: TrainingJob\nname: pooled\nproject: t1/p1\nqueue: q1\nspec:\n  command: [\"true\"]\n  taskGroups:\n"
       "    - name: w\n      resources: {cpu: 1, memory: 1Gi}\n      nodeSelector: {abacus.io/pool: infer}\n",
       "pool infer is not allowed for tenant t1");
  rule("  priorityClasses: [training]\n", job("", "priorityClass: training\n"),
       job("", "priorityClass: system-critical\n"), "priority class system-critical is not allowed for tenant t1");
  // network is not a check: the class reaches the workload for the runtime.
  ASSERT_EQ(tia.Post("/api/v1/policies", "kind: AdmissionPolicy\nname: net\ntenants: [t1]\nspec: {network: isolated}\n",
                     "application/yaml")
                .status,
            200);
  auto submitted = tia.Post("/api/v1/workloads", job(""), "application/yaml");
  ASSERT_EQ(submitted.status, 201) << submitted.text;
  auto w = tia.Get("/api/v1/workloads/" + submitted.body["items"][0]["id"].get<std::string>());
  EXPECT_EQ(w.body["spec"]["labels"]["abacus.io/network"], "isolated") << w.text;
  // Policies are readable by the tenant's members, not by other tenants'.
  EXPECT_EQ(As("max").Get("/api/v1/policies/net").status, 200);
  EXPECT_EQ(Names(As("max").Get("/api/v1/policies").body), (std::set<std::string>{"net"}));
}

// The network class of an AdmissionPolicy reaches the task on a real agent: a process of an
// isolated tenant finds ABACUS_NETWORK_CLASS=isolated in its environment; a tenant without the
// policy finds none; a label naming a class cannot be smuggled in by the submitter.
TEST_F(GovernanceTest, IsolatedTenantTaskSeesItsNetworkClass) {
  AgentProcess agent(*server_, "cpu-net", "");
  auto admin = server_->Client();
  auto policy = admin.Post("/api/v1/policies",
                           "kind: AdmissionPolicy\nname: t2-isolated\ntenants: [t2]\nspec: {network: isolated}\n",
                           "application/yaml");
  ASSERT_EQ(policy.status, 200) << policy.text;
  auto submit = [&](const std::string& name, const std::string& project, const std::string& queue) {
    std::string yaml = "kind: TrainingJob\nname: " + name + "\nproject: " + project + "\nqueue: " + queue +
                       "\nlabels: {abacus.io/network: internet}\nspec:\n"
                       "  command: [\"sh\", \"-c\", \"echo class=${ABACUS_NETWORK_CLASS:-none}\"]\n"
                       "  taskGroups:\n    - name: w\n      resources: {cpu: 1, memory: 64Mi}\n";
    auto r = admin.Post("/api/v1/workloads", yaml, "application/yaml");
    EXPECT_EQ(r.status, 201) << r.text;
    return r.ok() ? r.body["items"][0]["id"].get<std::string>() : std::string();
  };
  auto log_of = [&](const std::string& id) {
    EXPECT_TRUE(WaitFor([&] { return admin.Get("/api/v1/workloads/" + id).body.value("state", "") == "Succeeded"; },
                        std::chrono::seconds(60)))
        << admin.Get("/api/v1/workloads/" + id).text;
    std::string log;
    WaitFor([&] {
      log = admin.Get("/api/v1/workloads/" + id + "/logs").body.value("content", "");
      return !log.empty();
    });
    return log;
  };
  std::string isolated = submit("net-iso", "t2/p3", "q2");
  std::string open = submit("net-open", "t1/p1", "q1");
  ASSERT_FALSE(isolated.empty());
  ASSERT_FALSE(open.empty());
  EXPECT_EQ(log_of(isolated), "class=isolated\n");
  EXPECT_EQ(log_of(open), "class=none\n");  // no policy: the submitter's label was dropped
}

TEST(GovernanceRateLimitTest, TooManyRequestsPerTokenAre429WithRetryAfter) {
  TempDir dir;
  ServerProcess server(dir.path(), {"--rate-limit", "2:3"});
  httplib::Client c(server.url());
  c.set_bearer_token_auth(server.token().c_str());
  int limited = 0;
  std::string retry_after;
  for (int i = 0; i < 12; ++i) {
    auto r = c.Get("/api/v1/workloads");
    ASSERT_TRUE(r);
    if (r->status == 429) {
      ++limited;
      retry_after = r->get_header_value("Retry-After");
      EXPECT_NE(r->body.find("rate limit"), std::string::npos) << r->body;
    }
  }
  EXPECT_GE(limited, 4);  // a burst of 3, then 2 a second
  EXPECT_FALSE(retry_after.empty());
  EXPECT_GE(std::atoi(retry_after.c_str()), 1);
  // Another token has its own bucket.
  httplib::Client join(server.url());
  join.set_bearer_token_auth(server.join_token().c_str());
  auto other = join.Get("/api/v1/workloads");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->status, 403);  // refused by role, not by the limit
}

// GET /api/v1/whoami against the real server (issue 25): an admin, a tenant member and a viewer
// each get the actions their roles allow on a workload; a workload the caller may not see is 404,
// exactly as GET /api/v1/workloads/W.
TEST_F(GovernanceTest, WhoamiListsTheActionsEachRoleMayTakeOnAWorkload) {
  const std::string own = Seed("who-own", 0);      // t1/p1: max's project
  const std::string other = Seed("who-other", 2);  // t2/p3: another tenant
  auto may = [&](const std::string& user, const std::string& id) {
    auto r = As(user).Get("/api/v1/whoami?workload=" + id);
    EXPECT_EQ(r.status, 200) << user << ": " << r.text;
    std::set<std::string> out;
    for (const auto& a : r.body.value("may", json::array())) out.insert(a.get<std::string>());
    return out;
  };
  auto has = [](const std::set<std::string>& s, const char* a) { return s.count(a) != 0; };

  auto ann = may("ann", own);
  for (const char* a : {"read", "cancel", "hold", "scale", "quota-change"}) EXPECT_TRUE(has(ann, a)) << "admin: " << a;
  auto max = may("max", own);
  for (const char* a : {"read", "cancel", "hold", "scale"}) EXPECT_TRUE(has(max, a)) << "member: " << a;
  for (const char* a : {"quota-change", "node-control", "audit-read"}) EXPECT_FALSE(has(max, a)) << "member: " << a;
  auto val = may("val", own);
  EXPECT_TRUE(has(val, "read"));
  for (const char* a : {"cancel", "hold", "scale", "quota-change", "create"}) EXPECT_FALSE(has(val, a)) << "viewer: " << a;
  EXPECT_TRUE(may("val", other).count("read"));  // an unscoped viewer sees every tenant

  // Who the caller is comes with it.
  auto who = As("max").Get("/api/v1/whoami");
  EXPECT_EQ(who.body["name"], "max");
  EXPECT_EQ(who.body["roles"][0]["role"], "member");
  EXPECT_FALSE(who.body.contains("may"));

  // Another tenant's workload, by id or by name: not found, naming nothing of it.
  for (const std::string& w : {other, std::string("who-other")}) {
    auto r = As("max").Get("/api/v1/whoami?workload=" + w);
    EXPECT_EQ(r.status, 404) << r.text;
    // Nothing of it but what the caller named (a random id may itself hold "t2").
    std::string said = r.text;
    for (size_t at = said.find(w); at != std::string::npos; at = said.find(w)) said.erase(at, w.size());
    EXPECT_EQ(said.find("t2"), std::string::npos) << r.text;
  }
  EXPECT_EQ(As("max").Get("/api/v1/workloads/" + other).status, 404);
}

// GET /api/v1/nodes names a device's holders as the caller may see them (issue 25): the admin
// sees both tenants' workloads; a member of t1/p1 sees its own by name and t2's only as
// hiddenMilli (and hiddenCpuMilli on the node), never its id or name.
TEST_F(GovernanceTest, NodeDevicesNameOnlyTheHoldersTheCallerMaySee) {
  auto admin = server_->Client();
  const std::string a100 = "gpu/nvidia/A100-80G";
  for (const char* q : {"q1", "q2"}) {
    std::string queue = std::string("kind: Queue\nname: ") + q + "\ntenant: " + (q[1] == '1' ? "t1" : "t2") +
                        "\nquotas:\n  - {resource: cpu, nominal: 1000}\n  - {resource: memory, nominal: 4Ti}\n"
                        "  - {resource: " + a100 + ", nominal: 1}\n";
    ASSERT_EQ(admin.Post("/api/v1/apply", queue, "application/yaml").status, 200);
  }
  json devices = json::array();
  for (int i = 0; i < 2; ++i) devices.push_back({{"index", i}, {"flavor", a100}, {"memory", "80Gi"}});
  json node = {{"name", "gpu-sim"}, {"cpu", "64"}, {"memory", "256Gi"}, {"simulated", true}, {"devices", devices}};
  ASSERT_TRUE(admin.Post("/api/v1/nodes", node.dump(), "application/json").ok());
  auto submit = [&](const std::string& name, int col) {
    std::string job = "kind: TrainingJob\nname: " + name + "\nproject: " + kProjects[col] + "\nqueue: " + kQueues[col] +
                      "\nspec:\n  command: [\"true\"]\n  taskGroups:\n    - name: w\n      resources: {cpu: 1, memory: 1Gi, "
                      "accelerators: {flavor: " + a100 + ", count: 1}}\n";
    auto r = admin.Post("/api/v1/workloads", job, "application/yaml");
    EXPECT_EQ(r.status, 201) << r.text;
    return r.body["items"][0].value("id", "");
  };
  const std::string ours = submit("gpu-ours", 0), theirs = submit("gpu-theirs", 2);
  ASSERT_TRUE(WaitFor([&] {
    auto n = admin.Get("/api/v1/nodes/gpu-sim").body;
    int held = 0;
    for (const auto& d : n["devices"]) held += d.value("allocatedMilli", 0) > 0;
    return held == 2;
  }));

  auto holders = [](const json& n) {
    std::map<std::string, std::string> out;  // workload id -> name
    for (const auto& d : n["devices"]) {
      for (const auto& h : d["holders"]) out[h["workload"]] = h["name"];
    }
    return out;
  };
  auto hidden = [](const json& n) {
    int64_t milli = 0;
    for (const auto& d : n["devices"]) milli += d.value("hiddenMilli", 0);
    return milli;
  };
  json seen_by_admin = admin.Get("/api/v1/nodes/gpu-sim").body;
  EXPECT_EQ(holders(seen_by_admin), (std::map<std::string, std::string>{{ours, "gpu-ours"}, {theirs, "gpu-theirs"}}));
  EXPECT_EQ(hidden(seen_by_admin), 0);

  auto member = As("max").Get("/api/v1/nodes/gpu-sim");
  ASSERT_EQ(member.status, 200) << member.text;
  EXPECT_EQ(holders(member.body), (std::map<std::string, std::string>{{ours, "gpu-ours"}}));
  EXPECT_EQ(hidden(member.body), 1000);
  EXPECT_EQ(member.body.value("hiddenCpuMilli", int64_t{0}), 1000);
  EXPECT_EQ(member.text.find(theirs), std::string::npos);
  EXPECT_EQ(member.text.find("gpu-theirs"), std::string::npos);
  // The list says the same, and /api/v1/devices names no holder at all.
  auto list = As("max").Get("/api/v1/nodes");
  EXPECT_EQ(list.text.find("gpu-theirs"), std::string::npos);
  EXPECT_EQ(As("max").Get("/api/v1/devices").text.find("gpu-ours"), std::string::npos);
}

}  // namespace
}  // namespace abacus::testing
