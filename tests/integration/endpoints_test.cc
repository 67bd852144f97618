// An InferenceService gets an address (issue 24, step 1), end to end with a real server and a
// real agent: each replica listens on the port its agent allocated (ABACUS_PORT, a python
// http.server from tests/fixtures/replica), reports host:port, and the server serves them as the
// service's endpoints — by id and by name, to those who may see the service only (another
// tenant gets 404, as for a missing one); `abacus get endpoints` and `describe` show them.
#include <gtest/gtest.h>

#include <httplib.h>

#include <set>

#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;

constexpr char kOrg[] = R"(kind: Tenant
name: a
---
kind: Project
name: serve
tenant: a
---
kind: Tenant
name: b
---
kind: Project
name: other
tenant: b
---
kind: Queue
name: qa
tenant: a
quotas:
  - {resource: cpu, nominal: 32}
  - {resource: memory, nominal: 64Gi}
---
kind: User
name: ann
roles: [{role: member, project: a/serve}]
---
kind: User
name: bob
roles: [{role: member, project: b/other}]
)";

std::string Replica() { return std::string(ABACUS_SOURCE_DIR) + "/tests/fixtures/replica/serve.py"; }

class EndpointsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(dir_.path(), std::vector<std::string>{"--heartbeat", "1"});
    auto admin = server_->Client();
    auto applied = admin.Post("/api/v1/apply", kOrg, "application/yaml");
    ASSERT_EQ(applied.status, 200) << applied.text;
    for (const char* user : {"ann", "bob"}) {
      auto r = admin.Post("/api/v1/tokens", json{{"user", user}}.dump(), "application/json");
      ASSERT_EQ(r.status, 201) << r.text;
      tokens_[user] = r.body["token"];
    }
    agent_ = std::make_unique<AgentProcess>(*server_, "cpu-1", "",
                                            std::vector<std::string>{"--cpus", "8", "--memory", "16Gi", "--port-range",
                                                                     "24100-24199"});
  }
  cli::ApiClient As(const std::string& user) { return cli::ApiClient({server_->url(), tokens_.at(user)}); }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<AgentProcess> agent_;
  std::map<std::string, std::string> tokens_;
};

TEST_F(EndpointsTest, ReplicasListenOnTheirAllocatedPortAndTheServerServesTheirAddresses) {
  const std::string spec = "kind: InferenceService\nname: chat\nproject: a/serve\nqueue: qa\nspec:\n"
                           "  command: [\"python3\", \"" + Replica() + "\"]\n"
                           "  taskGroups:\n    - name: server\n      resources: {cpu: 1, memory: 256Mi}\n"
                           "  replicas: 2\n  minReplicas: 1\n  maxReplicas: 4\n"
                           "  probes:\n    readiness: {http: {path: /ready}, periodSeconds: 1}\n";
  auto submitted = As("ann").Post("/api/v1/workloads", spec, "application/yaml");
  ASSERT_EQ(submitted.status, 201) << submitted.text;
  const std::string id = submitted.body["items"][0]["id"];

  json eps;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto r = As("ann").Get("/api/v1/services/" + id + "/endpoints");
        if (!r.ok()) return false;
        eps = r.body;
        int ready = 0;
        for (const json& e : eps["items"]) ready += e.value("ready", false) ? 1 : 0;
        return ready == 2;
      },
      std::chrono::seconds(40)))
      << eps.dump();
  EXPECT_EQ(eps["healthCheck"]["path"], "/ready");
  std::set<std::string> addresses;
  for (const json& e : eps["items"]) {
    const std::string address = e["address"];
    EXPECT_EQ(address.rfind("127.0.0.1:241", 0), 0u) << address;  // the agent's range
    EXPECT_EQ(e["state"], "serving");
    EXPECT_EQ(e["version"], "stable");
    addresses.insert(address);
    // The replica answers there, as the task the endpoint names.
    const int port = std::stoi(address.substr(address.find(':') + 1));
    httplib::Client direct("127.0.0.1", port);
    auto got = direct.Get("/");
    ASSERT_TRUE(got) << address;
    EXPECT_EQ(got->status, 200);
    EXPECT_NE(got->body.find(e["taskId"].get<std::string>()), std::string::npos) << got->body;
  }
  EXPECT_EQ(addresses.size(), 2u) << "each replica its own port";

  // By name too; another tenant's member gets 404 by id and by name, as for a missing service.
  EXPECT_EQ(As("ann").Get("/api/v1/services/chat/endpoints").status, 200);
  for (const std::string& ref : {id, std::string("chat")}) {
    auto r = As("bob").Get("/api/v1/services/" + ref + "/endpoints");
    EXPECT_EQ(r.status, 404) << ref << ": " << r.text;
    EXPECT_EQ(r.text.find("127.0.0.1:"), std::string::npos) << r.text;
  }
  EXPECT_EQ(As("ann").Get("/api/v1/services/nope/endpoints").status, 404);
  // The long poll answers at once when the caller's revision is not the current one, and
  // with the same revision after its timeout when nothing changed.
  auto same = As("ann").Get("/api/v1/services/" + id + "/endpoints?waitChange=" + eps["revision"].get<std::string>() +
                            "&timeoutSeconds=1");
  ASSERT_EQ(same.status, 200) << same.text;
  EXPECT_EQ(same.body["revision"], eps["revision"]);
  EXPECT_EQ(As("ann").Get("/api/v1/services/" + id + "/endpoints?timeoutSeconds=x").status, 400);

  // The CLI: a table row per replica, and describe's Endpoints section.
  const std::vector<std::string> env = {"ABACUS_SERVER=" + server_->url(), "ABACUS_TOKEN=" + tokens_.at("ann")};
  CliResult get = RunCli({"get", "endpoints", "chat"}, env);
  ASSERT_EQ(get.code, 0) << get.out;
  EXPECT_NE(get.out.find("ADDRESS"), std::string::npos) << get.out;
  for (const auto& a : addresses) EXPECT_NE(get.out.find(a), std::string::npos) << get.out;
  CliResult all = RunCli({"get", "endpoints"}, env);
  ASSERT_EQ(all.code, 0) << all.out;
  for (const auto& a : addresses) EXPECT_NE(all.out.find(a), std::string::npos) << all.out;
  CliResult other = RunCli({"get", "endpoints"}, {"ABACUS_SERVER=" + server_->url(), "ABACUS_TOKEN=" + tokens_.at("bob")});
  ASSERT_EQ(other.code, 0) << other.out;
  EXPECT_EQ(other.out.find("127.0.0.1:"), std::string::npos) << other.out;
  CliResult described = RunCli({"describe", "workload", "chat"}, env);
  ASSERT_EQ(described.code, 0) << described.out;
  EXPECT_NE(described.out.find("Endpoints:"), std::string::npos) << described.out;

  // Scaled down to 1: the replica the server stops leaves the endpoints.
  auto scaled = As("ann").Post("/api/v1/workloads/" + id + "/scale", json{{"replicas", 1}}.dump(), "application/json");
  ASSERT_EQ(scaled.status, 200) << scaled.text;
  ASSERT_TRUE(WaitFor(
      [&] {
        auto r = As("ann").Get("/api/v1/services/" + id + "/endpoints");
        return r.ok() && r.body["items"].size() == 1;
      },
      std::chrono::seconds(30)))
      << As("ann").Get("/api/v1/services/" + id + "/endpoints").text;
  // Scaled up again: the slot that ran before runs again under a new task id (its agent starts
  // an id at most once; the same id again left it unstarted for good).
  auto up = As("ann").Post("/api/v1/workloads/" + id + "/scale", json{{"replicas", 4}}.dump(), "application/json");
  ASSERT_EQ(up.status, 200) << up.text;
  EXPECT_TRUE(WaitFor(
      [&] {
        auto r = As("ann").Get("/api/v1/services/" + id + "/endpoints");
        if (!r.ok() || r.body["items"].size() != 4) return false;
        for (const json& e : r.body["items"]) {
          if (!e.value("ready", false)) return false;
        }
        return true;
      },
      std::chrono::seconds(30)))
      << As("ann").Get("/api/v1/workloads/" + id).text;
}

}  // namespace
}  // namespace abacus::testing
