// The server on PostgreSQL, and `abacus admin migrate` between SQLite and PostgreSQL, with real
// processes against a throwaway PostgreSQL server (src/store/postgres/pg_test_server.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "server_process.h"
#include "store/postgres/pg_test_server.h"

namespace abacus::testing {
namespace {

using nlohmann::json;
using testing_util::PgTestDatabase;

constexpr char kJob[] = R"(kind: BatchJob
name: survives
project: acme/ml
queue: train
spec:
  command: ["true"]
  taskGroups:
    - name: main
      resources: {cpu: 1, memory: 1Gi}
  tasks: 1
  parallelism: 1
)";

std::vector<std::string> EnvOf(const ServerProcess& server) {
  return {"ABACUS_SERVER=" + server.url(), "ABACUS_TOKEN=" + server.token()};
}

// Applies the acme org and submits one job through the CLI.
void ApplyAndSubmit(const ServerProcess& server) {
  auto applied = RunCli({"apply", "-f", "-"}, EnvOf(server), kAcmeOrg);
  ASSERT_EQ(applied.code, 0) << applied.err;
  auto submitted = RunCli({"submit", "-f", "-"}, EnvOf(server), kJob);
  ASSERT_EQ(submitted.code, 0) << submitted.err;
}

// Returns the state of the job, or "" when the server does not know it.
std::string JobState(const ServerProcess& server) {
  auto got = RunCli({"get", "workloads", "survives", "-o", "json"}, EnvOf(server));
  if (got.code != 0) return "";
  return json::parse(got.out).value("state", "");
}

TEST(PostgresServerTest, WorkloadsSurviveARestartOnPostgres) {
  PgTestDatabase db;
  ABACUS_REQUIRE_PG_DATABASE(db);
  TempDir dir;
  ServerProcess server(dir.path(), {"--store", db.url()});
  ApplyAndSubmit(server);
  EXPECT_EQ(JobState(server), "Pending");  // no node fits: it waits, durably
  EXPECT_EQ(server.Terminate(), 0);
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/abacus.db"));  // state went to PostgreSQL

  server.Start();
  EXPECT_EQ(JobState(server), "Pending");
  auto queues = RunCli({"get", "queues", "-o", "json"}, EnvOf(server));
  ASSERT_EQ(queues.code, 0) << queues.err;
  EXPECT_NE(queues.out.find("\"train\""), std::string::npos) << queues.out;
}

TEST(AdminMigrateTest, SqliteToPostgresAndBackKeepsTheInstallation) {
  PgTestDatabase db;
  ABACUS_REQUIRE_PG_DATABASE(db);
  TempDir dir;
  ServerProcess server(dir.path());
  ApplyAndSubmit(server);
  ASSERT_EQ(server.Terminate(), 0);
  const std::string sqlite_url = "sqlite://" + dir.path() + "/abacus.db";

  // 1) SQLite -> PostgreSQL: progress on stderr, verified counts on stdout.
  auto moved = RunCli({"admin", "migrate", "--from", sqlite_url, "--to", db.url()});
  ASSERT_EQ(moved.code, 0) << moved.err;
  EXPECT_NE(moved.err.find("migrate: objects workload: 1/1"), std::string::npos) << moved.err;
  EXPECT_NE(moved.err.find("verifying"), std::string::npos) << moved.err;
  EXPECT_NE(moved.out.find("verified: "), std::string::npos) << moved.out;
  EXPECT_NE(moved.out.find("sha256 "), std::string::npos) << moved.out;

  // 2) The target is no longer empty: refused without --force, replaced with it.
  auto again = RunCli({"admin", "migrate", "--from", sqlite_url, "--to", db.url()});
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.err.find("--force"), std::string::npos) << again.err;
  auto forced = RunCli({"admin", "migrate", "--from", sqlite_url, "--to", db.url(), "--force",
                        "-q", "-o", "json"});
  ASSERT_EQ(forced.code, 0) << forced.err;
  EXPECT_TRUE(forced.err.empty()) << forced.err;
  json report = json::parse(forced.out);
  EXPECT_TRUE(report["verified"].get<bool>());
  EXPECT_EQ(report["source"]["sha256"], report["target"]["sha256"]);
  EXPECT_EQ(report["target"]["objects"]["workload"], 1);
  EXPECT_GE(report["target"]["events"].get<int64_t>(), 1);

  // 3) The server on PostgreSQL, same data folder (tokens): the workload is there.
  ServerProcess on_pg(dir.path(), {"--store", db.url()});
  EXPECT_EQ(JobState(on_pg), "Pending");
  // A change made on PostgreSQL travels back.
  auto cancelled = RunCli({"cancel", "survives"}, EnvOf(on_pg));
  ASSERT_EQ(cancelled.code, 0) << cancelled.err;
  ASSERT_EQ(on_pg.Terminate(), 0);

  // 4) PostgreSQL -> a fresh SQLite file in a new data folder (with the token files).
  TempDir back;
  for (const char* file : {"admin.token", "join.token"}) {
    std::filesystem::copy_file(dir.path() + "/" + file, back.path() + "/" + file);
  }
  auto returned = RunCli({"admin", "migrate", "--from", db.url(), "--to",
                          "sqlite://" + back.path() + "/abacus.db"});
  ASSERT_EQ(returned.code, 0) << returned.err;
  ServerProcess on_sqlite(back.path());
  std::string state = JobState(on_sqlite);
  EXPECT_TRUE(state == "Cancelled" || state == "Canceled") << state;
}

TEST(AdminMigrateTest, HelpTeachesAndBadUrlsAreRefused) {
  auto help = RunCli({"admin", "migrate", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--force"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("SHA-256"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("Example"), std::string::npos) << help.out;

  TempDir dir;
  auto same = RunCli({"admin", "migrate", "--from", "sqlite://" + dir.path() + "/a.db", "--to",
                      "sqlite://" + dir.path() + "/a.db"});
  EXPECT_EQ(same.code, 2) << same.err;
  auto missing = RunCli({"admin", "migrate", "--from", "sqlite://" + dir.path() + "/typo.db", "--to",
                         "sqlite://" + dir.path() + "/b.db"});
  EXPECT_EQ(missing.code, 2) << missing.err;
  EXPECT_NE(missing.err.find("no SQLite database"), std::string::npos) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/typo.db"));
  std::ofstream(dir.path() + "/a.db").flush();  // an empty file is an empty SQLite database
  auto unreachable = RunCli({"admin", "migrate", "--from", "sqlite://" + dir.path() + "/a.db",
                             "--to", "postgres://x:pw@127.0.0.1:1/db?connect_timeout=2"});
  EXPECT_EQ(unreachable.code, 1);
  EXPECT_NE(unreachable.err.find("--to"), std::string::npos) << unreachable.err;
  EXPECT_EQ(unreachable.err.find("pw@"), std::string::npos) << unreachable.err;
}

}  // namespace
}  // namespace abacus::testing
