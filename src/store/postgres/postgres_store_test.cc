// What only a PostgreSQL database can show: schema migrations under the advisory lock, data
// surviving a reopen, dense journal numbering with two stores (two servers) committing at once,
// reconnecting after the server drops a connection, and acknowledged commits surviving kill -9
// of the writing process. The shared behaviour is in store_test.cc (backend "Postgres").
#include "store/postgres/postgres_store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "store/crash_test_util.h"
#include "store/group_commit.h"
#include "store/postgres/pg_conn.h"
#include "store/postgres/pg_test_server.h"

namespace abacus {
namespace {

using testing_util::PgTestDatabase;

// Returns the first column of the first row of `sql` on `url`, or "<error: ...>".
std::string QueryOne(const std::string& url, const char* sql) {
  auto conn = PgConnection::Open(url, "test");
  if (!conn.ok()) return "<error: " + conn.status().message() + ">";
  auto r = (*conn)->Query(sql);
  if (!r.ok()) return "<error: " + r.status().message() + ">";
  return r->rows() > 0 ? r->Text(0, 0) : "";
}

TEST(PostgresStoreTest, MigrationsApplyOnceAndReopenKeepsEverything) {
  PgTestDatabase db;
  ABACUS_REQUIRE_PG_DATABASE(db);
  const int latest = static_cast<int>(PostgresMigrations().size());
  ManualClock clock;
  PostgresStoreOptions options;
  options.clock = &clock;
  {
    auto store = PostgresStore::Open(db.url(), options);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    EXPECT_EQ((*store)->schema_version(), latest);
    for (int i = 0; i < 20; ++i) {
      std::string key = "w" + std::to_string(i);
      ASSERT_TRUE((*store)
                      ->Commit(WriteBatch()
                                   .Put("workload", key, "{}")
                                   .AppendEvent("workload", key, "Submitted", "{}", clock.Now())
                                   .AppendJournal("usage", "{}", clock.Now())
                                   .PutMeta("last", key))
                      .ok());
      EXPECT_EQ(*(*store)->Count("workload"), i + 1);  // readers see the commit at once
    }
  }
  for (int reopen = 0; reopen < 2; ++reopen) {
    auto opened = PostgresStore::Open(db.url(), options);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    EXPECT_EQ((*opened)->schema_version(), latest);
    Store* store = opened->get();
    EXPECT_EQ(*store->Count("workload"), 20);
    EXPECT_EQ(store->Journal("usage")->size(), 20u);
    EXPECT_EQ(**store->GetMeta("last"), "w19");
  }
  EXPECT_EQ(QueryOne(db.url(), "SELECT COUNT(*) FROM schema_migrations"), std::to_string(latest));
  // Event seqs continue after a reopen.
  auto store = PostgresStore::Open(db.url(), options);
  ASSERT_TRUE(store.ok());
  CommitResult result;
  ASSERT_TRUE((*store)
                  ->Commit(WriteBatch().AppendEvent("workload", "w0", "Done", "{}", clock.Now()),
                           &result)
                  .ok());
  EXPECT_EQ(result.assigned, std::vector<int64_t>{21});
}

TEST(PostgresStoreTest, PendingMigrationsApplyInOrderAndNewerSchemasAreRefused) {
  PgTestDatabase db;
  ABACUS_REQUIRE_PG_DATABASE(db);
  ASSERT_TRUE(PostgresStore::Open(db.url()).ok());
  std::vector<Migration> next(PostgresMigrations().begin(), PostgresMigrations().end());
  const int v2 = static_cast<int>(next.size()) + 1;
  // What HA will add: a lease row with a holder and a fencing token.
  next.push_back({v2, "add_leases",
                  "CREATE TABLE leases (name TEXT PRIMARY KEY, holder TEXT, fencing BIGINT);"});
  next.push_back({v2 + 1, "seed_leases", "INSERT INTO leases VALUES ('leader', NULL, 0);"});
  PostgresStoreOptions options;
  options.migrations = next;
  // Several servers starting at once: the advisory lock lets one migrate, the others see it.
  std::vector<std::thread> starters;
  std::atomic<int> failures{0};
  for (int i = 0; i < 4; ++i) {
    starters.emplace_back([&] {
      auto store = PostgresStore::Open(db.url(), options);
      if (!store.ok() || (*store)->schema_version() != v2 + 1) ++failures;
    });
  }
  for (auto& t : starters) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(QueryOne(db.url(), "SELECT COUNT(*) FROM leases"), "1");  // seeded once
  EXPECT_EQ(QueryOne(db.url(), "SELECT MAX(version) FROM schema_migrations"),
            std::to_string(v2 + 1));

  auto old_binary = PostgresStore::Open(db.url());
  ASSERT_FALSE(old_binary.ok());
  EXPECT_EQ(old_binary.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(old_binary.status().message().find("newer"), std::string::npos)
      << old_binary.status().message();
}

TEST(PostgresStoreTest, AFailingMigrationLeavesTheSchemaAsItWas) {
  PgTestDatabase db;
  ABACUS_REQUIRE_PG_DATABASE(db);
  ASSERT_TRUE(PostgresStore::Open(db.url()).ok());
  std::vector<Migration> next(PostgresMigrations().begin(), PostgresMigrations().end());
  const int v2 = static_cast<int>(next.size()) + 1;
  next.push_back({v2, "broken", "CREATE TABLE half (x INTEGER); CREATE TABLE objects (y TEXT);"});
  PostgresStoreOptions options;
  options.migrations = next;
  auto store = PostgresStore::Open(db.url(), options);
  ASSERT_FALSE(store.ok());
  EXPECT_NE(store.status().message().find("broken"), std::string::npos)
      << store.status().message();
  EXPECT_EQ(QueryOne(db.url(), "SELECT COUNT(*) FROM pg_tables WHERE tablename = 'half'"), "0");
  EXPECT_TRUE(PostgresStore::Open(db.url()).ok());  // the lock was released
}

TEST(PostgresStoreTest, GroupsCommitPipelinedAndConflictsTakeTheCarefulPath) {
  PgTestDatabase db;
  ABACUS_REQUIRE_PG_DATABASE(db);
  ManualClock clock;
  PostgresStoreOptions options;
  options.clock = &clock;
  auto store = PostgresStore::Open(db.url(), options);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  PostgresStore& pg = **store;
  // Every kind of op, conditional ones included, succeeds on the fast path.
  CommitResult result;
  ASSERT_TRUE(pg.Commit(WriteBatch()
                            .Put("queue", "q", "{}", 0)
                            .Put("queue", "q", R"({"v":2})", 1)
                            .Put("queue", "r", "{}")
                            .Delete("queue", "r", 1)
                            .Delete("queue", "missing")
                            .AppendEvent("queue", "q", "Created", "{}", clock.Now())
                            .AppendJournal("audit", "{}", clock.Now())
                            .PutMeta("k", "v"),
                        &result)
                  .ok());
  EXPECT_EQ(result.assigned, (std::vector<int64_t>{1, 2, 1, 0, 0, 1, 1, 0}));
  EXPECT_EQ(pg.pipelined_groups(), 1);
  EXPECT_EQ(pg.redone_groups(), 0);
  // Each failed check — create over an existing object, stale update, stale delete — sends the
  // group down the careful path, which reports the conflict with the version found.
  std::vector<WriteBatch> stale(3);
  stale[0].Put("queue", "q", "{}", 0);
  stale[1].Put("queue", "q", "{}", 1);
  stale[2].Delete("queue", "q", 1);
  for (const WriteBatch& batch : stale) {
    Status s = pg.Commit(batch);
    EXPECT_EQ(s.code(), StatusCode::kAborted) << s.ToString();
    EXPECT_NE(s.message().find("found version 2"), std::string::npos) << s.message();
  }
  EXPECT_EQ(pg.pipelined_groups(), 1);
  EXPECT_EQ(pg.redone_groups(), 3);
  EXPECT_EQ((*pg.Get("queue", "q"))->version, 2);
  Store& any = pg;  // the interface carries the default arguments
  EXPECT_EQ(any.Journal("audit")->size(), 1u);
}

TEST(PostgresStoreTest, DescribeAndErrorsNeverShowThePassword) {
  PgTestDatabase db;
  ABACUS_REQUIRE_PG_DATABASE(db);
  auto store = OpenStore(db.url());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_TRUE((*store)->Describe().starts_with("postgresql://abacus@")) << (*store)->Describe();
  EXPECT_NE((*store)->Describe().find(db.name()), std::string::npos);

  Status refused =
      OpenStore("postgresql://abacus:hunter2@127.0.0.1:1/x?connect_timeout=2").status();
  EXPECT_EQ(refused.code(), StatusCode::kUnavailable);
  EXPECT_EQ(refused.message().find("hunter2"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("127.0.0.1"), std::string::npos) << refused.message();
}

TEST(PostgresStoreTest, TwoStoresCommittingAtOnceKeepJournalsDenseAndSeqsUnique) {
  PgTestDatabase db;
  ABACUS_REQUIRE_PG_DATABASE(db);
  // Two stores on one database stand for two servers (HA): their transactions interleave.
  auto a = OpenStore(db.url());
  auto b = OpenStore(db.url());
  ASSERT_TRUE(a.ok() && b.ok());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (Store* store : {a->get(), b->get()}) {
    for (int t = 0; t < 3; ++t) {
      threads.emplace_back([&, store, t] {
        for (int i = 0; i < 100; ++i) {
          std::string key = store->Describe() + std::to_string(t) + "-" + std::to_string(i);
          if (!store
                   ->Commit(WriteBatch()
                                .AppendEvent("workload", "w", "Tick", "{}", SystemClock::Get().Now())
                                .AppendJournal("audit", "{}", SystemClock::Get().Now()))
                   .ok()) {
            ++failures;
          }
        }
      });
    }
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  auto journal = (*a)->Journal("audit");
  ASSERT_EQ(journal->size(), 600u);
  for (size_t i = 0; i < journal->size(); ++i) EXPECT_EQ((*journal)[i].seq, int64_t(i) + 1);
  auto events = (*b)->Events("workload", "w");
  ASSERT_EQ(events->size(), 600u);
  std::set<int64_t> seqs;
  for (const EventRecord& e : *events) seqs.insert(e.seq);
  EXPECT_EQ(seqs.size(), 600u);
  EXPECT_EQ(*seqs.rbegin(), 600);  // no gaps either: nothing was rolled back
}

// Fencing in a real race between two servers: A commits fenced batches from four threads while
// B takes the lease over. The takeover (an UPDATE of the lease row) waits for A's transactions
// holding the row FOR SHARE, and A's later ones see the new token: every commit A had
// acknowledged is ordered before the takeover, so what B counts right after taking the lease
// never grows, and A's commits from then on are refused as fenced.
TEST(PostgresStoreTest, ATakeoverOrdersAfterFencedCommitsInFlightAndRefusesLaterOnes) {
  PgTestDatabase db;
  ABACUS_REQUIRE_PG_DATABASE(db);
  auto a = OpenStore(db.url());
  auto b = OpenStore(db.url());
  ASSERT_TRUE(a.ok() && b.ok());
  auto held = (*a)->TryAcquireLease("scheduler", "a", "http://a", std::chrono::seconds(60));
  ASSERT_TRUE(held.ok() && held->held && held->token == 1) << held.status().ToString();
  GroupCommitter committer(**a);
  std::atomic<bool> stop{false};
  std::atomic<int> acked{0}, fenced{0}, other{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&] {
      while (!stop) {
        Status s = committer.Submit(
            WriteBatch().AppendJournal("a", "{}", SystemClock::Get().Now()).Fence({"scheduler", 1}));
        if (s.ok()) {
          ++acked;
        } else if (s.code() == StatusCode::kFailedPrecondition) {
          ++fenced;
        } else {
          ++other;
        }
      }
    });
  }
  auto wait_for = [](const std::function<bool()>& cond) {
    for (int i = 0; i < 3000 && !cond(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return cond();
  };
  ASSERT_TRUE(wait_for([&] { return acked >= 50; }));
  // A's lease lapses; B takes it over while A keeps committing.
  ASSERT_TRUE((*a)->TryAcquireLease("scheduler", "a", "http://a", std::chrono::milliseconds(1)).ok());
  LeaseState took;
  ASSERT_TRUE(wait_for([&] {
    auto r = (*b)->TryAcquireLease("scheduler", "b", "http://b", std::chrono::seconds(60));
    if (r.ok()) took = *r;
    return took.held;
  }));
  EXPECT_EQ(took.token, 2);
  const size_t at_takeover = (*b)->Journal("a")->size();
  EXPECT_TRUE(wait_for([&] { return fenced >= 20; }));
  stop = true;
  for (auto& t : writers) t.join();
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ((*b)->Journal("a")->size(), at_takeover);         // nothing of A's landed after it
  EXPECT_EQ(static_cast<size_t>(acked.load()), at_takeover);  // and every acknowledged one is there
}

// The fence's row lock: a fenced transaction that has checked its token holds the lease row FOR
// SHARE, so a takeover (an UPDATE of the row) waits until that transaction ends. Without the lock
// a deposed leader's check could pass just before the takeover and its COMMIT land after it.
TEST(PostgresStoreTest, ATakeoverWaitsForAFencedTransactionThatCheckedItsToken) {
  PgTestDatabase db;
  ABACUS_REQUIRE_PG_DATABASE(db);
  auto a = OpenStore(db.url());
  auto b = OpenStore(db.url());
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE((*a)->TryAcquireLease("scheduler", "a", "", std::chrono::milliseconds(1)).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(5));  // a's lease has lapsed, token 1 still
  auto fenced = PgConnection::Open(db.url(), "a-writer");
  ASSERT_TRUE(fenced.ok());
  ASSERT_TRUE((*fenced)->Exec("BEGIN").ok());
  ASSERT_TRUE((*fenced)->Query("SELECT abacus_check_fence('scheduler', 1)").ok());
  std::atomic<bool> returned{false};
  Result<LeaseState> took = LeaseState{};
  std::thread takeover([&] {
    took = (*b)->TryAcquireLease("scheduler", "b", "", std::chrono::seconds(60));
    returned = true;
  });
  bool waiting = false;
  for (int i = 0; i < 1000 && !waiting && !returned; ++i) {
    waiting = QueryOne(db.url(),
                       "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database()"
                       " AND wait_event_type = 'Lock'") == "1";
    if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(waiting);
  EXPECT_FALSE(returned.load());  // the takeover waits for the fenced transaction
  ASSERT_TRUE((*fenced)->Exec("COMMIT").ok());
  takeover.join();
  ASSERT_TRUE(took.ok()) << took.status().ToString();
  EXPECT_TRUE(took->held);
  EXPECT_EQ(took->token, 2);
}

TEST(PostgresStoreTest, ReconnectsAfterTheServerDropsItsConnections) {
  PgTestDatabase db;
  ABACUS_REQUIRE_PG_DATABASE(db);
  auto store = OpenStore(db.url());
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->Commit(WriteBatch().Put("node", "n1", "{}")).ok());
  ASSERT_TRUE((*store)->Get("node", "n1").ok());
  // An administrator (or a failover) terminates every session of this database.
  ASSERT_TRUE(testing_util::PgTestServer::Get()
                  .Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" +
                        db.name() + "' AND pid <> pg_backend_pid()")
                  .ok());
  // A commit on a dropped connection fails before anything was sent for COMMIT, so the store
  // may redo it on a new connection; at worst it reports Unavailable and the next one works.
  Status first = (*store)->Commit(WriteBatch().Put("node", "n2", "{}"));
  if (!first.ok()) {
    EXPECT_EQ(first.code(), StatusCode::kUnavailable) << first.ToString();
    ASSERT_TRUE((*store)->Commit(WriteBatch().Put("node", "n2", "{}")).ok());
  }
  // Reads reconnect and retry by themselves: they run outside transactions.
  auto read = (*store)->Count("node");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, 2);
  ASSERT_TRUE(testing_util::PgTestServer::Get()
                  .Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" +
                        db.name() + "' AND pid <> pg_backend_pid()")
                  .ok());
  auto again = (*store)->List("node");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->size(), 2u);
}

TEST(PostgresStoreCrashTest, AcknowledgedCommitsSurviveKill9) {
  PgTestDatabase db;
  ABACUS_REQUIRE_PG_DATABASE(db);
  testing_util::ExpectAcknowledgedCommitsSurviveKill9(db.url());
}

}  // namespace
}  // namespace abacus
