// The agent protocol (docs/agent-protocol.md) against a real `abacus server`, spoken by the test
// itself: registration and credentials, assignments, task reports and what they do to workloads
// (start, success, failure with retries), log shipping, server restart and node loss.
#include <gtest/gtest.h>

#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;

const std::string& kOrg = kAcmeOrg;

std::string Job(const std::string& name, int max_retries = 0) {
  return "kind: TrainingJob\nname: " + name +
         "\nproject: acme/ml\nqueue: train\nspec:\n  command: [\"python3\", \"train.py\"]\n"
         "  env: {EPOCHS: \"3\"}\n  restartPolicy: {maxRetries: " +
         std::to_string(max_retries) +
         ", backoffSeconds: 1}\n  taskGroups:\n    - name: worker\n      replicas: 1\n      resources:\n"
         "        cpu: 4\n        memory: 16Gi\n        accelerators: {flavor: \"gpu/nvidia/A100-80G\", count: 1}\n";
}

json Registration(const std::string& name) {
  json devices = json::array();
  for (int i = 0; i < 2; ++i) {
    devices.push_back({{"index", i},
                       {"flavor", "gpu/nvidia/A100-80G"},
                       {"memoryBytes", int64_t{80} << 30},
                       {"uuid", name + "-GPU-" + std::to_string(i)},
                       {"runtimeVersions", {{"cuda", "12.4"}}},
                       {"simulated", true}});
  }
  return {{"name", name}, {"cpuMilli", 32000}, {"memoryBytes", int64_t{128} << 30}, {"devices", devices},
          {"agentVersion", "test"}};
}

class AgentProtocolTest : public ::testing::Test {
 protected:
  void SetUp() override { Start("30"); }
  void Start(const std::string& node_timeout, std::vector<std::string> extra = {}) {
    server_.reset();
    extra.insert(extra.begin(), {"--node-timeout", node_timeout});
    server_ = std::make_unique<ServerProcess>(dir_.path(), extra);
    auto admin = server_->Client();
    ASSERT_EQ(admin.Post("/api/v1/apply", kOrg, "application/yaml").status, 200);
  }
  // Registers `name` with the join token; returns the node credential.
  std::string Register(const std::string& name, json body = nullptr) {
    cli::ApiClient join({server_->url(), server_->join_token()});
    auto r = join.Post("/api/v1/agent/register", (body.is_null() ? Registration(name) : body).dump(), "application/json");
    EXPECT_EQ(r.status, 200) << r.text;
    return r.body.value("nodeToken", "");
  }
  json Assignments(cli::ApiClient& node, const std::string& name, uint64_t after = 0, int wait_ms = 0) {
    auto r = node.Get("/api/v1/agent/assignments?node=" + name + "&after=" + std::to_string(after) +
                      "&waitMs=" + std::to_string(wait_ms));
    EXPECT_EQ(r.status, 200) << r.text;
    return r.body;
  }
  void Report(cli::ApiClient& node, const std::string& name, json task) {
    auto r = node.Post("/api/v1/agent/status", json{{"node", name}, {"tasks", {task}}}.dump(), "application/json");
    ASSERT_EQ(r.status, 200) << r.text;
  }
  std::string StateOf(const std::string& w) { return server_->Client().Get("/api/v1/workloads/" + w).body.value("state", ""); }
  std::vector<std::string> EventTypes(const std::string& w) {
    std::vector<std::string> out;
    auto r = server_->Client().Get("/api/v1/workloads/" + w + "/events");
    for (const auto& e : r.body["items"]) out.push_back(e["type"]);
    return out;
  }
  bool HasEvent(const std::string& w, const std::string& type) {
    auto t = EventTypes(w);
    return std::find(t.begin(), t.end(), type) != t.end();
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(AgentProtocolTest, CredentialsAreScopedToTheirNode) {
  std::string token = Register("gpu-a");
  ASSERT_EQ(token.size(), 64u);
  cli::ApiClient join({server_->url(), server_->join_token()});
  cli::ApiClient node({server_->url(), token});
  // The join token only registers; the credential only makes agent calls for its own node.
  EXPECT_EQ(join.Get("/api/v1/agent/assignments?node=gpu-a").status, 403);
  EXPECT_EQ(node.Get("/api/v1/workloads").status, 403);
  EXPECT_EQ(node.Post("/api/v1/agent/register", Registration("gpu-b").dump(), "application/json").status, 403);
  EXPECT_EQ(node.Get("/api/v1/agent/assignments?node=gpu-b").status, 403);
  auto other = node.Post("/api/v1/agent/status", json{{"node", "gpu-b"}, {"tasks", json::array()}}.dump(),
                         "application/json");
  EXPECT_EQ(other.status, 403) << other.text;
  // The node is in the ledger as an agent node, without its credential hash.
  auto n = server_->Client().Get("/api/v1/nodes/gpu-a");
  ASSERT_EQ(n.status, 200);
  EXPECT_TRUE(n.body.value("agent", false));
  EXPECT_FALSE(n.body.contains("credentialSha256"));
  // The join token alone cannot register a registered node again (it would read its
  // assignments); with the node's credential, re-registration issues a new credential and revokes
  // the old one.
  auto refused = join.Post("/api/v1/agent/register", Registration("gpu-a").dump(), "application/json");
  EXPECT_EQ(refused.status, 409) << refused.text;
  json with_credential = Registration("gpu-a");
  with_credential["credential"] = token;
  std::string again = Register("gpu-a", with_credential);
  EXPECT_NE(again, token);
  EXPECT_EQ(node.Get("/api/v1/agent/assignments?node=gpu-a").status, 401);
  // A simulated node cannot replace an agent node.
  auto put = server_->Client().Post("/api/v1/nodes", Registration("gpu-a").dump(), "application/json");
  EXPECT_EQ(put.status, 409) << put.text;
}

TEST_F(AgentProtocolTest, ARefusedPostDoesNotCorruptTheNextRequestOnItsConnection) {
  // The body of a request refused before routing is never read; the connection must not be
  // reused for the next request (it would be parsed as the body's bytes: 400).
  cli::ApiClient node({server_->url(), Register("gpu-a")});
  for (int i = 0; i < 50; ++i) {
    auto refused = node.Post("/api/v1/agent/register", Registration("gpu-b").dump(), "application/json");
    ASSERT_EQ(refused.status, 403) << i;
    auto next = node.Get("/api/v1/agent/assignments?node=gpu-b");
    ASSERT_EQ(next.status, 403) << i << ": " << next.text;
  }
}

TEST_F(AgentProtocolTest, TaskRunsSucceedsAndLeavesTheAssignment) {
  cli::ApiClient node({server_->url(), Register("gpu-a")});
  json first = Assignments(node, "gpu-a");
  EXPECT_TRUE(first["tasks"].empty());
  auto admin = server_->Client();
  auto sub = admin.Post("/api/v1/workloads", Job("ok"), "application/yaml");
  ASSERT_EQ(sub.status, 201) << sub.text;
  std::string id = sub.body["items"][0]["id"];
  // The long poll answers as soon as the workload is placed.
  json a = Assignments(node, "gpu-a", first["version"].get<uint64_t>(), 20000);
  ASSERT_EQ(a["tasks"].size(), 1u) << a.dump();
  json t = a["tasks"][0];
  EXPECT_EQ(t["taskId"], id + ".0.0.1");
  EXPECT_EQ(t["action"], "run");
  EXPECT_EQ(t["command"], json({"python3", "train.py"}));
  EXPECT_EQ(t["env"]["EPOCHS"], "3");
  EXPECT_EQ(t["env"]["ABACUS_TASK_ID"], id + ".0.0.1");
  EXPECT_EQ(t["env"]["ABACUS_ATTEMPT"], "1");
  EXPECT_FALSE(t["env"].contains("ABACUS_RESUME"));
  ASSERT_EQ(t["devices"].size(), 1u);
  EXPECT_EQ(t["devices"][0]["vendor"], "nvidia");
  EXPECT_EQ(t["devices"][0]["uuid"].get<std::string>().rfind("gpu-a-GPU-", 0), 0u);
  EXPECT_EQ(t["cpuMilli"], 4000);
  // An unchanged assignment is answered with the same version after the wait.
  json same = Assignments(node, "gpu-a", a["version"].get<uint64_t>(), 50);
  EXPECT_EQ(same["version"], a["version"]);

  Report(node, "gpu-a", {{"taskId", t["taskId"]}, {"phase", "Running"}, {"pid", 42}});
  ASSERT_TRUE(WaitFor([&] { return StateOf(id) == "Running"; })) << StateOf(id);
  Report(node, "gpu-a", {{"taskId", t["taskId"]}, {"phase", "Running"}});  // a re-report changes nothing
  Report(node, "gpu-a", {{"taskId", t["taskId"]}, {"phase", "Exited"}, {"exitCode", 0}, {"message", "exited 0"}});
  ASSERT_TRUE(WaitFor([&] { return StateOf(id) == "Succeeded"; })) << StateOf(id);
  // TaskEnded: where and how the task ran, kept for `abacus describe` (issue 23).
  EXPECT_EQ(EventTypes(id),
            (std::vector<std::string>{"Submitted", "Admitted", "Placed", "Started", "TaskEnded", "Succeeded"}));
  json after = Assignments(node, "gpu-a");
  EXPECT_TRUE(after["tasks"].empty()) << after.dump();
  auto w = admin.Get("/api/v1/workloads/" + id);
  EXPECT_EQ(w.body["placements"][0]["phase"], "Exited");
  EXPECT_EQ(w.body["placements"][0]["exitCode"], 0);
}

TEST_F(AgentProtocolTest, FailedTaskIsRetriedThenFailsWithItsReason) {
  cli::ApiClient node({server_->url(), Register("gpu-a")});
  auto sub = server_->Client().Post("/api/v1/workloads", Job("flaky", 1), "application/yaml");
  ASSERT_EQ(sub.status, 201);
  std::string id = sub.body["items"][0]["id"];
  json a;
  ASSERT_TRUE(WaitFor([&] { a = Assignments(node, "gpu-a"); return a["tasks"].size() == 1; }));
  Report(node, "gpu-a", {{"taskId", id + ".0.0.1"}, {"phase", "Exited"}, {"exitCode", 3}, {"message", "exited 3"}});
  // One retry: a new attempt with a new task id and ABACUS_RESUME.
  ASSERT_TRUE(WaitFor([&] {
    a = Assignments(node, "gpu-a");
    return a["tasks"].size() == 1 && a["tasks"][0]["taskId"] == id + ".0.0.2";
  })) << a.dump();
  EXPECT_EQ(a["tasks"][0]["env"]["ABACUS_RESUME"], "1");
  EXPECT_EQ(a["tasks"][0]["env"]["ABACUS_ATTEMPT"], "2");
  // A late report of the first attempt is ignored.
  Report(node, "gpu-a", {{"taskId", id + ".0.0.1"}, {"phase", "Running"}});
  Report(node, "gpu-a", {{"taskId", id + ".0.0.2"}, {"phase", "Exited"}, {"signal", 9}, {"oomKilled", true},
                         {"message", "OOM-killed"}});
  ASSERT_TRUE(WaitFor([&] { return StateOf(id) == "Failed"; })) << StateOf(id);
  auto events = server_->Client().Get("/api/v1/workloads/" + id + "/events").body["items"];
  json failed, task_failed;
  for (const auto& e : events) {
    if (e["type"] == "Failed") failed = e;
    if (e["type"] == "TaskFailed") task_failed = e;
  }
  EXPECT_EQ(task_failed["details"]["reason"], "ExitCode");
  EXPECT_EQ(failed["details"]["reason"], "OOMKilled");
  EXPECT_NE(failed["details"]["message"].get<std::string>().find("OOM-killed"), std::string::npos);
  auto w = server_->Client().Get("/api/v1/workloads/" + id);
  EXPECT_EQ(w.body["failures"], 1);
  EXPECT_EQ(w.body["requeues"], 1);
}

TEST_F(AgentProtocolTest, LogsAreAppendedAtOffsetsAndServed) {
  cli::ApiClient node({server_->url(), Register("gpu-a")});
  auto sub = server_->Client().Post("/api/v1/workloads", Job("talk"), "application/yaml");
  std::string id = sub.body["items"][0]["id"];
  ASSERT_TRUE(WaitFor([&] { return Assignments(node, "gpu-a")["tasks"].size() == 1; }));
  std::string task = id + ".0.0.1";
  auto ship = [&](int64_t offset, const std::string& b64) {
    return node.Post("/api/v1/agent/logs",
                     json{{"node", "gpu-a"}, {"taskId", task}, {"stream", "stdout"}, {"offset", offset},
                          {"dataBase64", b64}}.dump(),
                     "application/json");
  };
  EXPECT_EQ(ship(0, "aGVsbG8K").status, 200);           // "hello\n"
  EXPECT_EQ(ship(0, "aGVsbG8K").status, 200);           // resent: the overlap is skipped
  EXPECT_EQ(ship(6, "d29ybGQK").status, 200);           // "world\n"
  auto gap = ship(100, "eA==");
  EXPECT_EQ(gap.status, 409);
  EXPECT_EQ(gap.body["size"], 12);
  EXPECT_EQ(ship(0, "not base64!").status, 400);
  auto logs = server_->Client().Get("/api/v1/workloads/" + id + "/logs");
  ASSERT_EQ(logs.status, 200) << logs.text;
  EXPECT_EQ(logs.body["content"], "hello\nworld\n");
  EXPECT_EQ(logs.body["taskId"], task);
  EXPECT_EQ(server_->Client().Get("/api/v1/workloads/" + id + "/logs?stream=stderr").body["content"], "");
}

TEST_F(AgentProtocolTest, ServerRestartKeepsTaskIdsAndCredentials) {
  std::string token = Register("gpu-a");
  cli::ApiClient node({server_->url(), token});
  auto sub = server_->Client().Post("/api/v1/workloads", Job("long"), "application/yaml");
  std::string id = sub.body["items"][0]["id"];
  json a;
  ASSERT_TRUE(WaitFor([&] { a = Assignments(node, "gpu-a"); return a["tasks"].size() == 1; }));
  Report(node, "gpu-a", {{"taskId", id + ".0.0.1"}, {"phase", "Running"}});
  ASSERT_TRUE(WaitFor([&] { return StateOf(id) == "Running"; }));
  server_->Terminate();
  server_->Start();
  cli::ApiClient again({server_->url(), token});
  json b = Assignments(again, "gpu-a");
  ASSERT_EQ(b["tasks"].size(), 1u) << b.dump() << "\n" << server_->Client().Get("/api/v1/workloads/" + id).text;
  EXPECT_EQ(b["tasks"][0]["taskId"], id + ".0.0.1");  // the same task: the agent will not start it again
  EXPECT_NE(b["version"], a["version"]);               // versions of a previous life never match
  EXPECT_EQ(StateOf(id), "Running");
}

TEST_F(AgentProtocolTest, SilentNodeBecomesNotReadyAndItsTasksAreRequeued) {
  Start("3", {"--fencing-grace", "TrainingJob=1s"});
  cli::ApiClient node({server_->url(), Register("gpu-a")});
  auto sub = server_->Client().Post("/api/v1/workloads", Job("orphan"), "application/yaml");
  std::string id = sub.body["items"][0]["id"];
  json assigned;
  ASSERT_TRUE(WaitFor([&] { return (assigned = Assignments(node, "gpu-a"))["tasks"].size() == 1; }));
  // How the agent fences the task when cut off (issue 20.9): the kind's grace, SIGTERM.
  EXPECT_EQ(assigned["tasks"][0]["fencingGraceSeconds"], 1);
  EXPECT_EQ(assigned["tasks"][0]["fencingSignal"], "SIGTERM");
  Report(node, "gpu-a", {{"taskId", id + ".0.0.1"}, {"phase", "Running"}});
  ASSERT_TRUE(WaitFor([&] { return StateOf(id) == "Running"; }));
  // No call for longer than --node-timeout 3.
  ASSERT_TRUE(WaitFor([&] { return server_->Client().Get("/api/v1/nodes/gpu-a").body.value("state", "") == "NotReady"; }));
  ASSERT_TRUE(WaitFor([&] { return HasEvent(id, "Requeued"); }));
  auto events = server_->Client().Get("/api/v1/workloads/" + id + "/events").body["items"];
  EXPECT_EQ(events.back()["details"]["reason"], "NodeLost");
  EXPECT_EQ(StateOf(id), "Requeued");  // nowhere else to go
  // The agent comes back (with its credential): the node is Ready and the workload runs again as
  // attempt 2.
  json back_registration = Registration("gpu-a");
  back_registration["credential"] = node.config().token;
  cli::ApiClient back({server_->url(), Register("gpu-a", back_registration)});
  json a;
  ASSERT_TRUE(WaitFor([&] {
    a = Assignments(back, "gpu-a");
    return a["tasks"].size() == 1 && a["tasks"][0]["taskId"] == id + ".0.0.2";
  })) << a.dump();
}

}  // namespace
}  // namespace abacus::testing
