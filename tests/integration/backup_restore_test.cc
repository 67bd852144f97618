// The backup and restore procedure of docs/operations.md ("Backup and restore"), run as written
// against a real server and agent: the anchors copied before an online `VACUUM INTO` snapshot,
// the token, key and log files in a tarball; later work; then the restore — the database and
// files of the backup put back, the server and agent started again. The restored server holds
// the ledger of the backup (work submitted after it is gone), its audit chain verifies against
// the restored anchors, the admin token still works, and a secret stored before the backup is
// still opened into a task.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "govern/crypto.h"
#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr char kCanary[] = "canary-backup-4c1d";

// Runs `cmd` with /bin/sh; returns its exit code.
int Shell(const std::string& cmd) {
  int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string Job(const std::string& name, const std::string& script, const std::string& extra = "") {
  return "kind: TrainingJob\nname: " + name + "\nproject: acme/ml\nqueue: train\nspec:\n  command: [\"sh\", \"-c\", \"" +
         script + "\"]\n" + extra + "  taskGroups:\n    - name: main\n      resources: {cpu: 1, memory: 1Gi}\n";
}

// `abacus server` on `data`, for a start that should be refused: a server that starts instead is
// stopped after 30 s (exit 124) rather than hanging the test.
CliResult StartServer(const std::string& data) {
  return RunProgram("/usr/bin/timeout", {"30", ABACUS_BINARY, "server", "--config", "", "--data", data, "--listen",
                                         "127.0.0.1:0"});
}

TEST(BackupRestoreTest, TheDocumentedProcedureRestoresTheLedgerTheAuditChainAndTheSecrets) {
  ASSERT_EQ(Shell("command -v sqlite3 >/dev/null && command -v tar >/dev/null"), 0)
      << "the procedure needs sqlite3 and tar (scripts/install-deps.sh installs them)";
  TempDir dir, backups;
  const std::string data = dir.path(), bak = backups.path();
  ServerProcess server(data);
  auto admin = server.Client();
  ASSERT_EQ(admin.Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);
  auto agent = std::make_unique<AgentProcess>(server, "cpu-a", "");
  CliResult secret = RunCli({"secret", "create", "db-creds", "-p", "acme/ml", "--from-literal",
                             std::string("password=") + kCanary, "--server", server.url(), "--token", server.token()});
  ASSERT_EQ(secret.code, 0) << secret.err;
  auto state_of = [&](const std::string& id) { return admin.Get("/api/v1/workloads/" + id).body.value("state", ""); };
  auto run = [&](const std::string& yaml) {
    auto r = admin.Post("/api/v1/workloads", yaml, "application/yaml");
    EXPECT_EQ(r.status, 201) << r.text;
    const std::string id = r.ok() ? r.body["items"][0]["id"].get<std::string>() : "";
    EXPECT_TRUE(WaitFor([&] { return state_of(id) == "Succeeded" || state_of(id) == "Failed"; },
                        std::chrono::seconds(60)))
        << admin.Get("/api/v1/workloads/" + id).text;
    EXPECT_EQ(state_of(id), "Succeeded") << admin.Get("/api/v1/workloads/" + id + "/logs").text;
    return id;
  };
  const std::string before = run(Job("before", "echo before-ran"));

  // The backup, online (operations.md): anchors first, then the snapshot, then the files.
  ASSERT_EQ(Shell("cp -p " + data + "/audit.anchors " + bak + "/audit.anchors-1"), 0);
  ASSERT_EQ(Shell("sqlite3 " + data + "/abacus.db \"VACUUM INTO '" + bak + "/abacus-1.db'\""), 0);
  ASSERT_EQ(Shell("tar -C " + data + " -czf " + bak + "/abacus-files-1.tar.gz admin.token join.token audit.key "
                  "secrets.key logs"),
            0);
  {
    FILE* p = ::popen(("sqlite3 " + bak + "/abacus-1.db 'PRAGMA integrity_check'").c_str(), "r");
    ASSERT_NE(p, nullptr);
    char line[64] = {};
    ASSERT_NE(fgets(line, sizeof line, p), nullptr);
    ::pclose(p);
    EXPECT_EQ(std::string(line), "ok\n");
  }

  // Work after the backup: the restore loses it.
  const std::string after = run(Job("after", "echo after-ran"));

  // The restore: both stopped, the database and files of the backup put back.
  ASSERT_EQ(agent->Terminate(), 0);
  ASSERT_EQ(server.Terminate(), 0);
  ASSERT_EQ(Shell("cd " + data + " && mkdir -p ../" + fs::path(data).filename().string() +
                  ".before && mv abacus.db* ../" + fs::path(data).filename().string() + ".before/ && cp " + bak +
                  "/abacus-1.db abacus.db && tar -xzf " + bak + "/abacus-files-1.tar.gz && mv audit.anchors ../" +
                  fs::path(data).filename().string() + ".before/ && cp " + bak +
                  "/audit.anchors-1 audit.anchors && chmod 600 abacus.db admin.token join.token audit.key secrets.key"),
            0);
  // Ids are time-ordered (common/ids.h): a restore comes later than the work it loses, so the
  // restored server's ids never repeat a lost workload's. Done by a script, it may come within
  // the same second: wait for the next one.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  server.Start();
  agent->Start();
  admin = server.Client();  // the server listens on a new port

  // The chain up to the backup is intact, and the admin token of the backup works.
  CliResult verify = RunCli({"audit", "--verify", "--server", server.url(), "--token", server.token()});
  EXPECT_EQ(verify.code, 0) << verify.out << verify.err;
  EXPECT_EQ(admin.Get("/api/v1/workloads/" + before).body.value("state", ""), "Succeeded");
  EXPECT_EQ(admin.Get("/api/v1/workloads/" + after).status, 404);
  // The secret stored before the backup is opened into a task of the restored server.
  const std::string uses = run(Job("uses-secret",
                                   "[ \\\"$(printf %s \\\"$DB_PASSWORD\\\" | sha256sum | cut -c1-64)\\\" = " +
                                       govern::Sha256Hex(kCanary) + " ] && echo secret-ok",
                                   "  env:\n    - {name: DB_PASSWORD, secretRef: {secret: db-creds, key: password}}\n"));
  EXPECT_NE(admin.Get("/api/v1/workloads/" + uses + "/logs").text.find("secret-ok"), std::string::npos)
      << admin.Get("/api/v1/workloads/" + uses + "/logs").text;
  fs::remove_all(data + ".before");
}

// The fifth probe: a restore that left out audit.anchors (or anchors deleted while the server was
// stopped) started a new anchor file from the chain as it stood, and `abacus audit --verify`
// passed — a rolled-back database went unseen; a start without audit.key made a new key and
// appended anchors under it, unverifiable for good. Both are refused, naming what to put back;
// moving both away on purpose starts a new anchor history.
TEST(BackupRestoreTest, AStartWithoutTheAnchorsOrTheAuditKeyOfAChainIsRefused) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  {
    ServerProcess server(data);
    ASSERT_EQ(server.Client().Post("/api/v1/apply", "kind: Tenant\nname: acme\n", "application/yaml").status, 200);
    ASSERT_EQ(server.Terminate(), 0);
  }
  auto start = [&] { return StartServer(data); };
  fs::rename(data + "/audit.anchors", dir.path() + "/anchors.saved");
  CliResult no_anchors = start();
  EXPECT_EQ(no_anchors.code, 1) << no_anchors.out << no_anchors.err;
  EXPECT_NE(no_anchors.err.find("audit anchor file " + data + "/audit.anchors is missing or empty"), std::string::npos)
      << no_anchors.err;
  EXPECT_FALSE(fs::exists(data + "/audit.anchors"));  // nothing written over the evidence
  fs::rename(dir.path() + "/anchors.saved", data + "/audit.anchors");
  fs::rename(data + "/audit.key", dir.path() + "/key.saved");
  CliResult no_key = start();
  EXPECT_EQ(no_key.code, 1) << no_key.out << no_key.err;
  EXPECT_NE(no_key.err.find("audit key " + data + "/audit.key is missing"), std::string::npos) << no_key.err;
  EXPECT_FALSE(fs::exists(data + "/audit.key"));
  // Put back, the server starts and the chain verifies against its anchors.
  fs::rename(dir.path() + "/key.saved", data + "/audit.key");
  ServerProcess again(data);
  CliResult verify = RunCli({"audit", "--verify", "--server", again.url(), "--token", again.token()});
  EXPECT_EQ(verify.code, 0) << verify.out << verify.err;
}

// A server started without secrets.key while the store holds secrets made a new key over them,
// silently: every secret unreadable, and new ones sealed with a key the backup lacks (the fifth
// probe). It refuses, naming the file and a secret; nothing is written in its place. Given
// another key (the old one lost), it starts and warns of each secret it cannot open.
TEST(BackupRestoreTest, AStartWithoutTheSecretsKeyOfStoredSecretsIsRefusedAndAnotherKeyWarns) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  {
    ServerProcess server(data);
    ASSERT_EQ(server.Client().Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);
    CliResult secret = RunCli({"secret", "create", "db-creds", "-p", "acme/ml", "--from-literal", "password=x",
                               "--server", server.url(), "--token", server.token()});
    ASSERT_EQ(secret.code, 0) << secret.err;
    ASSERT_EQ(server.Terminate(), 0);
  }
  fs::rename(data + "/secrets.key", dir.path() + "/secrets.key.saved");
  CliResult refused = StartServer(data);
  EXPECT_EQ(refused.code, 1) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("secrets key " + data + "/secrets.key is missing but the store holds 1 secret(s)"),
            std::string::npos)
      << refused.err;
  EXPECT_NE(refused.err.find("acme/ml/db-creds"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(data + "/secrets.key"));  // no new key made over them

  // Another key (the old one lost): it starts, and says which secret it cannot open.
  ASSERT_EQ(Shell("openssl rand -hex 32 > '" + data + "/secrets.key' && chmod 600 '" + data + "/secrets.key'"), 0);
  fs::remove(data + "/server.url");
  const std::string err = dir.path() + "/server.err";
  const std::string bin = ABACUS_BINARY;
  ASSERT_EQ(Shell("'" + bin + "' server --config '' --data '" + data + "' --listen 127.0.0.1:0 2>'" + err +
                  "' & p=$!; for i in $(seq 600); do [ -s '" + data + "/server.url' ] && break; sleep 0.1; done; "
                  "kill $p; wait $p; true"),
            0);
  const std::string log = ReadFile(err);
  EXPECT_NE(log.find("1 secret(s) are sealed with a key that neither"), std::string::npos) << log;
  EXPECT_NE(log.find("acme/ml/db-creds (key "), std::string::npos) << log;
}

}  // namespace
}  // namespace abacus::testing
