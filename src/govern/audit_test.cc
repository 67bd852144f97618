#include "govern/audit.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>

#include "govern/sqlite_audit_fixture.h"
#include "store/forwarding_store.h"
#include "store/memory_store.h"
#include "store/storage_full.h"
#include "store/store.h"

namespace abacus::govern {
namespace {

AuditRecord Rec(std::string action, std::string name) {
  AuditRecord r;
  r.actor = "user alice";
  r.action = std::move(action);
  r.object_kind = "workload";
  r.object_name = std::move(name);
  r.tenant = "nlp";
  r.before = "";
  r.after = R"({"state":"Pending"})";
  r.result = "ok";
  r.request_id = "req-1";
  return r;
}

std::vector<AuditEntry> MakeChain(ManualClock& clock, int n) {
  AuditChain chain(clock);
  std::vector<AuditEntry> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(chain.Append(Rec("create", "nlp/llm/w" + std::to_string(i))));
    clock.Advance(std::chrono::seconds(1));
  }
  return out;
}

// A store whose commits fail for lack of space while `full` is set.
class FullStore final : public ForwardingStore {
 public:
  using ForwardingStore::ForwardingStore;
  void CommitGroup(std::span<const WriteBatch* const> batches, std::span<CommitResult* const> results,
                   std::span<Status> statuses) override {
    if (!full) return ForwardingStore::CommitGroup(batches, results, statuses);
    for (Status& st : statuses) st = StorageFullError("disk full (test)");
  }
  bool full = false;
};

// /readyz reads NotWriting: a full store makes the server not ready until a write succeeds
// again (the probe of 2026-12-07: ready while every write failed with 503).
TEST(AuditLogTest, AFullStoreIsNotWritingUntilACommitSucceeds) {
  ManualClock clock;
  InMemoryStore memory(clock);
  FullStore store(memory);
  auto log = AuditLog::Open(store, clock);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ((*log)->NotWriting(), "");
  store.full = true;
  auto refused = (*log)->Append(Rec("create", "a"));
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(IsStorageFull(refused.status())) << refused.status().ToString();
  EXPECT_NE((*log)->NotWriting().find("the store is full"), std::string::npos) << (*log)->NotWriting();
  store.full = false;
  ASSERT_TRUE((*log)->Append(Rec("create", "b")).ok());
  EXPECT_EQ((*log)->NotWriting(), "");
}

TEST(AuditChainTest, EntriesLinkAndVerify) {
  ManualClock clock;
  auto entries = MakeChain(clock, 5);
  EXPECT_EQ(entries[0].seq, 1);
  EXPECT_EQ(entries[0].prev_hash, GenesisHash());
  for (size_t i = 1; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i].seq, static_cast<int64_t>(i + 1));
    EXPECT_EQ(entries[i].prev_hash, entries[i - 1].hash);
    EXPECT_EQ(entries[i].hash.size(), 64u);
  }
  auto report = VerifyAudit(entries, AuditHead{5, entries.back().hash});
  EXPECT_TRUE(report.ok) << report.reason;
  EXPECT_EQ(report.checked, 5);
  EXPECT_TRUE(VerifyAudit({}).ok);
}

TEST(AuditJsonTest, TheWrittenTextIsTheEntryValueDumpedAndReadsBack) {
  // The text the journal stores is written directly (AuditEntryJsonText); it must be the bytes
  // the entry as a nlohmann value gives, keys in map order, with escapes and UTF-8 kept.
  ManualClock clock;
  AuditChain chain(clock);
  AuditRecord r = Rec("update", "nlp/llm/\"quoted\"\\ \xc3\xa9\t\x01");
  r.before = R"({"replicas":1})";
  r.request_id = "";
  AuditEntry e = chain.Append(r);
  nlohmann::json value;
  value["seq"] = e.seq;
  value["time"] = FormatTime(e.time);
  value["timeUs"] = ToMicros(e.time);
  value["actor"] = r.actor;
  value["action"] = r.action;
  value["object"] = {{"kind", r.object_kind}, {"name", r.object_name}};
  value["tenant"] = r.tenant;
  value["before"] = r.before;
  value["after"] = r.after;
  value["result"] = r.result;
  value["requestId"] = r.request_id;
  value["prevHash"] = e.prev_hash;
  value["hash"] = e.hash;
  EXPECT_EQ(AuditEntryJsonText(e), value.dump());
  auto back = AuditEntryFromJson(AuditEntryToJson(e));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->record.object_name, r.object_name);
  EXPECT_EQ(back->hash, e.hash);
  EXPECT_EQ(ComputeAuditHash(*back), e.hash);
}

TEST(AuditChainTest, CanonicalBytesAreUnambiguous) {
  ManualClock clock;
  AuditChain chain(clock);
  AuditRecord a = Rec("create", "x");
  a.before = "ab";
  a.after = "c";
  AuditRecord b = Rec("create", "x");
  b.before = "a";
  b.after = "bc";
  AuditEntry ea = chain.Seal(a);
  AuditEntry eb = chain.Seal(b);
  EXPECT_NE(CanonicalAuditBytes(ea), CanonicalAuditBytes(eb));
  EXPECT_NE(ea.hash, eb.hash);
}

TEST(AuditChainTest, DetectsAnEditedEntry) {
  ManualClock clock;
  auto entries = MakeChain(clock, 5);
  entries[2].record.result = "denied";  // seq 3
  auto report = VerifyAudit(entries);
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_seq, 3);
  EXPECT_NE(report.reason.find("entry edited"), std::string::npos) << report.reason;
}

TEST(AuditChainTest, DetectsAnEditedEntryWhoseHashWasRecomputed) {
  ManualClock clock;
  auto entries = MakeChain(clock, 5);
  entries[1].record.actor = "user mallory";
  entries[1].hash = ComputeAuditHash(entries[1]);
  auto report = VerifyAudit(entries);
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_seq, 3);  // seq 3 no longer links to seq 2
  EXPECT_NE(report.reason.find("prev_hash"), std::string::npos) << report.reason;
}

TEST(AuditChainTest, DetectsARemovedEntry) {
  ManualClock clock;
  auto entries = MakeChain(clock, 5);
  entries.erase(entries.begin() + 1);  // seq 2
  auto report = VerifyAudit(entries);
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_seq, 2);
  EXPECT_EQ(report.reason, "seq 3 follows seq 1 (entry 2 removed)");
}

TEST(AuditChainTest, DetectsRemovedEntriesRenumbered) {
  ManualClock clock;
  auto entries = MakeChain(clock, 5);
  entries.erase(entries.begin() + 1);
  for (size_t i = 0; i < entries.size(); ++i) entries[i].seq = static_cast<int64_t>(i + 1);
  auto report = VerifyAudit(entries);
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_seq, 2);
}

TEST(AuditChainTest, DetectsReorderedEntries) {
  ManualClock clock;
  auto entries = MakeChain(clock, 5);
  std::swap(entries[1], entries[2]);
  auto report = VerifyAudit(entries);
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_seq, 2);
  EXPECT_NE(report.reason.find("seq 3 follows seq 1"), std::string::npos) << report.reason;
}

TEST(AuditChainTest, DetectsAnInsertedEntry) {
  ManualClock clock;
  auto entries = MakeChain(clock, 5);
  // A forger seals a plausible entry after seq 2 and renumbers the rest.
  AuditChain forger(clock, AuditHead{2, entries[1].hash});
  AuditEntry fake = forger.Append(Rec("delete", "nlp/llm/evidence"));
  entries.insert(entries.begin() + 2, fake);
  for (size_t i = 3; i < entries.size(); ++i) entries[i].seq = static_cast<int64_t>(i + 1);
  auto report = VerifyAudit(entries);
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_seq, 4);
}

TEST(AuditChainTest, DetectsTruncationOnlyAgainstTheHead) {
  ManualClock clock;
  auto entries = MakeChain(clock, 5);
  AuditHead head{5, entries.back().hash};
  entries.pop_back();
  EXPECT_TRUE(VerifyAudit(entries).ok);  // a shorter chain is still a chain
  auto report = VerifyAudit(entries, head);
  EXPECT_FALSE(report.ok);
  EXPECT_EQ(report.first_bad_seq, 5);
  EXPECT_NE(report.reason.find("newest entries removed"), std::string::npos) << report.reason;
}

TEST(AuditChainTest, VerifiesASuffixFromALaterSeq) {
  ManualClock clock;
  auto entries = MakeChain(clock, 6);
  std::vector<AuditEntry> tail(entries.begin() + 3, entries.end());
  EXPECT_TRUE(VerifyAudit(tail, std::nullopt, 4).ok);
  tail[1].record.after = "forged";
  EXPECT_EQ(VerifyAudit(tail, std::nullopt, 4).first_bad_seq, 5);
}

TEST(AuditChainTest, JsonLinesRoundTripAndDetectTamperingAfterImport) {
  ManualClock clock;
  clock.Advance(std::chrono::microseconds(123));  // sub-millisecond time must survive export
  auto entries = MakeChain(clock, 3);
  entries[1].record.before = "line1\nline2 \"quoted\" \xe4\xb8\xad";
  entries[1].hash = ComputeAuditHash(entries[1]);
  entries[2].prev_hash = entries[1].hash;
  entries[2].hash = ComputeAuditHash(entries[2]);
  std::string text = ExportAuditJsonLines(entries);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
  auto back = ImportAuditJsonLines(text + "\n");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, entries);
  EXPECT_TRUE(VerifyAudit(*back).ok);

  std::string edited = text;
  edited.replace(edited.find("nlp/llm/w2"), 10, "nlp/llm/w9");
  auto tampered = ImportAuditJsonLines(edited);
  ASSERT_TRUE(tampered.ok());
  EXPECT_EQ(VerifyAudit(*tampered).first_bad_seq, 3);

  auto bad = ImportAuditJsonLines(text + "{not json}\n");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 4"), std::string::npos);
}

TEST(AuditChainTest, AdvanceRejectsAnEntryThatDoesNotFollow) {
  ManualClock clock;
  AuditChain chain(clock);
  AuditEntry a = chain.Seal(Rec("create", "a"));
  AuditEntry b = chain.Seal(Rec("create", "b"));  // same seq as a
  EXPECT_TRUE(chain.Advance(a).ok());
  EXPECT_EQ(chain.Advance(b).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(chain.head().seq, 1);
}

TEST(AuditLogTest, AppendsToTheJournalWithTheChangeAndResumesAfterReopen) {
  ManualClock clock;
  auto store = OpenStore("memory://", {&clock});
  ASSERT_TRUE(store.ok());
  auto log = AuditLog::Open(**store, clock);
  ASSERT_TRUE(log.ok());
  WriteBatch change;
  change.Put("queue", "nlp-train", R"({"name":"nlp-train"})");
  auto e1 = (*log)->Commit(std::move(change), Rec("quota-change", "nlp-train"));
  ASSERT_TRUE(e1.ok()) << e1.status().ToString();
  EXPECT_EQ(e1->seq, 1);
  auto q = (*store)->Get("queue", "nlp-train");
  ASSERT_TRUE(q.ok() && q->has_value());  // the change committed with its entry
  ASSERT_TRUE((*log)->Append(Rec("preempt", "nlp/llm/w1")).ok());

  // A failed change writes no entry and leaves the chain where it was.
  WriteBatch conflicting;
  conflicting.Put("queue", "nlp-train", "{}", /*expected_version=*/7);
  EXPECT_FALSE((*log)->Commit(std::move(conflicting), Rec("quota-change", "nlp-train")).ok());
  EXPECT_EQ((*log)->head().seq, 2);

  auto again = AuditLog::Open(**store, clock);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->head(), (*log)->head());
  auto e3 = (*again)->Append(Rec("cancel", "nlp/llm/w1"));
  ASSERT_TRUE(e3.ok());
  EXPECT_EQ(e3->seq, 3);
  auto entries = (*again)->Read();
  ASSERT_TRUE(entries.ok());
  ASSERT_EQ(entries->size(), 3u);
  EXPECT_EQ((*entries)[2], *e3);
  auto tail = (*again)->Read(1, 1);
  ASSERT_TRUE(tail.ok());
  ASSERT_EQ(tail->size(), 1u);
  EXPECT_EQ((*tail)[0].seq, 2);
  auto report = (*again)->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok) << report->reason;
  EXPECT_EQ(report->checked, 3);
}

// Tampers with a real SQLite store behind the log's back, as an operator with file access could.
class SqliteAuditTest : public SqliteAuditFixture {
 protected:
  void SetUp() override {
    SetUpLog(4, [](int i) { return Rec("create", "nlp/llm/w" + std::to_string(i)); }, std::chrono::seconds(1));
  }
  AuditVerifyReport VerifyNow() {
    OpenedLog opened = OpenLog();
    if (opened.log == nullptr) return {};
    auto report = opened.log->Verify();
    EXPECT_TRUE(report.ok());
    return report.ok() ? *report : AuditVerifyReport{};
  }
};

TEST_F(SqliteAuditTest, IntactLogVerifies) { EXPECT_TRUE(VerifyNow().ok); }

TEST_F(SqliteAuditTest, DetectsAnEditedRow) {
  Sql("UPDATE journal SET json = replace(json, 'nlp/llm/w2', 'nlp/llm/zz') WHERE stream = 'audit' AND seq = 2");
  auto r = VerifyNow();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_seq, 2);
}

TEST_F(SqliteAuditTest, DetectsADeletedRow) {
  Sql("DELETE FROM journal WHERE stream = 'audit' AND seq = 3");
  auto r = VerifyNow();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_seq, 3);
}

TEST_F(SqliteAuditTest, DetectsDeletedNewestRows) {
  Sql("DELETE FROM journal WHERE stream = 'audit' AND seq >= 3");
  auto r = VerifyNow();
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.first_bad_seq, 3);
  EXPECT_NE(r.reason.find("newest entries removed"), std::string::npos) << r.reason;
}

// Issue 20: a stream that no longer ends at the running log's head (its newest row deleted)
// refused every write with an error after committing it. Now nothing is stored.
TEST_F(SqliteAuditTest, ARunningLogWhoseNewestRowWasDeletedStoresNothing) {
  auto store = OpenStore("sqlite://" + path_, {&clock_});
  ASSERT_TRUE(store.ok());
  auto log = AuditLog::Open(**store, clock_);
  ASSERT_TRUE(log.ok());
  Sql("DELETE FROM journal WHERE stream = 'audit' AND seq = 4");
  WriteBatch change;
  change.Put("workload", "wl-1", R"({"id":"wl-1"})");
  auto e = (*log)->Commit(std::move(change), Rec("create", "nlp/llm/w5"));
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kInternal);
  EXPECT_NE(e.status().message().find("out of step"), std::string::npos) << e.status().ToString();
  EXPECT_EQ((*log)->OutOfStep(), e.status().message());  // for good: /readyz reads it
  EXPECT_FALSE((*store)->Get("workload", "wl-1")->has_value());
  EXPECT_EQ((*store)->Journal("audit")->size(), 3u);
  EXPECT_EQ((*log)->head().seq, 4);
  auto many = (*log)->CommitMany(WriteBatch().Put("workload", "wl-2", "{}"), {Rec("create", "a"), Rec("create", "b")});
  EXPECT_EQ(many.status().code(), StatusCode::kInternal);
  EXPECT_FALSE((*store)->Get("workload", "wl-2")->has_value());
  EXPECT_NE((*log)->OutOfStep().find("out of step"), std::string::npos);
}

// Two logs on one store (two servers on one data folder): the second one's writes fail whole.
TEST_F(SqliteAuditTest, ASecondWriterOnTheSameStoreStoresNothing) {
  auto a_store = OpenStore("sqlite://" + path_, {&clock_});
  auto b_store = OpenStore("sqlite://" + path_, {&clock_});
  ASSERT_TRUE(a_store.ok() && b_store.ok());
  auto a = AuditLog::Open(**a_store, clock_);
  auto b = AuditLog::Open(**b_store, clock_);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE((*a)->Commit(WriteBatch().Put("workload", "wl-a", "{}"), Rec("create", "a")).ok());
  auto refused = (*b)->Commit(WriteBatch().Put("workload", "wl-b", "{}"), Rec("create", "b"));
  EXPECT_EQ(refused.status().code(), StatusCode::kInternal) << refused.status().ToString();
  EXPECT_FALSE((*a_store)->Get("workload", "wl-b")->has_value());
  // A refused batch of the caller's own (a version conflict) keeps its own error.
  auto conflict = (*a)->Commit(WriteBatch().Put("workload", "wl-a", "{}", 9), Rec("create", "a"));
  EXPECT_EQ(conflict.status().code(), StatusCode::kAborted) << conflict.status().ToString();
  EXPECT_TRUE(VerifyNow().ok);
}

TEST(AuditLogTest, CommitManySealsSeveralEntriesInOneCommit) {
  ManualClock clock;
  auto store = OpenStore("memory://", {&clock});
  ASSERT_TRUE(store.ok());
  auto log = AuditLog::Open(**store, clock);
  ASSERT_TRUE(log.ok());
  ASSERT_TRUE((*log)->Append(Rec("create", "a")).ok());
  WriteBatch change;
  change.Put("queue", "q", R"({"name":"q"})");
  auto many = (*log)->CommitMany(std::move(change), {Rec("create", "b"), Rec("cancel", "c"), Rec("admit", "d")});
  ASSERT_TRUE(many.ok()) << many.status().ToString();
  ASSERT_EQ(many->size(), 3u);
  EXPECT_EQ((*many)[0].seq, 2);
  EXPECT_EQ((*many)[2].seq, 4);
  EXPECT_EQ((*many)[1].prev_hash, (*many)[0].hash);
  EXPECT_EQ((*log)->head().seq, 4);
  // A failed group writes nothing and leaves the chain where it was.
  WriteBatch conflicting;
  conflicting.Put("queue", "q", "{}", /*expected_version=*/9);
  EXPECT_FALSE((*log)->CommitMany(std::move(conflicting), {Rec("create", "e"), Rec("create", "f")}).ok());
  EXPECT_EQ((*log)->head().seq, 4);
  ASSERT_TRUE((*log)->Append(Rec("create", "g")).ok());
  auto report = (*log)->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->ok) << report->reason;
  EXPECT_EQ(report->checked, 5);
}

TEST(AuditLogTest, ContinuesAfterEntriesWrittenBeforeTheChain) {
  ManualClock clock;
  auto store = OpenStore("memory://", {&clock});
  ASSERT_TRUE(store.ok());
  ASSERT_TRUE((*store)->Commit(WriteBatch().AppendJournal("audit", R"({"action":"apply"})", clock.Now())).ok());
  auto log = AuditLog::Open(**store, clock);
  ASSERT_TRUE(log.ok());
  auto e = (*log)->Append(Rec("create", "a"));
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  EXPECT_EQ(e->seq, 2);
  auto report = (*log)->Verify();
  ASSERT_TRUE(report.ok());
  EXPECT_FALSE(report->ok);
  EXPECT_EQ(report->first_bad_seq, 1);
}

}  // namespace
}  // namespace abacus::govern
