// What only a SQLite file can show: schema migrations, data surviving a reopen, and
// acknowledged commits surviving kill -9 of the writing process.
#include "store/sqlite/sqlite_store.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/group_commit.h"
#include "store/migration.h"
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

TEST(SqliteStoreTest, ReadersRunWhileGroupsCommit) {
  ScratchDir dir;
  auto opened = SqliteStore::Open(dir.File("abacus.db"));
  ASSERT_TRUE(opened.ok());
  Store& store = **opened;
  GroupCommitter committer(store);
  std::atomic<bool> writing{true};
  std::atomic<int> read_errors{0};
  std::atomic<int> went_backwards{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      int64_t last = 0;
      while (writing) {
        auto count = store.Count("node");
        auto list = store.List("node");
        if (!count.ok() || !list.ok()) {
          ++read_errors;
          continue;
        }
        if (*count < last) ++went_backwards;
        last = *count;
      }
    });
  }
  std::vector<std::thread> writers;
  std::atomic<int> write_errors{0};
  for (int w = 0; w < 4; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 0; i < 200; ++i) {
        std::string key = "n" + std::to_string(w) + "-" + std::to_string(i);
        if (!committer.Submit(WriteBatch().Put("node", key, "{}")).ok()) ++write_errors;
      }
    });
  }
  for (auto& t : writers) t.join();
  writing = false;
  for (auto& t : readers) t.join();
  EXPECT_EQ(write_errors.load(), 0);
  EXPECT_EQ(read_errors.load(), 0);
  EXPECT_EQ(went_backwards.load(), 0);
  EXPECT_EQ(*store.Count("node"), 800);
}

// The child: commits batches through a GroupCommitter from several threads, forever, writing
// "KEY\n" to `fd` after each acknowledged commit. Never returns.
[[noreturn]] void CommitUntilKilled(const std::string& url, int fd) {
  auto store = OpenStore(url);
  if (!store.ok()) {
    std::string line = "ERR " + store.status().ToString() + "\n";
    (void)!write(fd, line.data(), line.size());
    _exit(1);
  }
  GroupCommitter committer(**store);
  std::atomic<int64_t> next{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      while (true) {
        std::string key = "k" + std::to_string(next++);
        WriteBatch batch;
        batch.Put("crash", key, R"({"key":")" + key + R"("})", 0)
            .AppendEvent("crash", key, "Written", "{}", SystemClock::Get().Now())
            .AppendJournal("crash", R"({"key":")" + key + R"("})", SystemClock::Get().Now());
        Status s = committer.Submit(batch);
        std::string line = s.ok() ? key + "\n" : "ERR " + s.ToString() + "\n";
        if (write(fd, line.data(), line.size()) < 0) _exit(2);  // one write: atomic on a pipe
      }
    });
  }
  for (auto& t : threads) t.join();
  _exit(0);
}

void ExpectAcknowledgedCommitsSurviveKill9(const std::string& query) {
  ScratchDir dir;
  const std::string path = dir.File("crash.db");
  const std::string url = "sqlite://" + path + query;
  constexpr size_t kAcksBeforeKill = 2000;

  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    CommitUntilKilled(url, fds[1]);
  }
  close(fds[1]);

  // 1) Read acknowledgements until enough have arrived, then kill the child mid-stream.
  std::string buffer;
  std::vector<std::string> acked;
  bool killed = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  char chunk[4096];
  while (true) {
    if (!killed && (acked.size() >= kAcksBeforeKill || std::chrono::steady_clock::now() > deadline)) {
      kill(child, SIGKILL);
      killed = true;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    if (poll(&pfd, 1, 1000) <= 0) continue;
    ssize_t n = read(fds[0], chunk, sizeof chunk);
    if (n <= 0) break;  // EOF: the child is gone and every line it wrote has been read
    buffer.append(chunk, static_cast<size_t>(n));
    size_t start = 0;
    for (size_t nl; (nl = buffer.find('\n', start)) != std::string::npos; start = nl + 1) {
      acked.push_back(buffer.substr(start, nl - start));
    }
    buffer.erase(0, start);
  }
  close(fds[0]);
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  ASSERT_TRUE(WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGKILL)
      << "child exited early: " << (acked.empty() ? std::string("no output") : acked.back());
  EXPECT_TRUE(buffer.empty()) << "torn line: " << buffer;
  ASSERT_GE(acked.size(), kAcksBeforeKill);

  // 2) Reopen (recovering the WAL) and look for every acknowledged key.
  auto store = OpenStore(url);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  std::set<std::string> unique;
  size_t missing = 0;
  for (const std::string& key : acked) {
    ASSERT_FALSE(key.starts_with("ERR")) << key;
    EXPECT_TRUE(unique.insert(key).second) << "acknowledged twice: " << key;
    auto record = (*store)->Get("crash", key);
    ASSERT_TRUE(record.ok());
    if (!record->has_value()) {
      ++missing;
      continue;
    }
    EXPECT_EQ((*record)->version, 1);
    EXPECT_EQ((*store)->Events("crash", key)->size(), 1u) << key;
  }
  EXPECT_EQ(missing, 0u) << "acknowledged commits lost after kill -9";

  // 3) Batches stayed atomic: every stored object has exactly one journal entry, no more.
  auto objects = (*store)->List("crash");
  auto journal = (*store)->Journal("crash");
  ASSERT_TRUE(objects.ok() && journal.ok());
  EXPECT_GE(objects->size(), acked.size());  // commits in flight at the kill may have landed
  EXPECT_EQ(journal->size(), objects->size());
  std::set<std::string> journaled;
  for (const JournalRecord& entry : *journal) journaled.insert(entry.json);
  EXPECT_EQ(journaled.size(), journal->size()) << "a journal entry was written twice";
}

TEST(SqliteStoreCrashTest, AcknowledgedCommitsSurviveKill9WithSynchronousFull) {
  ExpectAcknowledgedCommitsSurviveKill9("");
}

TEST(SqliteStoreCrashTest, AcknowledgedCommitsSurviveKill9WithSynchronousNormal) {
  ExpectAcknowledgedCommitsSurviveKill9("?synchronous=normal");
}

}  // namespace
}  // namespace abacus
