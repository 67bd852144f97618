// Issue 20's contract with real server processes: an error answer means nothing was stored, a
// retried submission, apply or cancel (same Idempotency-Key) never doubles work, one server per
// data folder, and
// an audit chain anchored outside the store.
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "govern/audit.h"
#include "server_process.h"
#include "store/postgres/pg_test_server.h"

namespace abacus::testing {
namespace {

using nlohmann::json;

std::string Job(const std::string& name) {
  return "kind: BatchJob\nname: " + name +
         "\nproject: acme/ml\nqueue: train\nspec:\n  command: [\"true\"]\n  taskGroups:\n"
         "    - name: main\n      resources: {cpu: 1, memory: 1Gi}\n  tasks: 1\n  parallelism: 1\n";
}

std::string Queue(const std::string& name, int cpu) {
  return "kind: Queue\nname: " + name + "\ntenant: acme\nquotas:\n  - {resource: cpu, nominal: " +
         std::to_string(cpu) + "}\n";
}

// The audit entries (JSON lines) whose `after` contains `text`.
std::vector<json> AuditAfter(cli::ApiClient& api, const std::string& text) {
  std::vector<json> out;
  auto audit = api.Get("/api/v1/audit?limit=10000");
  std::istringstream lines(audit.text);
  for (std::string line; std::getline(lines, line);) {
    json e = json::parse(line, nullptr, false);
    if (e.is_object() && e.value("after", "").find(text) != std::string::npos) out.push_back(e);
  }
  return out;
}

// Runs SQL on the data folder's database from outside the server (as an operator, or an
// attacker with file access, could).
void Sql(const std::string& db_path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path.c_str(), &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 10000);
  char* err = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
  sqlite3_free(err);
  sqlite3_close(db);
}

// Runs the abacus binary (killed after 30 s: a second server that did start is a failure, not
// a hang); returns the exit code and what it wrote to stderr.
CliResult RunBounded(const std::string& args) {
  TempDir tmp;
  std::string err = tmp.path() + "/err";
  int status = std::system(("HOME=" + tmp.path() + " timeout 30 " ABACUS_BINARY " " + args + " > /dev/null 2> " + err).c_str());
  CliResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = ReadFile(err);
  return r;
}

class ContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(dir_.path());
    ASSERT_EQ(server_->Client().Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);
  }
  std::string Db() const { return dir_.path() + "/abacus.db"; }
  json Verify() { return server_->Client().Get("/api/v1/audit?verify=1").body; }
  // Submits the one-task BatchJob `long` running `sh -c SCRIPT`; returns its id.
  std::string SubmitLongJob(const std::string& script) {
    return server_->Client()
        .Post("/api/v1/workloads",
              "kind: BatchJob\nname: long\nproject: acme/ml\nqueue: train\nspec:\n  command: [\"sh\", \"-c\", \"" + script +
                  "\"]\n  taskGroups:\n    - name: main\n      resources: {cpu: 1, memory: 1Gi}\n  tasks: 1\n  parallelism: 1\n",
              "application/yaml")
        .body["items"][0]
        .value("id", "");
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
};

// Point 11: a second server, `abacus up` or `admin migrate` into the folder is refused, naming
// the holder's pid; once the first server stopped, the folder is free again.
TEST_F(ContractTest, OneServerPerDataFolder) {
  std::string lock = ReadFile(dir_.path() + "/abacus.lock");
  ASSERT_EQ(lock.rfind("pid ", 0), 0u) << lock;
  std::string pid = lock.substr(4, lock.find(' ', 4) - 4);
  const std::string in_use = "data folder " + dir_.path() + " is in use by abacus pid " + pid + " (server)";

  CliResult second = RunBounded("server --config '' --data " + dir_.path() + " --listen 127.0.0.1:0");
  EXPECT_EQ(second.code, 1) << second.err;
  EXPECT_NE(second.err.find(in_use), std::string::npos) << second.err;
  CliResult up = RunBounded("up --no-agent --no-config --data " + dir_.path() + " --listen 127.0.0.1:0");
  EXPECT_NE(up.code, 0) << up.err;
  EXPECT_NE(up.err.find(in_use), std::string::npos) << up.err;
  CliResult migrate = RunBounded("admin migrate --from sqlite://" + Db() + " --to sqlite://" + Db() + ".copy");
  EXPECT_EQ(migrate.code, 1) << migrate.err;
  EXPECT_NE(migrate.err.find(in_use), std::string::npos) << migrate.err;
  // Copying a live server's store elsewhere is refused too (the probe of 2026-12-07: it was
  // allowed, and only the final verification would notice writes made meanwhile).
  TempDir elsewhere;
  CliResult copy = RunBounded("admin migrate --from sqlite://" + Db() + " --to sqlite://" + elsewhere.path() + "/copy.db");
  EXPECT_EQ(copy.code, 1) << copy.err;
  EXPECT_NE(copy.err.find("--from: data folder " + dir_.path() + " is in use by abacus pid " + pid + " (server)"),
            std::string::npos)
      << copy.err;
  // The first server still serves, alone.
  EXPECT_EQ(server_->Client().Post("/api/v1/workloads", Job("still-mine"), "application/yaml").status, 201);

  ASSERT_EQ(server_->Terminate(), 0);
  server_->Start();  // the lock went with the process
  EXPECT_EQ(server_->Client().Get("/api/v1/workloads/still-mine").status, 200);
}

// The same for a SQLite store named with --store: a second server with a data folder of its own
// but this server's database was started, and the first then failed every write ("the store's
// audit stream is out of step") until restarted, while /readyz said ready. Now the store's
// folder is locked too: the second is refused, naming the holder, and the first goes on; a
// second server whose data folder holds another server's --store is refused the same way.
TEST_F(ContractTest, OneServerPerSqliteStoreNamedWithStore) {
  std::string lock = ReadFile(dir_.path() + "/abacus.lock");
  std::string pid = lock.substr(4, lock.find(' ', 4) - 4);
  TempDir other;
  CliResult second = RunBounded("server --config '' --data " + other.path() + " --listen 127.0.0.1:0 --store sqlite://" +
                                Db());
  EXPECT_EQ(second.code, 1) << second.err;
  EXPECT_NE(second.err.find("data folder " + dir_.path() + " is in use by abacus pid " + pid + " (server)"),
            std::string::npos)
      << second.err;
  EXPECT_NE(second.err.find("--store sqlite://" + Db()), std::string::npos) << second.err;
  EXPECT_EQ(server_->Client().Post("/api/v1/workloads", Job("still-writes"), "application/yaml").status, 201);

  // A server whose store lies in another folder holds that folder too.
  ASSERT_EQ(server_->Terminate(), 0);
  TempDir store_dir, data_a, data_b;
  const std::string url = "sqlite://" + store_dir.path() + "/abacus.db";
  ServerProcess a(data_a.path(), {"--store", url});
  CliResult b = RunBounded("server --config '' --data " + data_b.path() + " --listen 127.0.0.1:0 --store " + url);
  EXPECT_EQ(b.code, 1) << b.err;
  EXPECT_NE(b.err.find("data folder " + store_dir.path() + " is in use by abacus pid"), std::string::npos) << b.err;
  CliResult in_folder = RunBounded("server --config '' --data " + store_dir.path() + " --listen 127.0.0.1:0");
  EXPECT_EQ(in_folder.code, 1) << in_folder.err;
  EXPECT_NE(in_folder.err.find("is in use by abacus pid"), std::string::npos) << in_folder.err;
  EXPECT_EQ(a.Client().Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);  // a still writes
}

// One agent per work dir (the probe of 2026-12-07): a second agent started on a live agent's work
// dir took its running tasks for orphans of a previous life, SIGKILLed them — the job failed —
// and overwrote its node credential. Now it is refused at start and the first runs on.
TEST_F(ContractTest, OneAgentPerWorkDir) {
  AgentProcess first(*server_, "cpu-a", "");
  const std::string id = SubmitLongJob("sleep 600");
  auto running = [&] {
    json w = server_->Client().Get("/api/v1/workloads/" + id).body;
    return w.value("state", "") == "Running" && !w["placements"].empty() &&
           w["placements"][0].value("phase", "") == "Running";
  };
  ASSERT_TRUE(WaitFor(running, std::chrono::seconds(30))) << server_->Client().Get("/api/v1/workloads/" + id).text;
  const std::string credential = ReadFile(first.work_dir() + "/node.credential");

  CliResult second = RunBounded("agent --config '' --server " + server_->url() + " --token-file " + server_->data_dir() +
                                "/join.token --name cpu-b --work-dir " + first.work_dir() +
                                " --no-cgroups --no-real-devices --heartbeat 1");
  EXPECT_EQ(second.code, 1) << second.err;
  EXPECT_NE(second.err.find("work dir " + first.work_dir() + " is in use by abacus pid"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("(agent cpu-a)"), std::string::npos) << second.err;
  EXPECT_EQ(server_->Client().Get("/api/v1/nodes/cpu-b").status, 404);
  EXPECT_EQ(ReadFile(first.work_dir() + "/node.credential"), credential);
  std::this_thread::sleep_for(std::chrono::seconds(2));  // what a killed task would show by now
  EXPECT_TRUE(running()) << server_->Client().Get("/api/v1/workloads/" + id).text;
}

// A node credential reset by an admin (a stolen or retired machine) while its assignments long
// poll waits: the answer, with the secrets of the tasks it names, went to the old credential
// (the probe of 2026-12-07). A long poll now asks whether its caller still stands: 401.
TEST_F(ContractTest, AnAssignmentsPollWhoseCredentialIsResetWhileItWaitsAnswers401) {
  std::string credential;
  {
    AgentProcess agent(*server_, "cpu-a", "");
    ASSERT_TRUE(WaitFor([&] {  // registered, its credential kept
      credential = ReadFile(agent.work_dir() + "/node.credential");
      return server_->Client().Get("/api/v1/nodes/cpu-a").status == 200 && credential.find(' ') != std::string::npos;
    }));
    agent.Kill9();  // the node stays Ready until its timeout: work is still placed on it
  }
  credential = credential.substr(credential.find(' ') + 1);
  while (!credential.empty() && credential.back() == '\n') credential.pop_back();
  cli::ApiClient node({server_->url(), credential});
  auto first = node.Get("/api/v1/agent/assignments?node=cpu-a&after=0&waitMs=0");
  ASSERT_EQ(first.status, 200) << first.text;
  const uint64_t version = first.body.value("version", uint64_t{0});
  cli::ApiResponse answer;
  std::thread poll([&] {
    answer = node.Get("/api/v1/agent/assignments?node=cpu-a&waitMs=20000&after=" + std::to_string(version));
  });
  std::this_thread::sleep_for(std::chrono::seconds(1));  // it waits (else it is refused at once: 401 too)
  ASSERT_EQ(server_->Client().Post("/api/v1/nodes/cpu-a/reset", "{}", "application/json").status, 200);
  ASSERT_EQ(server_->Client().Post("/api/v1/workloads", Job("after-reset"), "application/yaml").status, 201);
  poll.join();
  EXPECT_EQ(answer.status, 401) << answer.text;
  EXPECT_EQ(answer.text.find("after-reset"), std::string::npos) << answer.text;
}

// An agent's log chunk with a misspelt field ("data" for "dataBase64") answered 200 and stored
// nothing (the probe of 2026-12-07): every field is named now, none unknown — once the node may
// write that task's log (another node's task stays 403 first).
TEST_F(ContractTest, AnAgentLogChunkWithAnUnknownFieldIsRefused) {
  AgentProcess agent(*server_, "cpu-a", "");
  const std::string id = SubmitLongJob("echo hi; sleep 600");
  std::string task;
  ASSERT_TRUE(WaitFor([&] {
    json tasks = server_->Client().Get("/api/v1/workloads/" + id + "/tasks").body;
    if (!tasks.contains("items") || tasks["items"].empty()) return false;
    task = tasks["items"][0].value("taskId", "");
    return !task.empty();
  }, std::chrono::seconds(30)));
  std::string credential = ReadFile(agent.work_dir() + "/node.credential");
  credential = credential.substr(credential.find(' ') + 1);
  while (!credential.empty() && credential.back() == '\n') credential.pop_back();
  cli::ApiClient node({server_->url(), credential});
  auto misspelt = node.Post("/api/v1/agent/logs",
                            json{{"node", "cpu-a"}, {"taskId", task}, {"stream", "stdout"}, {"offset", 0}, {"data", "aGk="}}
                                .dump(),
                            "application/json");
  EXPECT_EQ(misspelt.status, 400) << misspelt.text;
  EXPECT_NE(misspelt.text.find("unknown field 'data'"), std::string::npos) << misspelt.text;
}

// A dropped ssh session sends SIGHUP: the server and the agent died at once with exit 129 (the
// default action; the probe of 2026-12-07). They now shut down as for SIGTERM: exit 0, the agent
// telling the server its node leaves.
TEST_F(ContractTest, AHangupShutsTheServerAndTheAgentDownCleanly) {
  AgentProcess agent(*server_, "cpu-a", "");
  ASSERT_TRUE(WaitFor([&] { return server_->Client().Get("/api/v1/nodes/cpu-a").status == 200; }));
  EXPECT_EQ(agent.Signal(SIGHUP), 0);
  EXPECT_EQ(server_->Client().Get("/api/v1/nodes/cpu-a").body.value("state", ""), "NotReady");
  EXPECT_EQ(server_->Signal(SIGHUP), 0);
  server_->Start();  // a clean stop: it starts again on its folder
  EXPECT_EQ(server_->Client().Get("/healthz").status, 200);
}

// Point 11 on PostgreSQL: two servers without --ha on one database (different data folders)
// both ran; now the second is refused by the database's writer lock.
TEST(ContractPostgresTest, OneServerWithoutHaPerDatabase) {
  testing_util::PgTestDatabase db;
  ABACUS_REQUIRE_PG_DATABASE(db);
  TempDir a_dir, b_dir;
  ServerProcess a(a_dir.path(), {"--store", db.url()});
  CliResult b = RunBounded("server --config '' --data " + b_dir.path() + " --listen 127.0.0.1:0 --store '" + db.url() + "'");
  EXPECT_EQ(b.code, 1) << b.err;
  EXPECT_NE(b.err.find("the PostgreSQL store is in use by another Abacus server"), std::string::npos) << b.err;
  ASSERT_EQ(a.Terminate(), 0);
  ServerProcess again(b_dir.path(), {"--store", db.url()});  // the lock went with the first
  EXPECT_EQ(again.Client().Get("/healthz").status, 200);  // it started and serves (its admin token is a_dir's)
}

// "An error answer means nothing was stored": the audit stream and its head disagree (the
// newest audit row deleted under the running server). Before the fix the submission answered
// 500 and was committed anyway (it appeared after a restart), and cancel answered 200.
TEST_F(ContractTest, AnAuditFailureAnswersAnErrorAndStoresNothing) {
  auto api = server_->Client();
  ASSERT_EQ(api.Post("/api/v1/workloads", Job("kept"), "application/yaml").status, 201);
  Sql(Db(), "DELETE FROM journal WHERE stream = 'audit' AND seq = (SELECT MAX(seq) FROM journal WHERE stream = 'audit')");

  auto submitted = api.Post("/api/v1/workloads", Job("ghost"), "application/yaml");
  EXPECT_EQ(submitted.status, 500) << submitted.text;
  EXPECT_NE(submitted.text.find("nothing of this request was stored"), std::string::npos) << submitted.text;
  auto cancelled = api.Post("/api/v1/workloads/kept/cancel", "{}", "application/json");
  EXPECT_EQ(cancelled.status, 500) << cancelled.text;
  auto applied = api.Post("/api/v1/apply", "kind: Queue\nname: extra\ntenant: acme\nquotas:\n  - {resource: cpu, nominal: 1}\n",
                          "application/yaml");
  EXPECT_EQ(applied.status, 500) << applied.text;
  // The running server changed nothing …
  EXPECT_EQ(api.Get("/api/v1/workloads/ghost").status, 404);
  EXPECT_EQ(api.Get("/api/v1/workloads/kept").body.value("state", ""), "Pending");
  EXPECT_EQ(api.Get("/api/v1/queues/extra").status, 404);
  // … and neither did the store: a restart shows the same.
  ASSERT_EQ(server_->Terminate(), 0);
  server_->Start();
  auto restarted = server_->Client();  // (ApiClient is not assignable)
  EXPECT_EQ(restarted.Get("/api/v1/workloads/ghost").status, 404);
  EXPECT_EQ(restarted.Get("/api/v1/workloads/kept").body.value("state", ""), "Pending");
  EXPECT_EQ(restarted.Get("/api/v1/queues/extra").status, 404);
}

// A server whose audit stream was moved under it refuses every write, so it is not ready: a
// load balancer or an operator polling /readyz must see it (the probe of 2026-12-07 found 200).
TEST_F(ContractTest, AServerWhoseAuditStreamIsOutOfStepIsNotReady) {
  auto api = server_->Client();
  ASSERT_EQ(api.Post("/api/v1/workloads", Job("kept"), "application/yaml").status, 201);
  EXPECT_EQ(api.Get("/readyz").status, 200);
  Sql(Db(), "DELETE FROM journal WHERE stream = 'audit' AND seq = (SELECT MAX(seq) FROM journal WHERE stream = 'audit')");
  EXPECT_EQ(api.Get("/readyz").status, 200);  // nothing has found it yet
  EXPECT_EQ(api.Post("/api/v1/workloads", Job("ghost"), "application/yaml").status, 500);
  auto ready = api.Get("/readyz");
  EXPECT_EQ(ready.status, 503) << ready.text;
  EXPECT_NE(ready.text.find("audit stream is out of step"), std::string::npos) << ready.text;
  EXPECT_EQ(api.Get("/healthz").status, 200);  // alive, not ready
}

// Point 2: a retry with the same key returns the first answer, also after a restart; the same
// key with another body is refused; keys are per user.
TEST_F(ContractTest, ASubmissionRetriedWithItsIdempotencyKeyIsStoredOnce) {
  auto api = server_->Client();
  auto first = api.PostIdempotent("/api/v1/workloads", Job("once"), "application/yaml", "key-1");
  ASSERT_EQ(first.status, 201) << first.text;
  auto again = api.PostIdempotent("/api/v1/workloads", Job("once"), "application/yaml", "key-1");
  ASSERT_EQ(again.status, 201) << again.text;
  EXPECT_EQ(again.body["items"][0]["id"], first.body["items"][0]["id"]);
  auto other = api.PostIdempotent("/api/v1/workloads", Job("twice"), "application/yaml", "key-1");
  EXPECT_EQ(other.status, 409) << other.text;
  EXPECT_NE(other.text.find("different request body"), std::string::npos) << other.text;
  EXPECT_EQ(api.PostIdempotent("/api/v1/workloads", Job("bad"), "application/yaml", "has space").status, 400);

  ASSERT_EQ(server_->Terminate(), 0);
  server_->Start();
  auto restarted = server_->Client();
  auto after_restart = restarted.PostIdempotent("/api/v1/workloads", Job("once"), "application/yaml", "key-1");
  ASSERT_EQ(after_restart.status, 201) << after_restart.text;
  EXPECT_EQ(after_restart.body["items"][0]["id"], first.body["items"][0]["id"]);
  auto list = restarted.Get("/api/v1/workloads?name=once");
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.body["items"].size(), 1u) << list.text;

  // The CLI sends a key of its own: two runs of one file are two submissions, as before.
  TempDir tmp;
  std::ofstream(tmp.path() + "/job.yaml") << Job("by-cli");
  std::vector<std::string> conn = {"--server", server_->url(), "--token", server_->token()};
  for (int i = 0; i < 2; ++i) {
    std::vector<std::string> args = {"submit", "-f", tmp.path() + "/job.yaml"};
    args.insert(args.end(), conn.begin(), conn.end());
    CliResult r = RunCli(args);
    EXPECT_EQ(r.code, 0) << r.err;
    // One active workload per name and project: the first run's ends before the second.
    if (i == 0) {
      auto cancelled = restarted.Post("/api/v1/workloads/by-cli/cancel", R"({"reason":"again"})", "application/json");
      EXPECT_EQ(cancelled.status, 200) << cancelled.text;
    }
  }
  EXPECT_EQ(restarted.Get("/api/v1/workloads?name=by-cli").body["items"].size(), 2u);
}

// Concurrent repeats of one keyed submission (a client retrying while the first is still being
// served) all answer the first answer: api.md, "concurrent requests with one key commit once and
// both get that answer". The probe of 2026-12-07 got 409 "already exists" for 2 to 5 of 10.
TEST_F(ContractTest, ConcurrentRepeatsOfAKeyedSubmissionAllAnswerTheFirstAnswer) {
  for (int round = 0; round < 3; ++round) {
    const std::string name = "race-" + std::to_string(round), key = "race-key-" + std::to_string(round);
    std::vector<std::thread> clients;
    std::vector<int> status(10, 0);
    std::vector<std::string> ids(10), texts(10);
    for (int c = 0; c < 10; ++c) {
      clients.emplace_back([&, c] {
        auto r = server_->Client().PostIdempotent("/api/v1/workloads", Job(name), "application/yaml", key);
        status[c] = r.status;
        texts[c] = r.text;
        if (r.status == 201) ids[c] = r.body["items"][0].value("id", "");
      });
    }
    for (auto& t : clients) t.join();
    for (int c = 0; c < 10; ++c) {
      EXPECT_EQ(status[c], 201) << texts[c];
      EXPECT_EQ(ids[c], ids[0]) << texts[c];
    }
    EXPECT_EQ(server_->Client().Get("/api/v1/workloads?name=" + name).body["items"].size(), 1u);
  }
}

// Point 2 for apply: a repeat answers what the first did ("created", not "unchanged"), also after
// a restart, and is audited as a replay, not as a second change; the same key with another body
// or on another route is refused naming it. Before keys covered apply, the repeat answered
// "unchanged" and the other body was applied.
TEST_F(ContractTest, AnApplyRetriedWithItsIdempotencyKeyAnswersItsFirstAnswer) {
  auto api = server_->Client();
  auto first = api.PostIdempotent("/api/v1/apply", Queue("extra", 1), "application/yaml", "apply-1");
  ASSERT_EQ(first.status, 200) << first.text;
  ASSERT_EQ(first.body["items"][0].value("action", ""), "created") << first.text;
  auto again = api.PostIdempotent("/api/v1/apply", Queue("extra", 1), "application/yaml", "apply-1");
  ASSERT_EQ(again.status, 200) << again.text;
  EXPECT_EQ(again.body, first.body);
  // Unkeyed, the same document is unchanged: the key is what made the repeat answer "created".
  auto unkeyed = api.Post("/api/v1/apply", Queue("extra", 1), "application/yaml");
  EXPECT_EQ(unkeyed.body["items"][0].value("action", ""), "unchanged") << unkeyed.text;

  auto other = api.PostIdempotent("/api/v1/apply", Queue("extra", 2), "application/yaml", "apply-1");
  EXPECT_EQ(other.status, 409) << other.text;
  EXPECT_NE(other.text.find("Idempotency-Key 'apply-1'"), std::string::npos) << other.text;
  EXPECT_NE(other.text.find("different request body"), std::string::npos) << other.text;
  auto elsewhere = api.PostIdempotent("/api/v1/workloads", Job("keyed-elsewhere"), "application/yaml", "apply-1");
  EXPECT_EQ(elsewhere.status, 409) << elsewhere.text;
  EXPECT_NE(elsewhere.text.find("for POST /api/v1/apply"), std::string::npos) << elsewhere.text;
  EXPECT_EQ(api.Get("/api/v1/workloads/keyed-elsewhere").status, 404);
  EXPECT_EQ(api.Get("/api/v1/queues/extra").text.find("\"nominal\":2"), std::string::npos);

  // One change audited (with the key's record), one replay note.
  EXPECT_EQ(AuditAfter(api, "put queue/extra").size(), 1u);
  std::vector<json> replays = AuditAfter(api, "replay of Idempotency-Key 'apply-1'");
  ASSERT_EQ(replays.size(), 1u);
  EXPECT_EQ(replays[0].value("action", ""), "apply");
  EXPECT_EQ(replays[0].value("result", ""), "ok");

  ASSERT_EQ(server_->Terminate(), 0);
  server_->Start();
  auto restarted = server_->Client();
  auto after_restart = restarted.PostIdempotent("/api/v1/apply", Queue("extra", 1), "application/yaml", "apply-1");
  ASSERT_EQ(after_restart.status, 200) << after_restart.text;
  EXPECT_EQ(after_restart.body, first.body);

  // The CLI sends a key of its own per run: two runs of one file are two applies, as before.
  TempDir tmp;
  std::ofstream(tmp.path() + "/queue.yaml") << Queue("by-cli", 1);
  std::vector<std::string> args = {"apply",   "-f",           tmp.path() + "/queue.yaml",
                                   "--server", server_->url(), "--token", server_->token()};
  CliResult created = RunCli(args);
  EXPECT_EQ(created.code, 0) << created.err;
  EXPECT_NE(created.out.find("Queue/by-cli created"), std::string::npos) << created.out;
  CliResult unchanged = RunCli(args);
  EXPECT_EQ(unchanged.code, 0) << unchanged.err;
  EXPECT_NE(unchanged.out.find("Queue/by-cli unchanged"), std::string::npos) << unchanged.out;
}

// Point 2 for cancel: a repeat answers the first answer (the workload as cancelled), not 409
// "already Cancelled", also after a restart; the same key with another reason or for another
// workload is refused and cancels nothing.
TEST_F(ContractTest, ACancelRetriedWithItsIdempotencyKeyAnswersItsFirstAnswer) {
  auto api = server_->Client();
  ASSERT_EQ(api.Post("/api/v1/workloads", Job("stop-me"), "application/yaml").status, 201);
  ASSERT_EQ(api.Post("/api/v1/workloads", Job("keep-me"), "application/yaml").status, 201);
  const std::string body = R"({"reason":"done"})";
  auto first = api.PostIdempotent("/api/v1/workloads/stop-me/cancel", body, "application/json", "cancel-1");
  ASSERT_EQ(first.status, 200) << first.text;
  ASSERT_EQ(first.body.value("state", ""), "Cancelled") << first.text;
  auto again = api.PostIdempotent("/api/v1/workloads/stop-me/cancel", body, "application/json", "cancel-1");
  ASSERT_EQ(again.status, 200) << again.text;
  EXPECT_EQ(again.body, first.body);
  // Unkeyed, a second cancel of a finished workload is refused.
  EXPECT_EQ(api.Post("/api/v1/workloads/stop-me/cancel", body, "application/json").status, 409);

  auto other = api.PostIdempotent("/api/v1/workloads/stop-me/cancel", R"({"reason":"other"})", "application/json",
                                  "cancel-1");
  EXPECT_EQ(other.status, 409) << other.text;
  EXPECT_NE(other.text.find("different request body"), std::string::npos) << other.text;
  auto elsewhere = api.PostIdempotent("/api/v1/workloads/keep-me/cancel", body, "application/json", "cancel-1");
  EXPECT_EQ(elsewhere.status, 409) << elsewhere.text;
  EXPECT_NE(elsewhere.text.find("Idempotency-Key 'cancel-1'"), std::string::npos) << elsewhere.text;
  EXPECT_NE(elsewhere.text.find("POST /api/v1/workloads/stop-me/cancel"), std::string::npos) << elsewhere.text;
  EXPECT_EQ(api.Get("/api/v1/workloads/keep-me").body.value("state", ""), "Pending");
  std::vector<json> replays = AuditAfter(api, "replay of Idempotency-Key 'cancel-1'");
  ASSERT_EQ(replays.size(), 1u);
  EXPECT_EQ(replays[0].value("action", ""), "cancel");

  ASSERT_EQ(server_->Terminate(), 0);
  server_->Start();
  auto restarted = server_->Client();
  auto after_restart = restarted.PostIdempotent("/api/v1/workloads/stop-me/cancel", body, "application/json", "cancel-1");
  ASSERT_EQ(after_restart.status, 200) << after_restart.text;
  EXPECT_EQ(after_restart.body, first.body);

  std::vector<std::string> args = {"cancel", "keep-me", "--server", server_->url(), "--token", server_->token()};
  CliResult cancelled = RunCli(args);
  EXPECT_EQ(cancelled.code, 0) << cancelled.err;
  EXPECT_EQ(restarted.Get("/api/v1/workloads/keep-me").body.value("state", ""), "Cancelled");
}

// Point 2 for scale: a repeat answers the first answer and scales nothing again (one Scaled
// event), also after a restart; another replica count under the key is refused.
TEST_F(ContractTest, AScaleRetriedWithItsIdempotencyKeyScalesOnce) {
  auto api = server_->Client();
  std::string job = Job("wide");
  job.replace(job.find("tasks: 1"), 8, "tasks: 4");
  ASSERT_EQ(api.Post("/api/v1/workloads", job, "application/yaml").status, 201);
  auto first = api.PostIdempotent("/api/v1/workloads/wide/scale", R"({"replicas":3})", "application/json", "scale-1");
  ASSERT_EQ(first.status, 200) << first.text;
  auto again = api.PostIdempotent("/api/v1/workloads/wide/scale", R"({"replicas":3})", "application/json", "scale-1");
  ASSERT_EQ(again.status, 200) << again.text;
  EXPECT_EQ(again.body, first.body);
  auto other = api.PostIdempotent("/api/v1/workloads/wide/scale", R"({"replicas":2})", "application/json", "scale-1");
  EXPECT_EQ(other.status, 409) << other.text;
  ASSERT_EQ(server_->Terminate(), 0);
  server_->Start();
  auto restarted = server_->Client();
  auto after_restart = restarted.PostIdempotent("/api/v1/workloads/wide/scale", R"({"replicas":3})", "application/json",
                                                "scale-1");
  ASSERT_EQ(after_restart.status, 200) << after_restart.text;
  EXPECT_EQ(after_restart.body, first.body);
  auto events = restarted.Get("/api/v1/workloads/wide/events");
  ASSERT_EQ(events.status, 200) << events.text;
  size_t scaled = 0;
  for (size_t at = events.text.find("\"Scaled\""); at != std::string::npos; at = events.text.find("\"Scaled\"", at + 1)) {
    ++scaled;
  }
  EXPECT_EQ(scaled, 1u) << events.text;
}

// Point 21: with every row rewritten and re-hashed and the head forged, or every row and the
// head deleted, the chain alone verifies; the signed anchors outside the store do not.
TEST_F(ContractTest, AuditAnchorsDetectAFullRewriteAndADeleteAll) {
  auto api = server_->Client();
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(api.Post("/api/v1/workloads", Job("w" + std::to_string(i)), "application/yaml").status, 201);
  }
  json ok = Verify();
  ASSERT_TRUE(ok.value("ok", false)) << ok.dump();
  EXPECT_GE(ok.value("anchors", 0), 1) << ok.dump();
  ASSERT_EQ(server_->Terminate(), 0);  // the shutdown anchors the final head

  // Rewrite: every entry's actor changed, the chain re-hashed, the head forged.
  {
    std::vector<govern::AuditEntry> entries;
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(Db().c_str(), &db), SQLITE_OK);
    sqlite3_stmt* q = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT json FROM journal WHERE stream = 'audit' ORDER BY seq", -1, &q, nullptr),
              SQLITE_OK);
    while (sqlite3_step(q) == SQLITE_ROW) {
      auto e = govern::AuditEntryFromJson(json::parse(reinterpret_cast<const char*>(sqlite3_column_text(q, 0))));
      ASSERT_TRUE(e.ok());
      entries.push_back(*e);
    }
    sqlite3_finalize(q);
    sqlite3_close(db);
    ASSERT_GE(entries.size(), 4u);
    std::string prev = govern::GenesisHash();
    std::string sql = "BEGIN;";
    for (auto& e : entries) {
      e.record.actor = "user eve";
      e.prev_hash = prev;
      e.hash = govern::ComputeAuditHash(e);
      prev = e.hash;
      std::string text = govern::AuditEntryToJson(e).dump();
      std::string quoted;
      for (char c : text) quoted += c == '\'' ? std::string("''") : std::string(1, c);
      sql += "UPDATE journal SET json = '" + quoted + "' WHERE stream = 'audit' AND seq = " + std::to_string(e.seq) + ";";
    }
    sql += "UPDATE meta SET value = '" + std::to_string(entries.back().seq) + ":" + prev + "' WHERE key = 'audit.head';";
    Sql(Db(), sql + "COMMIT;");
  }
  server_->Start();
  json rewritten = Verify();
  EXPECT_FALSE(rewritten.value("ok", true)) << rewritten.dump();
  EXPECT_NE(rewritten.value("reason", "").find("rewritten"), std::string::npos) << rewritten.dump();
  std::vector<std::string> args = {"audit", "--verify", "--server", server_->url(), "--token", server_->token()};
  CliResult cli = RunCli(args);
  EXPECT_EQ(cli.code, 1) << cli.out << cli.err;
  EXPECT_NE(cli.out.find("BROKEN"), std::string::npos) << cli.out;

  // Delete every entry and the head.
  ASSERT_EQ(server_->Terminate(), 0);
  Sql(Db(), "DELETE FROM journal WHERE stream = 'audit'; DELETE FROM meta WHERE key = 'audit.head';");
  server_->Start();
  json emptied = Verify();
  EXPECT_FALSE(emptied.value("ok", true)) << emptied.dump();
  EXPECT_NE(emptied.value("reason", "").find("entries deleted"), std::string::npos) << emptied.dump();
}

}  // namespace
}  // namespace abacus::testing
