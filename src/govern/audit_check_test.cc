// CheckAuditChain: the chunked background check finds what the whole-chain Verify finds, on a
// real SQLite store tampered with behind the log's back, and reads nothing past its head.
#include "govern/audit_check.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>

#include "store/store.h"

namespace abacus::govern {
namespace {

AuditRecord Rec(int i) {
  AuditRecord r;
  r.actor = "alice";
  r.action = "create";
  r.object_kind = "workload";
  r.object_name = "nlp/llm/w" + std::to_string(i);
  r.tenant = "nlp";
  r.result = "ok";
  return r;
}

class AuditCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/abacus-audit-check-XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/abacus.db";
    auto store = OpenStore("sqlite://" + path_, {&clock_});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    auto log = AuditLog::Open(**store, clock_);
    ASSERT_TRUE(log.ok());
    for (int i = 1; i <= 25; ++i) ASSERT_TRUE((*log)->Append(Rec(i)).ok());
    head_ = (*log)->head();
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  void Sql(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    char* err = nullptr;
    EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
  }
  // Checks the chain in chunks of 4 (so that every chunk boundary is crossed) against `head`.
  AuditVerifyReport Check(const AuditHead& head) {
    auto store = OpenStore("sqlite://" + path_, {&clock_});
    EXPECT_TRUE(store.ok());
    auto log = AuditLog::Open(**store, clock_);
    EXPECT_TRUE(log.ok());
    auto report = CheckAuditChain(**log, head, 4);
    EXPECT_TRUE(report.ok()) << report.status().ToString();
    return *report;
  }

  ManualClock clock_;
  std::string dir_, path_;
  AuditHead head_;
};

TEST_F(AuditCheckTest, AnIntactChainChecksWhole) {
  auto r = Check(head_);
  EXPECT_TRUE(r.ok) << r.reason;
  EXPECT_EQ(r.checked, 25);
}

TEST_F(AuditCheckTest, EntriesAfterTheHeadAreNotRead) {
  auto r = Check(AuditHead{10, ""});  // an older head: only 1..10 count, and seq 10's hash must match
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_seq, 10);
  EXPECT_EQ(r.checked, 10);
}

TEST_F(AuditCheckTest, FindsAnEditedEntryInALaterChunk) {
  Sql("UPDATE journal SET json = replace(json, 'nlp/llm/w13', 'nlp/llm/zz') WHERE stream = 'audit' AND seq = 13");
  auto r = Check(head_);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_seq, 13);
}

TEST_F(AuditCheckTest, FindsAnEntryRemovedAtAChunkBoundary) {
  Sql("DELETE FROM journal WHERE stream = 'audit' AND seq = 9");  // the first of the third chunk
  auto r = Check(head_);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_seq, 9);
}

TEST_F(AuditCheckTest, FindsTheNewestEntriesRemoved) {
  Sql("DELETE FROM journal WHERE stream = 'audit' AND seq >= 24");
  auto r = Check(head_);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_seq, 24);
  EXPECT_NE(r.reason.find("removed"), std::string::npos) << r.reason;
}

TEST_F(AuditCheckTest, StopsWhenAskedBetweenChunks) {
  auto store = OpenStore("sqlite://" + path_, {&clock_});
  ASSERT_TRUE(store.ok());
  auto log = AuditLog::Open(**store, clock_);
  ASSERT_TRUE(log.ok());
  int asked = 0;
  auto r = CheckAuditChain(**log, head_, 4, [&] { return ++asked < 3; });
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(asked, 3);
}

}  // namespace
}  // namespace abacus::govern
