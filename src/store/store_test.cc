// The behaviour every Store backend must share, run against SqliteStore (file and in-memory),
// PostgresStore (a fresh database on a throwaway server, see postgres/pg_test_server.h) and
// InMemoryStore; then GroupCommitter over each of them.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "store/storage_full.h"
#include "store/group_commit.h"
#include "store/memory_store.h"
#include "store/postgres/pg_test_server.h"
#include "store/sqlite/sqlite_store.h"
#include "store/store.h"
#include "store/store_copy.h"
#include "store/store_test_util.h"

namespace abacus {
namespace {

using testing_util::GatedStore;
using testing_util::PgTestDatabase;
using testing_util::ScratchDir;

// Each backend returns the URL of a fresh, empty store.
struct SqliteFileBackend {
  static std::string Url(const ScratchDir& dir, const PgTestDatabase*) {
    return "sqlite://" + dir.File("abacus.db");
  }
};
struct SqliteMemoryBackend {
  static std::string Url(const ScratchDir&, const PgTestDatabase*) { return "sqlite://:memory:"; }
};
struct PostgresBackend {
  static std::string Url(const ScratchDir&, const PgTestDatabase* db) { return db->url(); }
};
struct InMemoryBackend {
  static std::string Url(const ScratchDir&, const PgTestDatabase*) { return "memory://"; }
};

template <typename Backend>
class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    if constexpr (std::is_same_v<Backend, PostgresBackend>) {
      pg_ = std::make_unique<PgTestDatabase>();
      ABACUS_REQUIRE_PG_DATABASE(*pg_);
    }
    url_ = Backend::Url(dir_, pg_.get());
    auto store = OpenStore(url_, StoreOptions{&clock_});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }

  Store& store() { return *store_; }

  ScratchDir dir_;
  ManualClock clock_;
  std::unique_ptr<PgTestDatabase> pg_;  // outlives the store, which holds connections to it
  std::string url_;
  std::unique_ptr<Store> store_;
};

using Backends =
    ::testing::Types<SqliteFileBackend, SqliteMemoryBackend, PostgresBackend, InMemoryBackend>;
class BackendNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    if (std::is_same_v<T, SqliteFileBackend>) return "SqliteFile";
    if (std::is_same_v<T, SqliteMemoryBackend>) return "SqliteMemory";
    if (std::is_same_v<T, PostgresBackend>) return "Postgres";
    return "InMemory";
  }
};
TYPED_TEST_SUITE(StoreTest, Backends, BackendNames);

std::string Doc(std::string_view name) { return R"({"name":")" + std::string(name) + R"("})"; }

TYPED_TEST(StoreTest, PutGetListCountDelete) {
  Store& store = this->store();
  CommitResult result;
  ASSERT_TRUE(store
                  .Commit(WriteBatch()
                              .Put("queue", "train", Doc("train"))
                              .Put("queue", "infer", Doc("infer"))
                              .Put("node", "n1", Doc("n1")),
                          &result)
                  .ok());
  EXPECT_EQ(result.assigned, (std::vector<int64_t>{1, 1, 1}));

  auto got = store.Get("queue", "train");
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ(**got, (ObjectRecord{"queue", "train", 1, Doc("train"), ToMicros(this->clock_.Now())}));
  EXPECT_FALSE(store.Get("queue", "missing")->has_value());
  EXPECT_FALSE(store.Get("node", "train")->has_value());

  auto queues = store.List("queue");
  ASSERT_TRUE(queues.ok());
  ASSERT_EQ(queues->size(), 2u);
  EXPECT_EQ((*queues)[0].key, "infer");  // ordered by key
  EXPECT_EQ((*queues)[1].key, "train");
  EXPECT_EQ(*store.Count("queue"), 2);
  EXPECT_EQ(*store.Count("node"), 1);
  EXPECT_EQ(*store.Count("pool"), 0);
  EXPECT_TRUE(store.List("pool")->empty());

  this->clock_.Advance(std::chrono::seconds(5));
  ASSERT_TRUE(store.Commit(WriteBatch().Put("queue", "train", Doc("train2")), &result).ok());
  EXPECT_EQ(result.assigned, std::vector<int64_t>{2});
  got = store.Get("queue", "train");
  EXPECT_EQ((*got)->version, 2);
  EXPECT_EQ((*got)->json, Doc("train2"));
  EXPECT_EQ((*got)->updated_us, ToMicros(this->clock_.Now()));

  ASSERT_TRUE(store.Commit(WriteBatch().Delete("queue", "infer")).ok());
  EXPECT_FALSE(store.Get("queue", "infer")->has_value());
  EXPECT_EQ(*store.Count("queue"), 1);
  // Deleting what is not there, without an expected version, is a no-op.
  EXPECT_TRUE(store.Commit(WriteBatch().Delete("queue", "infer")).ok());
  // A re-created object starts again at version 1.
  ASSERT_TRUE(store.Commit(WriteBatch().Put("queue", "infer", Doc("again")), &result).ok());
  EXPECT_EQ(result.assigned, std::vector<int64_t>{1});
}

TYPED_TEST(StoreTest, ExpectedVersionsDetectLostUpdates) {
  Store& store = this->store();
  ASSERT_TRUE(store.Commit(WriteBatch().Put("workload", "w1", Doc("a"), 0)).ok());
  Status again = store.Commit(WriteBatch().Put("workload", "w1", Doc("b"), 0));
  EXPECT_EQ(again.code(), StatusCode::kAborted) << again.ToString();
  EXPECT_NE(again.message().find("found version 1"), std::string::npos) << again.message();

  ASSERT_TRUE(store.Commit(WriteBatch().Put("workload", "w1", Doc("b"), 1)).ok());
  Status stale = store.Commit(WriteBatch().Put("workload", "w1", Doc("c"), 1));
  EXPECT_EQ(stale.code(), StatusCode::kAborted);
  EXPECT_EQ((*store.Get("workload", "w1"))->json, Doc("b"));

  Status missing = store.Commit(WriteBatch().Put("workload", "w2", Doc("x"), 3));
  EXPECT_EQ(missing.code(), StatusCode::kAborted);
  EXPECT_NE(missing.message().find("not found"), std::string::npos) << missing.message();

  EXPECT_EQ(store.Commit(WriteBatch().Delete("workload", "w1", 1)).code(), StatusCode::kAborted);
  EXPECT_EQ(store.Commit(WriteBatch().Delete("workload", "w9", 1)).code(), StatusCode::kAborted);
  EXPECT_TRUE(store.Commit(WriteBatch().Delete("workload", "w1", 2)).ok());
  EXPECT_FALSE(store.Get("workload", "w1")->has_value());
}

TYPED_TEST(StoreTest, OpsOfABatchApplyInOrder) {
  Store& store = this->store();
  CommitResult result;
  ASSERT_TRUE(store
                  .Commit(WriteBatch()
                              .Put("flavor", "a100", Doc("v1"), 0)
                              .Put("flavor", "a100", Doc("v2"), 1)
                              .Delete("flavor", "a100", 2)
                              .Put("flavor", "a100", Doc("v3"), 0),
                          &result)
                  .ok());
  EXPECT_EQ(result.assigned, (std::vector<int64_t>{1, 2, 0, 1}));
  EXPECT_EQ((*store.Get("flavor", "a100"))->json, Doc("v3"));
}

TYPED_TEST(StoreTest, TheBatchHandsBackWhatItAssignedToEachNamedOp) {
  Store& store = this->store();
  ASSERT_TRUE(store.Commit(WriteBatch().Put("queue", "q", Doc("q0"))).ok());
  WriteBatch batch;
  batch.Put("queue", "q", Doc("q1"), 1);
  const OpRef queue = batch.LastOp();
  batch.AppendEvent("queue", "q", "Changed", Doc("e"), this->clock_.Now());
  const OpRef event = batch.AppendEvent("queue", "q", "Changed", Doc("e"), this->clock_.Now()).LastOp();
  batch.Put("pool", "p", Doc("p"));
  const OpRef pool = batch.LastOp();
  batch.Delete("pool", "p", 1);
  const OpRef removed = batch.LastOp();
  CommitResult result;
  ASSERT_TRUE(store.Commit(batch, &result).ok());
  EXPECT_EQ(result.AssignedTo(queue), 2);
  EXPECT_EQ(result.AssignedTo(event), result.AssignedTo(OpRef{1}) + 1);
  EXPECT_EQ(result.AssignedTo(pool), 1);
  EXPECT_EQ(result.AssignedTo(removed), 0);
  EXPECT_EQ(CommitResult{}.AssignedTo(queue), 0);  // nothing assigned: a failed commit
}

TYPED_TEST(StoreTest, AFailingBatchAppliesNothing) {
  Store& store = this->store();
  ASSERT_TRUE(store.Commit(WriteBatch().Put("pool", "p", Doc("p"))).ok());
  CommitResult result;
  Status s = store.Commit(WriteBatch()
                              .Put("pool", "p", Doc("changed"))
                              .Put("pool", "q", Doc("q"))
                              .Delete("pool", "p")
                              .AppendEvent("pool", "p", "Changed", "{}", this->clock_.Now())
                              .AppendJournal("audit", "{}", this->clock_.Now())
                              .PutMeta("owner", "me")
                              .Put("pool", "r", Doc("r"), 7),
                          &result);
  EXPECT_EQ(s.code(), StatusCode::kAborted);
  EXPECT_TRUE(result.assigned.empty());
  auto p = store.Get("pool", "p");
  ASSERT_TRUE(p->has_value());
  EXPECT_EQ((*p)->json, Doc("p"));
  EXPECT_EQ((*p)->version, 1);
  EXPECT_FALSE(store.Get("pool", "q")->has_value());
  EXPECT_TRUE(store.Events("pool", "p")->empty());
  EXPECT_TRUE(store.Journal("audit")->empty());
  EXPECT_FALSE(store.GetMeta("owner")->has_value());

  // Sequence numbers of a rolled-back batch are not consumed.
  ASSERT_TRUE(store
                  .Commit(WriteBatch()
                              .AppendEvent("pool", "p", "Changed", "{}", this->clock_.Now())
                              .AppendJournal("audit", "{}", this->clock_.Now()),
                          &result)
                  .ok());
  EXPECT_EQ(result.assigned, (std::vector<int64_t>{1, 1}));
}

TYPED_TEST(StoreTest, MalformedBatchesAreRejected) {
  Store& store = this->store();
  const Time now = this->clock_.Now();
  EXPECT_EQ(store.Commit(WriteBatch().Put("", "k", "{}")).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store.Commit(WriteBatch().Put("k", "", "{}")).code(), StatusCode::kInvalidArgument);
  Status bad_json = store.Commit(WriteBatch().Put("queue", "ok", "{}").Put("queue", "q", "{nope"));
  EXPECT_EQ(bad_json.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_json.message().find("op 1"), std::string::npos) << bad_json.message();
  EXPECT_EQ(store.Commit(WriteBatch().AppendEvent("w", "k", "", "{}", now)).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store.Commit(WriteBatch().AppendJournal("", "{}", now)).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store.Commit(WriteBatch().AppendJournal("usage", "", now)).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(store.Commit(WriteBatch().Put("queue", "q", "{}", -1)).code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(store.Get("queue", "ok")->has_value());
  EXPECT_TRUE(store.Commit(WriteBatch()).ok());  // an empty batch commits nothing
}

TYPED_TEST(StoreTest, JsonValuesAreStoredAsTheirTextWithoutAParseOnTheCommitPath) {
  Store& store = this->store();
  const Time now = this->clock_.Now();
  const nlohmann::json doc = {{"name", "q"}, {"weight", 3}, {"labels", {{"team", "ml"}}}};
  WriteBatch batch;
  batch.PutJson("queue", "q", doc, 0)
      .AppendEventJson("queue", "q", "Created", {{"by", "test"}}, now)
      .AppendJournalJson("usage", {{"gpuSeconds", 12}}, now);
  for (const WriteOp& op : batch.ops()) {
    std::visit([](const auto& o) {
      if constexpr (requires { o.json_checked; }) {
        EXPECT_TRUE(o.json_checked);
      }
    }, op);
  }
  ASSERT_TRUE(store.Commit(batch).ok());
  auto got = store.Get("queue", "q");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->json, doc.dump());
  auto events = store.Events("queue", "q", 0, 10);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ(events->front().json, R"({"by":"test"})");
  auto journal = store.Journal("usage", 0, 10);
  ASSERT_TRUE(journal.ok());
  ASSERT_EQ(journal->size(), 1u);
  EXPECT_EQ(journal->front().json, R"({"gpuSeconds":12})");
  // Text documents are still checked, even next to JSON values.
  EXPECT_EQ(store.Commit(WriteBatch().PutJson("queue", "r", doc).Put("queue", "s", "{nope")).code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(store.Get("queue", "r")->has_value());
}

TYPED_TEST(StoreTest, EventsComeBackInOrderPerObject) {
  Store& store = this->store();
  const char* types[] = {"Submitted", "Admitted", "Running", "Succeeded"};
  for (const char* type : types) {
    this->clock_.Advance(std::chrono::seconds(1));
    ASSERT_TRUE(store
                    .Commit(WriteBatch()
                                .AppendEvent("workload", "w1", type, R"({"n":1})", this->clock_.Now())
                                .AppendEvent("workload", "w2", type, R"({"n":2})", this->clock_.Now()))
                    .ok());
  }
  auto events = store.Events("workload", "w1");
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 4u);
  for (size_t i = 0; i < events->size(); ++i) {
    const EventRecord& e = (*events)[i];
    EXPECT_EQ(e.type, types[i]);
    EXPECT_EQ(e.object_kind, "workload");
    EXPECT_EQ(e.object_key, "w1");
    EXPECT_EQ(e.json, R"({"n":1})");
    if (i > 0) {
      EXPECT_GT(e.seq, (*events)[i - 1].seq);
      EXPECT_GT(e.time_us, (*events)[i - 1].time_us);
    }
  }
  auto page = store.Events("workload", "w1", (*events)[0].seq, 2);
  ASSERT_EQ(page->size(), 2u);
  EXPECT_EQ((*page)[0].type, "Admitted");
  EXPECT_EQ((*page)[1].type, "Running");
  EXPECT_TRUE(store.Events("workload", "w1", (*events)[3].seq)->empty());
  EXPECT_TRUE(store.Events("workload", "w3")->empty());
  EXPECT_EQ(store.Events("workload", "w2")->size(), 4u);
}

// An entry that must get a given seq (the audit chain's) commits with its batch only when the
// stream is where the writer believes; otherwise nothing of the batch is stored.
TYPED_TEST(StoreTest, JournalEntryAtAnExpectedSeqCommitsOnlyInStep) {
  Store& store = this->store();
  const Time now = this->clock_.Now();
  ASSERT_TRUE(store.Commit(WriteBatch().AppendJournalJsonAt("audit", {{"a", 1}}, now, 1)).ok());
  CommitResult result;
  ASSERT_TRUE(store.Commit(WriteBatch().Put("queue", "q1", "{}").AppendJournalJsonAt("audit", {{"a", 2}}, now, 2),
                           &result)
                  .ok());
  EXPECT_EQ(result.assigned[1], 2);
  // A writer one entry behind (a second server, a deleted row): refused, nothing stored.
  Status behind = store.Commit(WriteBatch().Put("queue", "q2", "{}").AppendJournalJsonAt("audit", {{"a", 9}}, now, 2));
  EXPECT_EQ(behind.code(), StatusCode::kAborted) << behind.ToString();
  EXPECT_FALSE(store.Get("queue", "q2")->has_value());
  Status ahead = store.Commit(WriteBatch().Put("queue", "q3", "{}").AppendJournalJsonAt("audit", {{"a", 9}}, now, 5));
  EXPECT_EQ(ahead.code(), StatusCode::kAborted) << ahead.ToString();
  EXPECT_FALSE(store.Get("queue", "q3")->has_value());
  // In a group, only the refused batch fails; the stream's numbering is untouched by it.
  WriteBatch bad = WriteBatch().Put("queue", "q4", "{}").AppendJournalJsonAt("audit", {{"a", 9}}, now, 7);
  WriteBatch good = WriteBatch().Put("queue", "q5", "{}").AppendJournalJsonAt("audit", {{"a", 3}}, now, 3);
  const WriteBatch* batches[] = {&bad, &good};
  CommitResult* results[] = {nullptr, nullptr};
  Status statuses[2];
  store.CommitGroup(batches, results, statuses);
  EXPECT_EQ(statuses[0].code(), StatusCode::kAborted) << statuses[0].ToString();
  EXPECT_TRUE(statuses[1].ok()) << statuses[1].ToString();
  EXPECT_FALSE(store.Get("queue", "q4")->has_value());
  EXPECT_TRUE(store.Get("queue", "q5")->has_value());
  auto audit = store.Journal("audit");
  ASSERT_TRUE(audit.ok());
  ASSERT_EQ(audit->size(), 3u);
  EXPECT_EQ((*audit)[2].seq, 3);
  EXPECT_EQ((*audit)[2].json, R"({"a":3})");
  EXPECT_EQ(store.Commit(WriteBatch().AppendJournalJsonAt("audit", {{"a", 0}}, now, 0)).code(),
            StatusCode::kInvalidArgument);
}

TYPED_TEST(StoreTest, JournalStreamsNumberTheirEntriesDensely) {
  Store& store = this->store();
  for (int i = 1; i <= 3; ++i) {
    this->clock_.Advance(std::chrono::minutes(1));
    WriteBatch batch;
    batch.AppendJournal("usage", R"({"i":)" + std::to_string(i) + "}", this->clock_.Now());
    if (i != 2) batch.AppendJournal("audit", R"({"a":)" + std::to_string(i) + "}", this->clock_.Now());
    ASSERT_TRUE(store.Commit(batch).ok());
  }
  auto usage = store.Journal("usage");
  ASSERT_TRUE(usage.ok());
  ASSERT_EQ(usage->size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ((*usage)[i].stream, "usage");
    EXPECT_EQ((*usage)[i].seq, i + 1);
    EXPECT_EQ((*usage)[i].json, R"({"i":)" + std::to_string(i + 1) + "}");
  }
  auto audit = store.Journal("audit");
  ASSERT_EQ(audit->size(), 2u);
  EXPECT_EQ((*audit)[1].seq, 2);
  EXPECT_EQ((*audit)[1].json, R"({"a":3})");
  auto tail = store.Journal("usage", 1, 1);
  ASSERT_EQ(tail->size(), 1u);
  EXPECT_EQ((*tail)[0].seq, 2);
  EXPECT_TRUE(store.Journal("nothing")->empty());
}

TYPED_TEST(StoreTest, MetaHoldsStoreLevelSettings) {
  Store& store = this->store();
  EXPECT_FALSE(store.GetMeta("fencing_token")->has_value());
  ASSERT_TRUE(store.Commit(WriteBatch().PutMeta("fencing_token", "7")).ok());
  ASSERT_TRUE(store.Commit(WriteBatch().PutMeta("fencing_token", "8")).ok());
  EXPECT_EQ(**store.GetMeta("fencing_token"), "8");
}

TYPED_TEST(StoreTest, CommitGroupFailsOnlyTheConflictingBatch) {
  Store& store = this->store();
  ASSERT_TRUE(store.Commit(WriteBatch().Put("queue", "taken", Doc("x"))).ok());
  WriteBatch a, b, c, bad_json;
  a.Put("queue", "a", Doc("a")).AppendEvent("queue", "a", "Created", "{}", this->clock_.Now());
  b.Put("queue", "b", Doc("b")).AppendEvent("queue", "b", "Created", "{}", this->clock_.Now());
  b.Put("queue", "taken", Doc("y"), 0);  // conflicts
  c.Put("queue", "c", Doc("c")).AppendEvent("queue", "c", "Created", "{}", this->clock_.Now());
  bad_json.Put("queue", "d", "not json");
  const WriteBatch* batches[] = {&a, &b, &c, &bad_json};
  CommitResult ra, rb, rc;
  CommitResult* results[] = {&ra, &rb, &rc, nullptr};
  Status statuses[4];
  store.CommitGroup(batches, results, statuses);
  EXPECT_TRUE(statuses[0].ok()) << statuses[0].ToString();
  EXPECT_EQ(statuses[1].code(), StatusCode::kAborted);
  EXPECT_TRUE(statuses[2].ok()) << statuses[2].ToString();
  EXPECT_EQ(statuses[3].code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ra.assigned, (std::vector<int64_t>{1, 1}));
  EXPECT_TRUE(rb.assigned.empty());
  EXPECT_EQ(rc.assigned, (std::vector<int64_t>{1, 2}));  // b's event seq was rolled back
  EXPECT_TRUE(store.Get("queue", "a")->has_value());
  EXPECT_FALSE(store.Get("queue", "b")->has_value());
  EXPECT_TRUE(store.Events("queue", "b")->empty());
  EXPECT_EQ((*store.Get("queue", "taken"))->json, Doc("x"));
  EXPECT_TRUE(store.Get("queue", "c")->has_value());
  EXPECT_FALSE(store.Get("queue", "d")->has_value());
}

TYPED_TEST(StoreTest, ReadersRunWhileGroupsCommit) {
  Store& store = this->store();
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

TYPED_TEST(StoreTest, ListOrdersKeysByBytes) {
  Store& store = this->store();
  // A locale-aware collation would put "a-2" before "B" or ignore the dash; bytes do not.
  for (const char* key : {"b", "a-2", "B", "a1", "a", "_x", "\xc3\xa9"}) {
    ASSERT_TRUE(store.Commit(WriteBatch().Put("pool", key, "{}")).ok());
  }
  auto listed = store.List("pool");
  ASSERT_TRUE(listed.ok());
  std::vector<std::string> keys;
  for (const ObjectRecord& r : *listed) keys.push_back(r.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"B", "_x", "a", "a-2", "a1", "b", "\xc3\xa9"}));
}

TYPED_TEST(StoreTest, CopyAccessLoadsRecordsVerbatimAndNumberingContinues) {
  Store& store = this->store();
  StoreCopyAccess* access = store.copy_access();
  ASSERT_NE(access, nullptr);
  StoreRecords records;
  records.objects = {{"queue", "q1", 7, Doc("q1"), 111}, {"node", "n1", 2, Doc("n1"), 222}};
  records.events = {{5, "queue", "q1", 10, "Created", "{}"}, {9, "node", "n1", 20, "Joined", "{}"}};
  records.journal = {{"audit", 1, 30, R"({"a":1})"}, {"audit", 2, 31, R"({"a":2})"},
                     {"usage", 4, 40, R"({"u":4})"}};
  records.meta = {{"fencing_token", "3"}};
  ASSERT_TRUE(access->Load(records).ok());

  EXPECT_EQ(**store.Get("queue", "q1"), records.objects[0]);
  EXPECT_EQ(*store.Events("node", "n1"), std::vector<EventRecord>{records.events[1]});
  EXPECT_EQ(store.Journal("audit")->size(), 2u);
  EXPECT_EQ(**store.GetMeta("fencing_token"), "3");
  EXPECT_EQ(*access->ObjectKinds(), (std::vector<std::string>{"node", "queue"}));
  EXPECT_EQ(*access->JournalStreams(), (std::vector<std::string>{"audit", "usage"}));
  EXPECT_EQ(*access->EventsAfter(5, 0), std::vector<EventRecord>{records.events[1]});
  EXPECT_EQ(access->AllMeta()->size(), 1u);

  // Commits continue every numbering after the loaded records.
  CommitResult result;
  ASSERT_TRUE(store
                  .Commit(WriteBatch()
                              .Put("queue", "q1", Doc("q1b"), 7)
                              .AppendEvent("queue", "q1", "Changed", "{}", this->clock_.Now())
                              .AppendJournal("audit", "{}", this->clock_.Now())
                              .AppendJournal("usage", "{}", this->clock_.Now()),
                          &result)
                  .ok());
  EXPECT_EQ(result.assigned, (std::vector<int64_t>{8, 10, 3, 5}));

  // Loading over existing records changes nothing.
  StoreRecords clash;
  clash.objects = {{"pool", "p", 1, "{}", 1}, {"queue", "q1", 1, "{}", 1}};
  EXPECT_EQ(access->Load(clash).code(), StatusCode::kAborted);
  EXPECT_FALSE(store.Get("pool", "p")->has_value());
  StoreRecords clash_event;
  clash_event.events = {{9, "node", "n1", 1, "Again", "{}"}};
  EXPECT_FALSE(access->Load(clash_event).ok());

  // Erase empties the store and restarts the numbering.
  ASSERT_TRUE(access->Erase().ok());
  auto digest = DigestStore(store);
  ASSERT_TRUE(digest.ok()) << digest.status().ToString();
  EXPECT_TRUE(digest->empty());
  ASSERT_TRUE(store
                  .Commit(WriteBatch()
                              .AppendEvent("queue", "q1", "Created", "{}", this->clock_.Now())
                              .AppendJournal("audit", "{}", this->clock_.Now()),
                          &result)
                  .ok());
  EXPECT_EQ(result.assigned, (std::vector<int64_t>{1, 1}));
}

// --- GroupCommitter over each backend ---

TYPED_TEST(StoreTest, GroupCommitterAcknowledgesEveryBatchFromManyThreads) {
  Store& store = this->store();
  constexpr int kThreads = 16;
  constexpr int kBatchesPerThread = 500;
  GroupCommitter committer(store);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kBatchesPerThread; ++i) {
        std::string key = "t" + std::to_string(t) + "-" + std::to_string(i);
        WriteBatch batch;
        batch.Put("workload", key, Doc(key), 0)
            .AppendEvent("workload", key, "Submitted", "{}", this->clock_.Now())
            .AppendJournal("audit", Doc(key), this->clock_.Now());
        CommitResult result;
        Status s = committer.Submit(batch, &result);
        if (!s.ok() || result.assigned.size() != 3 || result.assigned[0] != 1) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  committer.Shutdown();
  EXPECT_EQ(failures.load(), 0);

  constexpr int kTotal = kThreads * kBatchesPerThread;
  EXPECT_EQ(*store.Count("workload"), kTotal);
  auto all = store.List("workload");
  ASSERT_EQ(all->size(), static_cast<size_t>(kTotal));
  for (const ObjectRecord& r : *all) EXPECT_EQ(r.json, Doc(r.key));
  EXPECT_EQ(store.Events("workload", "t7-499")->size(), 1u);
  auto audit = store.Journal("audit");
  ASSERT_EQ(audit->size(), static_cast<size_t>(kTotal));
  std::set<std::string> journaled;
  for (size_t i = 0; i < audit->size(); ++i) {
    EXPECT_EQ((*audit)[i].seq, static_cast<int64_t>(i) + 1);
    journaled.insert((*audit)[i].json);
  }
  EXPECT_EQ(journaled.size(), static_cast<size_t>(kTotal));

  GroupCommitStats stats = committer.stats();
  EXPECT_EQ(stats.batches, kTotal);
  EXPECT_LE(stats.groups, kTotal);
  EXPECT_GE(stats.max_group, 1);
}

TYPED_TEST(StoreTest, GroupCommitterFailsAConflictingBatchAloneInItsGroup) {
  Store& store = this->store();
  ASSERT_TRUE(store.Commit(WriteBatch().Put("workload", "taken", Doc("first"))).ok());
  GatedStore gate(store);
  GroupCommitter committer(gate);

  // 1) Hold the committer inside a first group so that the next batches queue up together.
  gate.Close();
  Status first_status;
  std::thread first([&] {
    first_status = committer.Submit(WriteBatch().Put("workload", "w0", Doc("w0")));
  });
  gate.WaitForArrivals(1);

  // 2) Five submitters; the third conflicts with an existing object.
  constexpr int kMates = 5;
  Status statuses[kMates];
  std::vector<std::thread> mates;
  for (int i = 0; i < kMates; ++i) {
    mates.emplace_back([&, i] {
      std::string key = i == 2 ? "taken" : "w" + std::to_string(i + 1);
      statuses[i] = committer.Submit(WriteBatch()
                                         .Put("workload", key, Doc(key), 0)
                                         .AppendEvent("workload", key, "Submitted", "{}",
                                                      this->clock_.Now()));
    });
  }
  while (committer.queued() < kMates) std::this_thread::yield();

  // 3) Release: the five form one group.
  gate.Open();
  first.join();
  for (auto& t : mates) t.join();
  EXPECT_TRUE(first_status.ok()) << first_status.ToString();
  for (int i = 0; i < kMates; ++i) {
    if (i == 2) {
      EXPECT_EQ(statuses[i].code(), StatusCode::kAborted) << statuses[i].ToString();
    } else {
      EXPECT_TRUE(statuses[i].ok()) << statuses[i].ToString();
    }
  }
  GroupCommitStats stats = committer.stats();
  EXPECT_EQ(stats.groups, 2);
  EXPECT_EQ(stats.max_group, kMates);
  EXPECT_EQ(*store.Count("workload"), 1 + 1 + (kMates - 1));
  EXPECT_EQ((*store.Get("workload", "taken"))->json, Doc("first"));
  EXPECT_TRUE(store.Events("workload", "taken")->empty());
  EXPECT_EQ(store.Events("workload", "w5")->size(), 1u);
}

TYPED_TEST(StoreTest, GroupCommitterShutdownDrainsTheQueue) {
  Store& store = this->store();
  GatedStore gate(store);
  GroupCommitter committer(gate, GroupCommitOptions{.max_group = 3});
  gate.Close();
  constexpr int kBatches = 10;
  Status statuses[kBatches];
  std::vector<std::thread> submitters;
  submitters.emplace_back(
      [&] { statuses[0] = committer.Submit(WriteBatch().Put("node", "n0", Doc("n0"))); });
  gate.WaitForArrivals(1);
  for (int i = 1; i < kBatches; ++i) {
    submitters.emplace_back([&, i] {
      std::string key = "n" + std::to_string(i);
      statuses[i] = committer.Submit(WriteBatch().Put("node", key, Doc(key)));
    });
  }
  while (committer.queued() < kBatches - 1) std::this_thread::yield();
  std::thread stopper([&] { committer.Shutdown(); });
  while (committer.accepting()) std::this_thread::yield();
  gate.Open();  // the committer now drains a queue that no longer takes batches
  stopper.join();
  for (auto& t : submitters) t.join();
  for (const Status& s : statuses) EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(*store.Count("node"), kBatches);
  EXPECT_EQ(committer.stats().max_group, 3);
  Status after = committer.Submit(WriteBatch().Put("node", "x", "{}"));
  EXPECT_EQ(after.code(), StatusCode::kUnavailable);
}

// --- OpenStore ---

TEST(OpenStoreTest, ParsesUrls) {
  ScratchDir dir;
  auto memory = OpenStore("memory://");
  ASSERT_TRUE(memory.ok());
  EXPECT_EQ((*memory)->Describe(), "memory://");

  std::string path = dir.File("x.db");
  auto sqlite = OpenStore("sqlite://" + path + "?synchronous=normal&busy_timeout_ms=100");
  ASSERT_TRUE(sqlite.ok()) << sqlite.status().ToString();
  EXPECT_EQ((*sqlite)->Describe(), "sqlite://" + path);

  EXPECT_TRUE(OpenStore("sqlite://:memory:").ok());
  EXPECT_EQ(OpenStore("sqlite://").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(OpenStore("sqlite://" + path + "?synchronous=off").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(OpenStore("sqlite://" + path + "?cache=big").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(OpenStore("sqlite://" + path + "?busy_timeout_ms=-4").status().code(),
            StatusCode::kInvalidArgument);
  // Nothing listens on port 1 of the loopback; the message never shows the password.
  Status pg = OpenStore("postgres://abacus:s3cret@127.0.0.1:1/abacus?connect_timeout=2").status();
  EXPECT_EQ(pg.code(), StatusCode::kUnavailable) << pg.ToString();
  EXPECT_EQ(pg.message().find("s3cret"), std::string::npos) << pg.message();
  Status unknown = OpenStore("mysql://root:hunter2@db/x").status();
  EXPECT_EQ(unknown.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(unknown.message().find("hunter2"), std::string::npos) << unknown.message();
}

// Issue 21: a full disk is StorageFullError (HTTP 503), not ResourceExhausted ("retry", 429). The
// database is capped with max_pages, as a full file system would stop it.
TEST(OpenStoreTest, FullDatabaseIsStorageFull) {
  ScratchDir dir;
  std::string path = dir.File("full.db");
  EXPECT_EQ(OpenStore("sqlite://" + path + "?max_pages=x").status().code(), StatusCode::kInvalidArgument);
  auto store = OpenStore("sqlite://" + path + "?max_pages=64");
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const std::string value = "{\"pad\":\"" + std::string(16 * 1024, 'x') + "\"}";
  Status st;
  int written = 0;
  for (; written < 1000 && st.ok(); ++written) {
    WriteBatch batch;
    batch.Put("obj", "k" + std::to_string(written), value, 0);
    st = (*store)->Commit(batch);
  }
  ASSERT_FALSE(st.ok()) << "64 pages held " << written << " values of 16 KiB";
  EXPECT_TRUE(IsStorageFull(st)) << st.ToString();
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);  // 503, not 429 "retry"
  EXPECT_NE(st.message().find(path), std::string::npos);  // the detail, for the log and admins
  // What was stored before stays readable, and the failed batch left nothing behind.
  auto count = (*store)->Count("obj");
  ASSERT_TRUE(count.ok());
  EXPECT_EQ(*count, written - 1);
}

}  // namespace
}  // namespace abacus
