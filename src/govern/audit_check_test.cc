// CheckAuditChain: the chunked background check finds what the whole-chain Verify finds, on a
// real SQLite store tampered with behind the log's back, and reads nothing past its head.
#include "govern/audit_check.h"

#include <gtest/gtest.h>

#include "govern/sqlite_audit_fixture.h"

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

class AuditCheckTest : public SqliteAuditFixture {
 protected:
  void SetUp() override { SetUpLog(25, Rec); }
  // Checks the chain in chunks of 4 (so that every chunk boundary is crossed) against `head`.
  AuditVerifyReport Check(const AuditHead& head) {
    OpenedLog opened = OpenLog();
    if (opened.log == nullptr) return {};
    auto report = CheckAuditChain(*opened.log, head, 4);
    EXPECT_TRUE(report.ok()) << report.status().ToString();
    return report.ok() ? *report : AuditVerifyReport{};
  }
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
  OpenedLog opened = OpenLog();
  ASSERT_NE(opened.log, nullptr);
  int asked = 0;
  auto r = CheckAuditChain(*opened.log, head_, 4, [&] { return ++asked < 3; });
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(asked, 3);
}

}  // namespace
}  // namespace abacus::govern
