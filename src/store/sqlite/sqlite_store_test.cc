// What only a SQLite file can show: schema migrations, data surviving a reopen, and
// acknowledged commits surviving kill -9 of the writing process. (Readers during commits are
// in the backend-parameterized suite, store_test.cc.)
#include "store/sqlite/sqlite_store.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/group_commit.h"
#include "store/migration.h"
#include "store/crash_test_util.h"
#include "store/store_test_util.h"

namespace abacus {
namespace {

using testing_util::ScratchDir;

// Runs `sql` on its own connection to `path` and returns the first column of the first row.
std::string QueryOne(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  std::string out = "<error>";
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK) {
      int rc = sqlite3_step(stmt);
      if (rc == SQLITE_ROW) {
        const unsigned char* text = sqlite3_column_text(stmt, 0);
        out = text ? reinterpret_cast<const char*>(text) : "NULL";
      } else if (rc == SQLITE_DONE) {
        out = "";
      }
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close_v2(db);
  return out;
}

TEST(SqliteStoreTest, MigrationsApplyOnceAndReopenIsIdempotent) {
  ScratchDir dir;
  const std::string path = dir.File("abacus.db");
  const int latest = static_cast<int>(SqliteMigrations().size());
  {
    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    EXPECT_EQ((*store)->schema_version(), latest);
    ASSERT_TRUE((*store)->Commit(WriteBatch().Put("tenant", "nlp", R"({"n":1})")).ok());
  }
  for (int reopen = 0; reopen < 2; ++reopen) {
    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    EXPECT_EQ((*store)->schema_version(), latest);
    auto tenant = (*store)->Get("tenant", "nlp");
    ASSERT_TRUE(tenant.ok());
    ASSERT_TRUE(tenant->has_value());
    EXPECT_EQ((*tenant)->json, R"({"n":1})");
  }
  EXPECT_EQ(QueryOne(path, "SELECT COUNT(*) FROM schema_migrations"), std::to_string(latest));
  EXPECT_EQ(QueryOne(path, "SELECT name FROM schema_migrations WHERE version = 1"), "initial");
  EXPECT_EQ(QueryOne(path, "PRAGMA journal_mode"), "wal");
}

// A new database and its WAL are owner-only: they hold token hashes, users, sealed secrets and
// the audit log (a migrate into a new folder wrote them 0644 — the probe of 2026-12-07).
TEST(SqliteStoreTest, ANewDatabaseAndItsWalAreOwnerOnly) {
  ScratchDir dir;
  const std::string path = dir.File("abacus.db");
  auto store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  ASSERT_TRUE((*store)->Commit(WriteBatch().Put("tenant", "nlp", R"({"n":1})")).ok());
  namespace fs = std::filesystem;
  for (const std::string& file : {path, path + "-wal"}) {
    ASSERT_TRUE(fs::exists(file)) << file;
    EXPECT_EQ(fs::status(file).permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write) << file;
  }
}

// Checkpoints run on the store's own thread, not inside a commit: while commits go on, the
// database file receives the WAL's pages (without a checkpoint every page would stay in the
// WAL), and the data reads back whole after a reopen.
TEST(SqliteStoreTest, TheWalIsCheckpointedWhileCommitsContinue) {
  ScratchDir dir;
  const std::string path = dir.File("abacus.db");
  const std::string doc = "{\"pad\":\"" + std::string(3000, 'x') + "\"}";  // about a page each
  {
    auto store = SqliteStore::Open(path);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    const auto before = std::filesystem::file_size(path);
    bool copied = false;
    for (int i = 0; i < 3000 && !copied; ++i) {
      ASSERT_TRUE((*store)->Commit(WriteBatch().Put("blob", "b" + std::to_string(i), doc)).ok());
      // More than the threshold's worth of pages is in: the checkpointer copies them into the
      // database file while commits continue.
      if (i >= 1500 && i % 100 == 0) copied = std::filesystem::file_size(path) > before + (2u << 20);
    }
    for (int wait = 0; wait < 100 && !copied; ++wait) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      copied = std::filesystem::file_size(path) > before + (2u << 20);
    }
    EXPECT_TRUE(copied) << "database file " << std::filesystem::file_size(path) << " bytes";
  }
  auto store = SqliteStore::Open(path);
  ASSERT_TRUE(store.ok());
  auto n = (*store)->Count("blob");
  ASSERT_TRUE(n.ok());
  EXPECT_GE(*n, 1500);
  auto last = (*store)->Get("blob", "b" + std::to_string(*n - 1));
  ASSERT_TRUE(last.ok() && last->has_value());
  EXPECT_EQ((*last)->json, doc);
}

TEST(SqliteStoreTest, PendingMigrationsApplyInOrderAndNewerSchemasAreRefused) {
  ScratchDir dir;
  const std::string path = dir.File("abacus.db");
  ASSERT_TRUE(SqliteStore::Open(path).ok());

  std::vector<Migration> next(SqliteMigrations().begin(), SqliteMigrations().end());
  const int v2 = static_cast<int>(next.size()) + 1;
  next.push_back({v2, "add_leases", "CREATE TABLE leases (name TEXT PRIMARY KEY, holder TEXT);"});
  next.push_back({v2 + 1, "seed_leases", "INSERT INTO leases VALUES ('scheduler', NULL);"});
  SqliteStoreOptions options;
  options.migrations = next;
  for (int reopen = 0; reopen < 2; ++reopen) {
    auto store = SqliteStore::Open(path, options);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    EXPECT_EQ((*store)->schema_version(), v2 + 1);
  }
  EXPECT_EQ(QueryOne(path, "SELECT COUNT(*) FROM leases"), "1");  // seeded once
  EXPECT_EQ(QueryOne(path, "SELECT MAX(version) FROM schema_migrations"), std::to_string(v2 + 1));

  // This binary's built-in list stops before v2: the file is from the future.
  auto old_binary = SqliteStore::Open(path);
  ASSERT_FALSE(old_binary.ok());
  EXPECT_EQ(old_binary.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(old_binary.status().message().find(path), std::string::npos);
  EXPECT_NE(old_binary.status().message().find("newer"), std::string::npos)
      << old_binary.status().message();
}

TEST(SqliteStoreTest, AFailingMigrationLeavesTheSchemaAsItWas) {
  ScratchDir dir;
  const std::string path = dir.File("abacus.db");
  ASSERT_TRUE(SqliteStore::Open(path).ok());
  std::vector<Migration> next(SqliteMigrations().begin(), SqliteMigrations().end());
  const int v2 = static_cast<int>(next.size()) + 1;
  next.push_back({v2, "broken", "CREATE TABLE half (x INTEGER); CREATE TABLE objects (y);"});
  SqliteStoreOptions options;
  options.migrations = next;
  auto store = SqliteStore::Open(path, options);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find("broken"), std::string::npos)
      << store.status().message();
  EXPECT_EQ(QueryOne(path, "SELECT COUNT(*) FROM sqlite_master WHERE name = 'half'"), "0");
  EXPECT_TRUE(SqliteStore::Open(path).ok());

  next.back() = {v2 + 5, "gap", "SELECT 1;"};
  options.migrations = next;
  EXPECT_EQ(SqliteStore::Open(path, options).status().code(), StatusCode::kInternal);
}

TEST(SqliteStoreTest, ErrorsNameThePath) {
  const std::string path = "/nonexistent-abacus-dir/sub/abacus.db";
  auto store = SqliteStore::Open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(store.status().message().find(path), std::string::npos) << store.status().message();

  ScratchDir dir;
  const std::string junk = dir.File("junk.db");
  FILE* f = fopen(junk.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("this is not a database, just text long enough to fill a header......", f);
  fclose(f);
  auto bad = SqliteStore::Open(junk);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(junk), std::string::npos) << bad.status().message();
}

TEST(SqliteStoreTest, ReadsSeeEveryCommitAndEverythingSurvivesAReopen) {
  ScratchDir dir;
  const std::string path = dir.File("abacus.db");
  ManualClock clock;
  SqliteStoreOptions options;
  options.clock = &clock;
  {
    auto store = SqliteStore::Open(path, options);
    ASSERT_TRUE(store.ok());
    for (int i = 0; i < 20; ++i) {
      std::string key = "w" + std::to_string(i);
      ASSERT_TRUE((*store)
                      ->Commit(WriteBatch()
                                   .Put("workload", key, "{}")
                                   .AppendEvent("workload", key, "Submitted", "{}", clock.Now())
                                   .AppendJournal("usage", "{}", clock.Now())
                                   .PutMeta("last", key))
                      .ok());
      // The read connection sees the commit at once.
      EXPECT_EQ(*(*store)->Count("workload"), i + 1);
    }
  }
  auto opened = SqliteStore::Open(path, options);
  ASSERT_TRUE(opened.ok());
  Store* store = opened->get();  // the interface carries the default arguments
  EXPECT_EQ(*store->Count("workload"), 20);
  EXPECT_EQ(store->Events("workload", "w19")->size(), 1u);
  EXPECT_EQ(store->Journal("usage")->size(), 20u);
  EXPECT_EQ(**store->GetMeta("last"), "w19");
  // Event seqs continue after a reopen.
  CommitResult result;
  ASSERT_TRUE(
      store->Commit(WriteBatch().AppendEvent("workload", "w0", "Done", "{}", clock.Now()), &result)
          .ok());
  EXPECT_EQ(result.assigned, std::vector<int64_t>{21});
}

TEST(SqliteStoreCrashTest, AcknowledgedCommitsSurviveKill9WithSynchronousFull) {
  ScratchDir dir;
  testing_util::ExpectAcknowledgedCommitsSurviveKill9("sqlite://" + dir.File("crash.db"));
}

TEST(SqliteStoreCrashTest, AcknowledgedCommitsSurviveKill9WithSynchronousNormal) {
  ScratchDir dir;
  testing_util::ExpectAcknowledgedCommitsSurviveKill9("sqlite://" + dir.File("crash.db") +
                                                      "?synchronous=normal");
}

}  // namespace
}  // namespace abacus
