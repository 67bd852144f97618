// CopyStore and DigestStore across backends: SQLite -> PostgreSQL -> SQLite keeps every record,
// version, time and seq; a non-empty target is refused unless forced; digests see any change.
#include "store/store_copy.h"

#include <gtest/gtest.h>

#include "store/postgres/pg_test_server.h"
#include "store/store_test_util.h"

namespace abacus {
namespace {

using testing_util::PgTestDatabase;
using testing_util::ScratchDir;

// Fills `store` with a bit of everything: objects of three kinds at several versions, a
// deleted object, events of several objects, two journal streams, meta.
void Fill(Store& store, ManualClock& clock, int n) {
  for (int i = 0; i < n; ++i) {
    clock.Advance(std::chrono::milliseconds(3));
    std::string key = "w" + std::to_string(i);
    WriteBatch batch;
    batch.Put("workload", key, R"({"i":)" + std::to_string(i) + "}")
        .AppendEvent("workload", key, "Submitted", R"({"q":"a"})", clock.Now())
        .AppendJournal("audit", R"({"verb":"submit","key":")" + key + R"("})", clock.Now());
    if (i % 3 == 0) batch.Put("workload", key, R"({"i":)" + std::to_string(i) + R"(,"v":2})");
    if (i % 5 == 0) batch.AppendJournal("usage", R"({"gpu_s":)" + std::to_string(i) + "}", clock.Now());
    if (i % 7 == 0) batch.Put("node", "n" + std::to_string(i), R"({"gpus":8})");
    ASSERT_TRUE(store.Commit(batch).ok());
  }
  ASSERT_TRUE(store.Commit(WriteBatch().Put("queue", "gone", "{}")).ok());
  ASSERT_TRUE(store.Commit(WriteBatch().Delete("queue", "gone").Put("queue", "q", "{}")).ok());
  ASSERT_TRUE(store.Commit(WriteBatch().PutMeta("fencing_token", "12").PutMeta("a", "b")).ok());
}

TEST(StoreCopyTest, SqliteToPostgresToSqliteKeepsEveryRecord) {
  PgTestDatabase db;
  ABACUS_REQUIRE_PG_DATABASE(db);
  ScratchDir dir;
  ManualClock clock;
  auto sqlite = OpenStore("sqlite://" + dir.File("a.db"), StoreOptions{&clock});
  ASSERT_TRUE(sqlite.ok());
  Fill(**sqlite, clock, 250);
  auto source = DigestStore(**sqlite);
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  EXPECT_EQ(source->objects.at("workload"), 250);
  EXPECT_EQ(source->objects.at("node"), 36);
  EXPECT_EQ(source->objects.at("queue"), 1);
  EXPECT_EQ(source->events, 250);
  EXPECT_EQ(source->journal.at("audit"), 250);
  EXPECT_EQ(source->journal.at("usage"), 50);
  EXPECT_EQ(source->meta, 2);
  EXPECT_EQ(source->sha256.size(), 64u);

  auto pg = OpenStore(db.url(), StoreOptions{&clock});
  ASSERT_TRUE(pg.ok());
  std::vector<std::string> progress;
  CopyOptions options;
  options.chunk = 100;  // several transactions per kind
  options.progress = [&](const std::string& line) { progress.push_back(line); };
  auto copied = CopyStore(**sqlite, **pg, options);
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  EXPECT_EQ(copied->source, *source);
  EXPECT_EQ(copied->target, *source);
  EXPECT_FALSE(progress.empty());

  // The copy carries on numbering where the source stopped, and keeps versions.
  CommitResult result;
  ASSERT_TRUE((*pg)->Commit(WriteBatch()
                                .Put("workload", "w3", "{}", 2)
                                .AppendEvent("workload", "w3", "Admitted", "{}", clock.Now())
                                .AppendJournal("audit", "{}", clock.Now())
                                .AppendJournal("usage", "{}", clock.Now()),
                            &result)
                  .ok());
  EXPECT_EQ(result.assigned, (std::vector<int64_t>{3, 251, 251, 51}));

  // And back: PostgreSQL -> a fresh SQLite file.
  auto back = OpenStore("sqlite://" + dir.File("b.db"), StoreOptions{&clock});
  ASSERT_TRUE(back.ok());
  auto returned = CopyStore(**pg, **back, CopyOptions{});
  ASSERT_TRUE(returned.ok()) << returned.status().ToString();
  EXPECT_EQ(returned->target.events, 251);
  EXPECT_NE(returned->target.sha256, source->sha256);  // it holds the extra commit
  EXPECT_EQ(*(*back)->Events("workload", "w3"), *(*pg)->Events("workload", "w3"));
  EXPECT_EQ(*(*back)->List("workload"), *(*pg)->List("workload"));
}

TEST(StoreCopyTest, ANonEmptyTargetIsRefusedUnlessForced) {
  ScratchDir dir;
  ManualClock clock;
  auto from = OpenStore("memory://", StoreOptions{&clock});
  auto to = OpenStore("sqlite://" + dir.File("t.db"), StoreOptions{&clock});
  ASSERT_TRUE(from.ok() && to.ok());
  Fill(**from, clock, 20);
  ASSERT_TRUE((*to)->Commit(WriteBatch().Put("workload", "stale", "{}").PutMeta("x", "y")).ok());

  auto refused = CopyStore(**from, **to, CopyOptions{});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(refused.status().message().find("--force"), std::string::npos);
  EXPECT_TRUE((*(*to)->Get("workload", "stale")).has_value());  // untouched

  CopyOptions force;
  force.force = true;
  auto forced = CopyStore(**from, **to, force);
  ASSERT_TRUE(forced.ok()) << forced.status().ToString();
  EXPECT_FALSE((*(*to)->Get("workload", "stale")).has_value());
  EXPECT_FALSE((*(*to)->GetMeta("x")).has_value());
  EXPECT_EQ(forced->target, forced->source);
}

TEST(StoreCopyTest, DigestsSeeAnyChangeAndNameTheDifference) {
  ManualClock clock;
  auto a = OpenStore("memory://", StoreOptions{&clock});
  auto b = OpenStore("memory://", StoreOptions{&clock});
  ASSERT_TRUE(a.ok() && b.ok());
  Fill(**a, clock, 10);
  ASSERT_TRUE(CopyStore(**a, **b, CopyOptions{}).ok());
  auto before = DigestStore(**b);
  ASSERT_TRUE(before.ok());

  // Same counts, one document changed: only the checksum tells.
  StoreCopyAccess* access = (*b)->copy_access();
  ASSERT_TRUE((*b)->Commit(WriteBatch().Delete("queue", "q")).ok());
  StoreRecords changed;
  changed.objects = {{"queue", "q", 1, R"({"changed":true})", ToMicros(clock.Now())}};
  ASSERT_TRUE(access->Load(changed).ok());
  auto after = DigestStore(**b);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->objects, before->objects);
  EXPECT_NE(after->sha256, before->sha256);
  EXPECT_NE(DescribeDigestDifference(*before, *after).find("SHA-256"), std::string::npos);

  ASSERT_TRUE((*b)->Commit(WriteBatch().AppendJournal("usage", "{}", clock.Now())).ok());
  auto more = DigestStore(**b);
  EXPECT_NE(DescribeDigestDifference(*before, *more).find("journal usage: 2 vs 3"),
            std::string::npos)
      << DescribeDigestDifference(*before, *more);
}

}  // namespace
}  // namespace abacus
