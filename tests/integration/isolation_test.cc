// Tenant isolation against a real `abacus server` (issue 20, points 1–7; docs/governance.md):
// request values that name objects (task ids, workload names, node names, queue fields) stay
// inside what the caller may see; a node credential writes only its own tasks' logs; the join
// token cannot take over a registered node; a tenant admin cannot raise its own quota; tokens
// per user are capped and rate limits hold per user. The matrix at the end tries every role on
// every route and parameter against the other tenant's objects.
#include <gtest/gtest.h>

#include <future>

#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "server/server_test_util.h"
#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;
namespace org = server::testing_org;

const std::string kOrg = org::TwoTenantOrgWithUsers();  // server_test_util.h: who is who

std::string Job(const std::string& name, const std::string& project, const std::string& queue) {
  return "kind: TrainingJob\nname: " + name + "\nproject: " + project + "\nqueue: " + queue +
         "\nspec:\n  command: [\"true\"]\n  taskGroups:\n    - name: w\n      resources: {cpu: 1, memory: 1Gi}\n";
}

json Registration(const std::string& name) {
  return {{"name", name}, {"cpuMilli", 32000}, {"memoryBytes", int64_t{64} << 30}, {"agentVersion", "test"}};
}

std::string Base64(const std::string& in) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(v >> s) & 63];
  }
  if (i + 1 == in.size()) {
    uint32_t v = uint8_t(in[i]) << 16;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == in.size()) {
    uint32_t v = (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

class IsolationTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(); }
  void Start(std::vector<std::string> args = {}) {
    server_.reset();  // one server per data folder
    server_ = std::make_unique<ServerProcess>(dir_.path(), std::move(args));
    auto admin = server_->Client();
    auto applied = admin.Post("/api/v1/apply?filename=org.yaml", kOrg, "application/yaml");
    ASSERT_EQ(applied.status, 200) << applied.text;
    for (const char* user : {"ann", "tia", "max", "vic", "tob", "mia"}) {
      auto r = admin.Post("/api/v1/tokens", json{{"user", user}}.dump(), "application/json");
      ASSERT_EQ(r.status, 201) << r.text;
      tokens_[user] = r.body["token"];
    }
  }
  cli::ApiClient As(const std::string& user) { return cli::ApiClient({server_->url(), tokens_.at(user)}); }
  cli::ApiClient Join() { return cli::ApiClient({server_->url(), server_->join_token()}); }
  // Registers `name` with the join token (and `credential` when given); returns the answer.
  cli::ApiResponse RegisterNode(const std::string& name, const std::string& credential = "") {
    json body = Registration(name);
    if (!credential.empty()) body["credential"] = credential;
    return Join().Post("/api/v1/agent/register", body.dump(), "application/json");
  }
  std::string Submit(const std::string& user, const std::string& name, const std::string& project,
                     const std::string& queue) {
    auto r = As(user).Post("/api/v1/workloads", Job(name, project, queue), "application/yaml");
    EXPECT_EQ(r.status, 201) << r.text;
    return r.ok() ? r.body["items"][0].value("id", "") : "";
  }
  // Waits until `node`'s assignment holds `count` tasks.
  bool Assigned(cli::ApiClient& node, const std::string& name, size_t count) {
    return WaitFor([&] {
      auto r = node.Get("/api/v1/agent/assignments?node=" + name + "&waitMs=0");
      return r.ok() && r.body["tasks"].size() == count;
    });
  }
  cli::ApiResponse Ship(cli::ApiClient& node, const std::string& name, const std::string& task, int64_t offset,
                        const std::string& data) {
    return node.Post("/api/v1/agent/logs",
                     json{{"node", name}, {"taskId", task}, {"stream", "stdout"}, {"offset", offset},
                          {"dataBase64", Base64(data)}}
                         .dump(),
                     "application/json");
  }
  std::string StateOf(const std::string& id) { return server_->Client().Get("/api/v1/workloads/" + id).body.value("state", ""); }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::map<std::string, std::string> tokens_;
};

// Point 1: ?task= is parsed as a task id of the workload in the path; never a path, never another
// workload's task.
TEST_F(IsolationTest, LogsNeverReadAnotherTenantsTaskOrAFile) {
  auto reg = RegisterNode("n1");
  ASSERT_EQ(reg.status, 200) << reg.text;
  cli::ApiClient n1({server_->url(), reg.body.value("nodeToken", "")});
  std::string a = Submit("max", "a-job", "t1/p1", "q1");
  std::string b = Submit("mia", "b-job", "t2/p3", "q2");
  ASSERT_TRUE(Assigned(n1, "n1", 2));
  ASSERT_EQ(Ship(n1, "n1", a + ".0.0.1", 0, "a-out\n").status, 200);
  ASSERT_EQ(Ship(n1, "n1", b + ".0.0.1", 0, "SECRET-OF-B\n").status, 200);
  TempDir outside;
  std::ofstream(outside.path() + "/secret.0.0.1.stdout") << "OUTSIDE-THE-DATA-FOLDER\n";
  std::string relative = std::filesystem::relative(outside.path(), dir_.path() + "/logs").string();
  for (const char* user : {"max", "tia", "vic"}) {
    auto me = As(user);
    for (const std::string& task : {b + ".0.0.1", outside.path() + "/secret.0.0.1", relative + "/secret.0.0.1",
                                    std::string("../../../../../../../../") + outside.path() + "/secret.0.0.1"}) {
      auto r = me.Get("/api/v1/workloads/" + a + "/logs?task=" + cli::UrlEncode(task));
      EXPECT_TRUE(r.status == 400 || r.status == 404) << user << " " << task << ": " << r.status << " " << r.text;
      EXPECT_EQ(r.text.find("SECRET-OF-B"), std::string::npos) << user << " read B's log via " << task;
      EXPECT_EQ(r.text.find("OUTSIDE-THE-DATA-FOLDER"), std::string::npos) << user << " read a file via " << task;
    }
    // The own task, by id or GROUP.REPLICA, still reads.
    for (const std::string& task : {a + ".0.0.1", std::string("0.0"), std::string()}) {
      auto r = me.Get("/api/v1/workloads/" + a + "/logs?task=" + cli::UrlEncode(task));
      EXPECT_EQ(r.status, 200) << user << " " << task << ": " << r.text;
      EXPECT_EQ(r.body.value("content", ""), "a-out\n") << user << " " << task;
    }
    // Half a GROUP.REPLICA is not read as one.
    EXPECT_EQ(me.Get("/api/v1/workloads/" + a + "/logs?task=0.0junk").status, 400) << user;
  }
  // The other tenant likewise cannot reach A's through its own workload.
  auto r = As("mia").Get("/api/v1/workloads/" + b + "/logs?task=" + a + ".0.0.1");
  EXPECT_TRUE(r.status == 400 || r.status == 404) << r.text;
  EXPECT_EQ(r.text.find("a-out"), std::string::npos);
}

// Point 2: a name resolves only inside the caller's view; an ambiguous name is an error listing
// the ids; a second active workload of one name in one project is refused.
TEST_F(IsolationTest, NamesResolveInsideTheCallersView) {
  std::string mine = Submit("max", "train", "t1/p1", "q1");
  std::string theirs = Submit("mia", "train", "t2/p3", "q2");  // newer, same name, other tenant
  // Each tenant's member sees its own by name.
  auto got = As("max").Get("/api/v1/workloads/train");
  ASSERT_EQ(got.status, 200) << got.text;
  EXPECT_EQ(got.body.value("id", ""), mine);
  EXPECT_EQ(As("mia").Get("/api/v1/workloads/train").body.value("id", ""), theirs);
  for (const char* route : {"/explain", "/events", "/logs"}) {
    auto r = As("max").Get(std::string("/api/v1/workloads/train") + route);
    // Found (logs: none written yet is a 404 that says so, naming the workload).
    if (r.status == 404) {
      EXPECT_NE(r.text.find("no logs"), std::string::npos) << route << ": " << r.text;
      EXPECT_NE(r.text.find(mine), std::string::npos) << route << ": " << r.text;
      continue;
    }
    EXPECT_EQ(r.status, 200) << route << ": " << r.text;
    if (r.body.contains("id")) {
      EXPECT_EQ(r.body.value("id", ""), mine) << route;
    }
  }
  // The admin sees both: the name is ambiguous, and the answer lists the ids.
  auto amb = As("ann").Get("/api/v1/workloads/train");
  EXPECT_EQ(amb.status, 409) << amb.text;
  EXPECT_NE(amb.text.find(mine), std::string::npos) << amb.text;
  EXPECT_NE(amb.text.find(theirs), std::string::npos) << amb.text;
  EXPECT_EQ(As("ann").Post("/api/v1/workloads/train/cancel", "{}", "application/json").status, 409);
  // A second active "train" in t1/p1 is refused, naming the existing one.
  auto dup = As("max").Post("/api/v1/workloads", Job("train", "t1/p1", "q1"), "application/yaml");
  EXPECT_EQ(dup.status, 409) << dup.text;
  EXPECT_NE(dup.text.find(mine), std::string::npos) << dup.text;
  // Cancel by name through the CLI cancels the caller's own, never the other tenant's.
  CliResult cancel = RunCli({"cancel", "train"}, {"ABACUS_SERVER=" + server_->url(), "ABACUS_TOKEN=" + tokens_["max"]});
  EXPECT_EQ(cancel.code, 0) << cancel.out << cancel.err;
  EXPECT_NE(cancel.out.find(mine), std::string::npos) << cancel.out;
  EXPECT_TRUE(WaitFor([&] { return StateOf(mine) == "Cancelled"; })) << StateOf(mine);
  EXPECT_NE(StateOf(theirs), "Cancelled");
  // Finished ones do not count: the name is free again in t1/p1, and by name the active one wins.
  std::string again = Submit("max", "train", "t1/p1", "q1");
  EXPECT_EQ(As("max").Get("/api/v1/workloads/train").body.value("id", ""), again);
  // Two documents of one name in one submission are refused too.
  auto twice = As("max").Post("/api/v1/workloads", Job("pair", "t1/p1", "q1") + "---\n" + Job("pair", "t1/p1", "q1"),
                              "application/yaml");
  EXPECT_EQ(twice.status, 409) << twice.text;
}

// Point 3: a node credential writes only the logs of tasks assigned to its node, for the attempt
// it runs, and at most --max-task-log-bytes per task and stream.
TEST_F(IsolationTest, ANodeWritesOnlyTheLogsOfItsOwnTasks) {
  Start({"--max-task-log-bytes", "4096"});
  auto r1 = RegisterNode("n1");
  ASSERT_EQ(r1.status, 200) << r1.text;
  cli::ApiClient n1({server_->url(), r1.body.value("nodeToken", "")});
  std::string b = Submit("mia", "b-job", "t2/p3", "q2");
  ASSERT_TRUE(Assigned(n1, "n1", 1));
  auto r2 = RegisterNode("n2");
  ASSERT_EQ(r2.status, 200) << r2.text;
  cli::ApiClient n2({server_->url(), r2.body.value("nodeToken", "")});
  EXPECT_EQ(Ship(n2, "n2", b + ".0.0.1", 0, "INJECTED-BY-EVIL-NODE\n").status, 403);   // another node's task
  EXPECT_EQ(Ship(n1, "n1", b + ".0.0.7", 0, "INJECTED-INTO-ATTEMPT-7\n").status, 403); // an attempt that never ran
  EXPECT_EQ(Ship(n1, "n1", b + ".0.0.1.3", 0, "INJECTED-INTO-RUN-3\n").status, 403);   // a run that never ran
  EXPECT_EQ(Ship(n1, "n1", b + ".0.1.1", 0, "INJECTED-INTO-REPLICA-1\n").status, 403); // no such replica
  // Its own task: accepted up to the bound, the rest dropped (the agent moves on).
  std::string chunk(3000, 'x');
  EXPECT_EQ(Ship(n1, "n1", b + ".0.0.1", 0, chunk).status, 200);
  auto over = Ship(n1, "n1", b + ".0.0.1", 3000, chunk);
  EXPECT_EQ(over.status, 200) << over.text;
  EXPECT_TRUE(over.body.value("truncated", false)) << over.text;
  EXPECT_EQ(over.body.value("size", 0), 4096) << over.text;
  EXPECT_EQ(Ship(n1, "n1", b + ".0.0.1", 6000, chunk).status, 200);  // past the bound: still taken, dropped
  auto logs = As("mia").Get("/api/v1/workloads/" + b + "/logs");
  ASSERT_EQ(logs.status, 200) << logs.text;
  EXPECT_EQ(logs.body.value("content", "").size(), 4096u);
  EXPECT_EQ(logs.text.find("INJECTED"), std::string::npos);
}

// Point 4: the join token cannot re-register a node that is registered (it would read its
// assignments); the node's credential can; an admin's `node reset` lets a replaced machine rejoin.
TEST_F(IsolationTest, TheJoinTokenCannotTakeOverARegisteredNode) {
  auto first = RegisterNode("n1");
  ASSERT_EQ(first.status, 200) << first.text;
  std::string credential = first.body.value("nodeToken", "");
  auto stolen = RegisterNode("n1");
  EXPECT_EQ(stolen.status, 409) << stolen.text;
  EXPECT_NE(stolen.text.find("abacus node reset n1"), std::string::npos) << stolen.text;
  EXPECT_FALSE(stolen.body.contains("nodeToken"));
  EXPECT_EQ(RegisterNode("n1", std::string(64, 'a')).status, 409);  // a wrong credential
  auto again = RegisterNode("n1", credential);  // the node itself, restarted
  ASSERT_EQ(again.status, 200) << again.text;
  std::string second = again.body.value("nodeToken", "");
  EXPECT_NE(second, credential);
  // Only admins reset a node; the reset is audited; then the join token registers it anew.
  EXPECT_EQ(As("tia").Post("/api/v1/nodes/n1/reset", "{}", "application/json").status, 403);
  // The node's long poll, waiting when the reset comes, answers 401 at once (the fifth probe:
  // it waited out its 60 s; the 30 s bound only keeps a regression from hanging the test).
  const int64_t version = cli::ApiClient({server_->url(), second})
                              .Get("/api/v1/agent/assignments?node=n1&waitMs=0")
                              .body.value("version", int64_t{0});
  auto polling = std::async(std::launch::async, [&] {
    return cli::ApiClient({server_->url(), second})
        .Get("/api/v1/agent/assignments?node=n1&waitMs=60000&after=" + std::to_string(version));
  });
  std::this_thread::sleep_for(std::chrono::seconds(1));  // it waits (else refused at once: 401 too)
  auto reset = As("ann").Post("/api/v1/nodes/n1/reset", "{}", "application/json");
  ASSERT_EQ(reset.status, 200) << reset.text;
  ASSERT_EQ(polling.wait_for(std::chrono::seconds(30)), std::future_status::ready) << "still polling after the reset";
  cli::ApiResponse refused = polling.get();
  EXPECT_EQ(refused.status, 401);
  EXPECT_NE(refused.text.find("the credential of node n1 was reset"), std::string::npos) << refused.text;
  EXPECT_EQ(cli::ApiClient({server_->url(), second}).Get("/api/v1/agent/assignments?node=n1&waitMs=0").status, 401);
  EXPECT_EQ(As("ann").Post("/api/v1/nodes/nowhere/reset", "{}", "application/json").status, 404);
  auto audit = server_->Client().Get("/api/v1/audit");
  EXPECT_NE(audit.text.find("\"node-reset\""), std::string::npos) << audit.text;
  EXPECT_EQ(RegisterNode("n1").status, 200);
  // Through the CLI.
  CliResult cli = RunCli({"node", "reset", "n1"}, {"ABACUS_SERVER=" + server_->url(), "ABACUS_TOKEN=" + server_->token()});
  EXPECT_EQ(cli.code, 0) << cli.out << cli.err;
  EXPECT_EQ(RegisterNode("n1").status, 200);
}

// The audit entry of an agent's registration and of a node POSTed by an admin names the node
// (the fifth probe: object.name was empty, so `abacus audit --object n1` found neither), and
// `get nodes` tells a node no agent runs (SIMULATED yes) from an agent's with simulated devices
// (devices), whose tasks do run.
TEST_F(IsolationTest, TheAuditNamesTheNodeOfARegistrationOrAPutAndGetNodesTellsWhoRunsIt) {
  json registration = Registration("n1");
  registration["devices"] = json::array({{{"index", 0}, {"flavor", "gpu/nvidia/T4"}, {"memoryBytes", int64_t{16} << 30},
                                          {"health", "Healthy"}, {"simulated", true}}});
  registration["simulated"] = true;  // what `abacus agent --fake-devices` sends
  ASSERT_EQ(Join().Post("/api/v1/agent/register", registration.dump(), "application/json").status, 200);
  auto put = As("ann").Post("/api/v1/nodes", json{{"name", "api-1"}, {"cpuMilli", 8000}, {"memoryBytes", int64_t{8} << 30}}.dump(),
                            "application/json");
  ASSERT_EQ(put.status, 201) << put.text;
  // Refused ones too (the sixth probe: a registration refused for its flavor named no node).
  json bad = Registration("bad-1");
  bad["devices"] = json::array({{{"index", 0}, {"flavor", "cpu/x86"}, {"memoryBytes", 1}}});
  ASSERT_EQ(Join().Post("/api/v1/agent/register", bad.dump(), "application/json").status, 400);
  auto audit = server_->Client().Get("/api/v1/audit?limit=1000");
  ASSERT_EQ(audit.status, 200) << audit.text;
  std::map<std::string, std::string> named;  // "action result" → object name
  std::istringstream entries(audit.text);  // JSON lines
  for (std::string entry; std::getline(entries, entry);) {
    json e = json::parse(entry, nullptr, false);
    if (!e.is_object() || !e.contains("object")) continue;
    const std::string result = e.value("result", "") == "ok" ? "ok" : "refused";
    named[e.value("action", "") + " " + result] = e["object"].value("name", "");
  }
  EXPECT_EQ(named["agent-register ok"], "n1") << audit.text;
  EXPECT_EQ(named["node-put ok"], "api-1") << audit.text;
  EXPECT_EQ(named["agent-register refused"], "bad-1") << audit.text;

  CliResult nodes = RunCli({"get", "nodes"}, {"ABACUS_SERVER=" + server_->url(), "ABACUS_TOKEN=" + server_->token()});
  ASSERT_EQ(nodes.code, 0) << nodes.err;
  std::map<std::string, std::string> simulated;  // node → SIMULATED cell (the column under its header)
  std::istringstream lines(nodes.out);
  std::string line;
  size_t column = std::string::npos;
  while (std::getline(lines, line)) {
    if (column == std::string::npos) {
      column = line.find("SIMULATED");
      continue;
    }
    if (line.size() <= column) continue;
    std::istringstream name(line), cell(line.substr(column));
    std::string n, c;
    name >> n;
    cell >> c;
    simulated[n] = c;
  }
  EXPECT_EQ(simulated["n1"], "devices") << nodes.out;
  EXPECT_EQ(simulated["api-1"], "yes") << nodes.out;
}

// Point 4: a real agent killed and started again on the same machine (its work folder keeps the
// credential) rejoins and runs the work placed on it meanwhile.
TEST_F(IsolationTest, ARestartedAgentRejoinsWithItsStoredCredential) {
  AgentProcess agent(*server_, "real-1", "");
  // (The agent stores the credential once the registration answer arrived: killed before that,
  // it would need `abacus node reset`.)
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(agent.work_dir() + "/node.credential"); }));
  agent.Kill9();
  std::string id = Submit("max", "after-restart", "t1/p1", "q1");
  agent.Start();
  EXPECT_TRUE(WaitFor([&] { return StateOf(id) == "Succeeded"; }, std::chrono::seconds(30))) << StateOf(id);
  // Another machine under that name (the join token, no credential) is refused.
  EXPECT_EQ(RegisterNode("real-1").status, 409);
}

// Point 5: quotas, borrowing and lending limits, weight and cohort are the platform's; a tenant
// admin changing one is refused naming the field; other fields stay its own.
TEST_F(IsolationTest, ATenantAdminCannotRaiseItsQuotaOrChangeCohort) {
  auto tia = As("tia");
  auto quota = tia.Post("/api/v1/apply",
                        "kind: Queue\nname: q1\ntenant: t1\ncohort: c1\nquotas:\n  - {resource: cpu, nominal: 1000000}\n"
                        "  - {resource: memory, nominal: 1Ti}\n",
                        "application/yaml");
  EXPECT_EQ(quota.status, 403) << quota.text;
  EXPECT_NE(quota.text.find("quotas"), std::string::npos) << quota.text;
  EXPECT_NE(quota.text.find("nominal"), std::string::npos) << quota.text;
  auto cohort = tia.Post("/api/v1/apply",
                         "kind: Queue\nname: q1\ntenant: t1\ncohort: c2\nquotas:\n  - {resource: cpu, nominal: 64}\n"
                         "  - {resource: memory, nominal: 1Ti}\n",
                         "application/yaml");
  EXPECT_EQ(cohort.status, 403) << cohort.text;
  EXPECT_NE(cohort.text.find("cohort"), std::string::npos) << cohort.text;
  auto borrow = tia.Post("/api/v1/apply",
                         "kind: Queue\nname: q1\ntenant: t1\ncohort: c1\nquotas:\n  - {resource: cpu, nominal: 64, "
                         "borrowingLimit: 500}\n  - {resource: memory, nominal: 1Ti}\n",
                         "application/yaml");
  EXPECT_EQ(borrow.status, 403) << borrow.text;
  EXPECT_NE(borrow.text.find("borrowingLimit"), std::string::npos) << borrow.text;
  auto fresh = tia.Post("/api/v1/apply", "kind: Queue\nname: q9\ntenant: t1\nquotas:\n  - {resource: cpu, nominal: 8}\n",
                        "application/yaml");
  EXPECT_EQ(fresh.status, 403) << fresh.text;
  // Its own fields: a description, a queue without quota.
  auto desc = tia.Post("/api/v1/apply",
                       "kind: Queue\nname: q1\ntenant: t1\ncohort: c1\ndescription: ours\nquotas:\n"
                       "  - {resource: cpu, nominal: 64}\n  - {resource: memory, nominal: 1Ti}\n",
                       "application/yaml");
  EXPECT_EQ(desc.status, 200) << desc.text;
  EXPECT_EQ(tia.Post("/api/v1/apply", "kind: Queue\nname: q8\ntenant: t1\n", "application/yaml").status, 200);
  auto q1 = server_->Client().Get("/api/v1/queues/q1");
  EXPECT_EQ(q1.text.find("1000000"), std::string::npos) << q1.text;
  // The platform admin may.
  auto ann = As("ann").Post("/api/v1/apply",
                            "kind: Queue\nname: q1\ntenant: t1\ncohort: c1\nquotas:\n  - {resource: cpu, nominal: 128}\n"
                            "  - {resource: memory, nominal: 1Ti}\n",
                            "application/yaml");
  EXPECT_EQ(ann.status, 200) << ann.text;
}

// What a caller can tell two names apart by: the answer's status and body, `name` written NAME.
std::string Answer(const cli::ApiResponse& r, const std::string& name) {
  std::string text = r.text;
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 4)) {
    text.replace(at, name.size(), "NAME");
  }
  return std::to_string(r.status) + " " + text;
}

// Values only t2's queue q2 holds (TwoTenantOrgWithUsers: tenant t2, cohort c2, quotas cpu 64 and
// memory 1Ti): none may reach a caller of t1 in any answer.
void ExpectNothingOfT2(const cli::ApiResponse& r, const std::string& what) {
  for (const char* leak : {"t2", "c2", "64", "1Ti", "removed"}) {
    EXPECT_EQ(r.text.find(leak), std::string::npos) << what << " quotes '" << leak << "': " << r.text;
  }
}

// Probe report §2: a tenant admin applying another tenant's queue under its own tenant was told
// the queue's quotas, limits, weight and cohort by the field check, which ran before the
// ownership check. Another tenant's queue answers like a missing one, and where a missing name
// would be created, the name is taken (409) without its owner or contents.
TEST_F(IsolationTest, AnotherTenantsQueueFieldsAnswerLikeAMissingQueue) {
  auto tia = As("tia");
  auto apply = [&](const std::string& name, const std::string& rest, bool dry_run = true) {
    return tia.Post(std::string("/api/v1/apply") + (dry_run ? "?dryRun=1" : ""),
                    "kind: Queue\nname: " + name + "\ntenant: t1\n" + rest, "application/yaml");
  };
  for (const std::string rest : {"quotas:\n  - {resource: cpu, nominal: 1}\n  - {resource: memory, nominal: 1}\n",
                                 "cohort: c1\n", "weight: 3\n",
                                 "cohort: c1\nquotas:\n  - {resource: cpu, nominal: 5, borrowingLimit: 1}\n",
                                 "quotas:\n  - {resource: cpu, nominal: 5, lendingLimit: 1}\n"}) {
    auto theirs = apply("q2", rest);
    auto missing = apply("nosuchq", rest);
    EXPECT_EQ(missing.status, 403) << rest << missing.text;
    EXPECT_EQ(Answer(theirs, "q2"), Answer(missing, "nosuchq")) << rest;
    ExpectNothingOfT2(theirs, "apply q2 " + rest);
  }
  // Nothing the caller may not set: a missing name would be created; q2's is taken, and the
  // answer says only that (queue names are cluster-wide), with or without a dry run.
  ASSERT_EQ(apply("nosuchq", "description: mine\n").status, 200);
  for (bool dry_run : {true, false}) {
    auto taken = apply("q2", "description: mine\n", dry_run);
    EXPECT_EQ(taken.status, 409) << taken.text;
    EXPECT_EQ(taken.body["error"].value("code", ""), "already_exists") << taken.text;
    ExpectNothingOfT2(taken, "apply q2 description");
  }
  auto q2 = server_->Client().Get("/api/v1/queues/q2");
  EXPECT_EQ(q2.body.value("tenant", ""), "t2") << q2.text;
  EXPECT_FALSE(q2.body.contains("description")) << q2.text;
}

// Probe report §3: submissions, queue control, updates and policies told another tenant's
// names (and owners) apart from missing ones. Each answers exactly as for a missing name.
TEST_F(IsolationTest, AnotherTenantsNamesAnswerLikeMissingOnes) {
  for (const char* user : {"max", "tia"}) {
    auto me = As(user);
    auto submit = [&](const std::string& project, const std::string& queue) {
      return me.Post("/api/v1/workloads?dryRun=1", Job("xq", project, queue), "application/yaml");
    };
    auto theirs = submit("t1/p1", "q2");
    EXPECT_EQ(Answer(theirs, "q2"), Answer(submit("t1/p1", "nosuchq"), "nosuchq")) << user;
    ExpectNothingOfT2(theirs, std::string(user) + " submit to q2");
    for (const char* queue : {"q1", "q2", "nosuchq"}) {
      EXPECT_EQ(Answer(submit("t2/p3", queue), "t2/p3"), Answer(submit("t2/nosuch", queue), "t2/nosuch"))
          << user << " queue " << queue;
    }
    for (const char* verb : {"suspend", "resume"}) {
      auto hidden = me.Post(std::string("/api/v1/queues/q2/") + verb, "{}", "application/json");
      auto missing = me.Post(std::string("/api/v1/queues/nosuchq/") + verb, "{}", "application/json");
      EXPECT_EQ(Answer(hidden, "q2"), Answer(missing, "nosuchq")) << user << " " << verb;
      ExpectNothingOfT2(hidden, std::string(user) + " " + verb + " q2");
    }
  }
  // An update that changes the queue or project is 422 immutable_field (docs/api.md), whatever
  // the new value names.
  std::string own = Submit("max", "mine", "t1/p1", "q1");
  auto max = As("max");
  auto patch = [&](const json& body) {
    return max.Patch("/api/v1/workloads/" + own + "?dryRun=1", body.dump(), "application/json");
  };
  auto queue = patch({{"queue", "q2"}});
  EXPECT_EQ(queue.status, 422) << queue.text;
  EXPECT_EQ(queue.body["error"].value("code", ""), "immutable_field") << queue.text;
  EXPECT_EQ(Answer(queue, "q2"), Answer(patch({{"queue", "nosuchq"}}), "nosuchq"));
  ExpectNothingOfT2(queue, "patch queue q2");
  auto project = patch({{"project", "t2/p3"}});
  EXPECT_EQ(project.status, 422) << project.text;
  EXPECT_EQ(Answer(project, "t2/p3"), Answer(patch({{"project", "t2/nosuch"}}), "t2/nosuch"));
  // A policy name t2 holds: as a missing one for a caller refused anyway; where a missing name
  // would be created, taken (409) without naming t2.
  auto admin = server_->Client();
  const std::string theirs = "kind: AdmissionPolicy\nname: theirs\ntenants: [t2]\nspec:\n  network: isolated\n";
  ASSERT_EQ(admin.Post("/api/v1/policies", theirs, "application/yaml").status, 200);
  auto policy = [&](const std::string& user, const std::string& name) {
    return As(user).Post("/api/v1/apply?dryRun=1",
                         "kind: AdmissionPolicy\nname: " + name + "\ntenants: [t1]\nspec:\n  network: isolated\n",
                         "application/yaml");
  };
  EXPECT_EQ(Answer(policy("max", "theirs"), "theirs"), Answer(policy("max", "nosuchpol"), "nosuchpol"));
  EXPECT_EQ(policy("tia", "nosuchpol").status, 200);
  auto taken = policy("tia", "theirs");
  EXPECT_EQ(taken.status, 409) << taken.text;
  EXPECT_EQ(taken.body["error"].value("code", ""), "already_exists") << taken.text;
  ExpectNothingOfT2(taken, "apply policy theirs");
}

// Point 6: tokens per user are capped; the rate limit holds per user whatever the number of its
// tokens.
TEST(IsolationLimitsTest, TokensPerUserAreCappedAndTheRateLimitHoldsPerUser) {
  TempDir dir;
  ServerProcess server(dir.path(), {"--rate-limit", "1:3", "--max-tokens-per-user", "3"});
  auto admin = server.Client();
  // The admin token has its own bucket of the same size: its calls wait out a 429.
  auto patiently = [](const std::function<cli::ApiResponse()>& call) {
    cli::ApiResponse r = call();
    for (int i = 0; i < 30 && r.status == 429; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      r = call();
    }
    return r;
  };
  ASSERT_EQ(patiently([&] { return admin.Post("/api/v1/apply", kOrg, "application/yaml"); }).status, 200);
  std::vector<std::pair<std::string, std::string>> tokens;  // id, secret
  auto mint = [&] {
    return patiently([&] { return admin.Post("/api/v1/tokens", json{{"user", "max"}}.dump(), "application/json"); });
  };
  for (int i = 0; i < 3; ++i) {
    auto r = mint();
    ASSERT_EQ(r.status, 201) << r.text;
    tokens.emplace_back(r.body["id"], r.body["token"]);
  }
  auto fourth = mint();
  EXPECT_EQ(fourth.status, 409) << fourth.text;
  EXPECT_NE(fourth.text.find("3 active tokens"), std::string::npos) << fourth.text;
  // Revoking one frees a place.
  ASSERT_EQ(patiently([&] { return admin.Delete("/api/v1/tokens/" + tokens[0].first); }).status, 200);
  tokens.erase(tokens.begin());
  auto replacement = mint();
  ASSERT_EQ(replacement.status, 201) << replacement.text;
  tokens.emplace_back(replacement.body["id"], replacement.body["token"]);
  // Three tokens of one user share the user's bucket (burst 3): most of 15 quick calls are 429.
  int ok = 0, limited = 0;
  for (int i = 0; i < 15; ++i) {
    httplib::Client c(server.url());
    c.set_bearer_token_auth(tokens[i % tokens.size()].second.c_str());
    auto r = c.Get("/api/v1/workloads");
    ASSERT_TRUE(r);
    if (r->status == 200) ++ok;
    if (r->status == 429) {
      ++limited;
      EXPECT_NE(r->body.find("user max"), std::string::npos) << r->body;
    }
  }
  EXPECT_LE(ok, 6) << "three tokens multiplied the per-token limit";
  EXPECT_GE(limited, 9);
}

// Point 7: every role of tenant t1 against tenant t2's objects, on every route and every query
// parameter or body field that names an object. Nothing of t2 is read, changed or confirmed.
TEST_F(IsolationTest, EveryRoleIsConfinedOnEveryRouteAndParameter) {
  auto reg = RegisterNode("n1");
  ASSERT_EQ(reg.status, 200) << reg.text;
  cli::ApiClient n1({server_->url(), reg.body.value("nodeToken", "")});
  std::string other = Submit("mia", "shared-name", "t2/p3", "q2");
  std::string other_only = Submit("mia", "only-theirs", "t2/p3", "q2");
  std::string own = Submit("max", "shared-name", "t1/p1", "q1");
  ASSERT_TRUE(Assigned(n1, "n1", 3));
  ASSERT_EQ(Ship(n1, "n1", other + ".0.0.1", 0, "T2-SECRET\n").status, 200);
  ASSERT_EQ(Ship(n1, "n1", own + ".0.0.1", 0, "t1-out\n").status, 200);
  // t2's secrets (issue 24): one of its project, one tenant-wide; their value is the canary.
  auto admin = server_->Client();
  auto secret = [](const std::string& name, const std::string& scope_field, const std::string& scope) {
    return json{{"name", name}, {scope_field, scope}, {"stringData", {{"password", "T2-SECRET"}}}}.dump();
  };
  ASSERT_EQ(admin.Post("/api/v1/secrets", secret("t2-creds", "project", "t2/p3"), "application/json").status, 201);
  ASSERT_EQ(admin.Post("/api/v1/secrets", secret("t2-wide", "tenant", "t2"), "application/json").status, 201);
  // A workload of the caller's own project naming t2's secret: it resolves in the caller's
  // project and tenant only, where there is none.
  const std::string steal = "kind: TrainingJob\nname: steal\nproject: t1/p1\nqueue: q1\nspec:\n  command: [env]\n"
                            "  envFrom: [{secret: t2-wide}]\n  secretMounts: [{secret: t2-creds, path: x}]\n"
                            "  taskGroups:\n    - name: main\n      resources: {cpu: 1, memory: 1Gi}\n";
  struct Cell {
    std::string method, path, body;
  };
  const std::vector<Cell> cells = {
      {"GET", "/api/v1/workloads/" + other, ""},
      {"GET", "/api/v1/workloads/only-theirs", ""},
      {"GET", "/api/v1/workloads/" + other + "/explain", ""},
      {"GET", "/api/v1/workloads/only-theirs/explain", ""},
      {"GET", "/api/v1/workloads/" + other + "/events", ""},
      {"GET", "/api/v1/workloads/only-theirs/events", ""},
      {"GET", "/api/v1/workloads/" + other + "/logs", ""},
      {"GET", "/api/v1/workloads/only-theirs/logs", ""},
      {"GET", "/api/v1/workloads/" + own + "/logs?task=" + other + ".0.0.1", ""},
      {"GET", "/api/v1/workloads/shared-name/logs?task=" + other + ".0.0.1", ""},
      {"GET", "/api/v1/workloads/" + own + "/logs?task=" + cli::UrlEncode(dir_.path() + "/logs/" + other + ".0.0.1"), ""},
      {"GET", "/api/v1/workloads?tenant=t2", ""},
      {"GET", "/api/v1/workloads?project=t2/p3", ""},
      {"GET", "/api/v1/workloads?name=only-theirs", ""},
      {"GET", "/api/v1/queues/q2", ""},
      {"GET", "/api/v1/projects/t2/p3", ""},
      {"GET", "/api/v1/tenants/t2", ""},
      {"GET", "/api/v1/evaluations?model=only-theirs", ""},
      {"POST", "/api/v1/workloads/" + other + "/cancel", "{}"},
      {"POST", "/api/v1/workloads/only-theirs/cancel", "{}"},
      {"DELETE", "/api/v1/workloads/only-theirs", ""},
      {"POST", "/api/v1/workloads/only-theirs/scale", "{\"replicas\": 3}"},
      {"POST", "/api/v1/workloads/only-theirs/quota", "{\"approve\": true}"},
      {"POST", "/api/v1/workloads?filename=" + cli::UrlEncode("/etc/passwd"), Job("sneak", "t2/p3", "q2")},
      {"POST", "/api/v1/apply?filename=x", "kind: Queue\nname: q2\ntenant: t2\ncohort: c1\n"},
      {"POST", "/api/v1/apply", "kind: Queue\nname: q1\ntenant: t1\ncohort: c2\nquotas:\n  - {resource: cpu, nominal: 64}\n"
                                "  - {resource: memory, nominal: 1Ti}\n"},
      {"POST", "/api/v1/nodes/n1/reset", "{}"},
      // Fleet verbs (server/fleet_api.h): another tenant's work and queue, and nodes (admins only).
      {"POST", "/api/v1/workloads/" + other + "/hold", "{}"},
      {"POST", "/api/v1/workloads/only-theirs/hold", "{}"},
      {"POST", "/api/v1/workloads/only-theirs/release", "{}"},
      {"POST", "/api/v1/workloads/" + other + "/suspend", "{}"},
      {"POST", "/api/v1/workloads/only-theirs/resume", "{}"},
      {"POST", "/api/v1/workloads/" + other + "/requeue", "{}"},
      {"POST", "/api/v1/workloads/only-theirs/priority", "{\"priority\": 999}"},
      {"POST", "/api/v1/queues/q2/suspend", "{}"},
      {"POST", "/api/v1/queues/q2/resume", "{}"},
      {"POST", "/api/v1/nodes/n1/cordon", "{}"},
      {"POST", "/api/v1/nodes/n1/drain", "{\"requeue\": true}"},
      {"POST", "/api/v1/nodes/n1/uncordon", "{}"},
      {"POST", "/api/v1/agent/register", Registration("n1").dump()},
      {"POST", "/api/v1/tokens", "{\"user\": \"mia\"}"},
      {"DELETE", "/api/v1/users/mia", ""},
      // Secrets: each id in path, query and body (server/secrets.h).
      {"GET", "/api/v1/secrets?project=t2/p3", ""},
      {"GET", "/api/v1/secrets?tenant=t2", ""},
      {"DELETE", "/api/v1/secrets/t2-creds?project=t2/p3", ""},
      {"DELETE", "/api/v1/secrets/t2-wide?tenant=t2", ""},
      {"DELETE", "/api/v1/secrets/t2-creds?project=t1/p1&tenant=t2", ""},
      {"POST", "/api/v1/secrets", secret("t2-creds", "project", "t2/p3")},
      {"POST", "/api/v1/secrets", secret("t2-wide", "tenant", "t2")},
      {"POST", "/api/v1/secrets", json{{"name", "t2-wide"}, {"project", "t1/p1"}, {"tenant", "t2"},
                                       {"stringData", {{"k", "v"}}}}.dump()},
      {"POST", "/api/v1/secrets/reencrypt", "{}"},
      {"GET", "/api/v1/secrets/t2-creds", ""},
      {"GET", "/api/v1/secrets/t2-wide", ""},
      {"GET", "/api/v1/secrets/t2-creds?project=t2/p3", ""},
      {"GET", "/api/v1/secrets/t2-wide?tenant=t2", ""},
      {"DELETE", "/api/v1/secrets/t2-creds", ""},
      {"DELETE", "/api/v1/secrets/t2-wide", ""},
      {"POST", "/api/v1/apply", "kind: Secret\nmetadata: {name: t2-creds, tenant: t2, project: p3}\n"
                                "stringData: {password: x}\n"},
      {"POST", "/api/v1/apply", "kind: Secret\nname: t2-wide\ntenant: t2\nstringData: {password: x}\n"},
      {"POST", "/api/v1/apply", "kind: Secret\nname: t2-wide\nproject: t1/p1\ntenant: t2\nstringData: {k: v}\n"},
      {"POST", "/api/v1/workloads", steal},
  };
  for (const char* user : {"tia", "max", "vic"}) {
    auto me = As(user);
    for (const Cell& c : cells) {
      cli::ApiResponse r = c.method == "GET"    ? me.Get(c.path)
                           : c.method == "POST" ? me.Post(c.path, c.body, c.body.starts_with("{") ? "application/json"
                                                                                                   : "application/yaml")
                                                : me.Delete(c.path);
      std::string what = std::string(user) + " " + c.method + " " + c.path;
      bool list = c.method == "GET" && c.path.find('?') != std::string::npos &&
                  c.path.find("/logs") == std::string::npos && c.path.find("/secrets/") == std::string::npos;
      if (list) {
        // A filtered list: 200 with none of t2's rows.
        EXPECT_EQ(r.status, 200) << what << ": " << r.text;
        EXPECT_EQ(r.text.find(other), std::string::npos) << what << ": " << r.text;
        EXPECT_EQ(r.text.find(other_only), std::string::npos) << what << ": " << r.text;
      } else {
        // 409: a workload naming a secret its own project and tenant do not hold.
        const bool refused = r.status == 400 || r.status == 403 || r.status == 404 ||
                             (c.path == "/api/v1/workloads" && r.status == 409);
        EXPECT_TRUE(refused) << what << ": " << r.status << " " << r.text;
      }
      EXPECT_EQ(r.text.find("T2-SECRET"), std::string::npos) << what;
      EXPECT_EQ(r.text.find("\"t2-"), std::string::npos) << what << ": " << r.text;  // no t2 secret listed
    }
  }
  // The viewer of t1 creates no secret even in its own tenant; t2's secrets are as created.
  EXPECT_EQ(As("vic").Post("/api/v1/secrets", secret("mine", "project", "t1/p1"), "application/json").status, 403);
  auto t2_secrets = admin.Get("/api/v1/secrets?tenant=t2");
  ASSERT_EQ(t2_secrets.body["items"].size(), 2u) << t2_secrets.text;
  for (const auto& item : t2_secrets.body["items"]) EXPECT_EQ(item.value("version", 0), 1) << t2_secrets.text;
  // Nothing of t2 changed.
  EXPECT_NE(StateOf(other), "Cancelled");
  EXPECT_NE(StateOf(other_only), "Cancelled");
  for (const std::string& id : {other, other_only}) {
    auto w = server_->Client().Get("/api/v1/workloads/" + id);
    EXPECT_FALSE(w.body.contains("hold")) << w.text;
    EXPECT_FALSE(w.body.contains("priority")) << w.text;
  }
  EXPECT_FALSE(server_->Client().Get("/api/v1/queues/q2").body.contains("suspended"));
  EXPECT_FALSE(server_->Client().Get("/api/v1/nodes/n1").body.contains("cordon"));
  auto q2 = server_->Client().Get("/api/v1/queues/q2");
  EXPECT_EQ(q2.body.value("cohort", ""), "c2") << q2.text;
  auto q1 = server_->Client().Get("/api/v1/queues/q1");
  EXPECT_EQ(q1.body.value("cohort", ""), "c1") << q1.text;
}

}  // namespace
}  // namespace abacus::testing
