// The scheduling lease and fenced batches (store/lease.h), run against every backend: SQLite
// (file and in-memory), PostgreSQL (a fresh database on a throwaway server) and InMemoryStore.
// Expiry: SQLite and the in-memory store follow the manual clock; PostgreSQL follows the
// database server's clock, so these tests let a lease lapse with a 1 ms ttl and move both.
#include <gtest/gtest.h>

#include <thread>

#include "store/fenced_store.h"
#include "store/group_commit.h"
#include "store/lease.h"
#include "store/memory_store.h"
#include "store/postgres/pg_test_server.h"
#include "store/store.h"
#include "store/store_test_util.h"

namespace abacus {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing_util::PgTestDatabase;
using testing_util::ScratchDir;

constexpr char kLease[] = "scheduler";

struct SqliteFile {
  static std::string Url(const ScratchDir& dir, const PgTestDatabase*) { return "sqlite://" + dir.File("abacus.db"); }
};
struct SqliteMemory {
  static std::string Url(const ScratchDir&, const PgTestDatabase*) { return "sqlite://:memory:"; }
};
struct Postgres {
  static std::string Url(const ScratchDir&, const PgTestDatabase* db) { return db->url(); }
};
struct InMemory {
  static std::string Url(const ScratchDir&, const PgTestDatabase*) { return "memory://"; }
};

template <typename Backend>
class LeaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    if constexpr (std::is_same_v<Backend, Postgres>) {
      pg_ = std::make_unique<PgTestDatabase>();
      ABACUS_REQUIRE_PG_DATABASE(*pg_);
    }
    auto store = OpenStore(Backend::Url(dir_, pg_.get()), StoreOptions{&clock_});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }

  Store& store() { return *store_; }
  LeaseState Acquire(const std::string& holder, Duration ttl = seconds(60)) {
    auto state = store_->TryAcquireLease(kLease, holder, "http://" + holder, ttl);
    EXPECT_TRUE(state.ok()) << state.status().ToString();
    return state.ok() ? *state : LeaseState{};
  }
  // Lets `holder`'s lease lapse: renews it for 1 ms, then time passes (the manual clock, and for
  // PostgreSQL the database server's own).
  void Lapse(const std::string& holder) {
    ASSERT_TRUE(Acquire(holder, milliseconds(1)).held);
    clock_.Advance(milliseconds(5));
    if constexpr (std::is_same_v<Backend, Postgres>) std::this_thread::sleep_for(milliseconds(5));
  }

  ScratchDir dir_;
  ManualClock clock_;
  std::unique_ptr<PgTestDatabase> pg_;  // outlives the store
  std::unique_ptr<Store> store_;
};

using Backends = ::testing::Types<SqliteFile, SqliteMemory, Postgres, InMemory>;
class BackendNames {
 public:
  template <typename T>
  static std::string GetName(int) {
    if (std::is_same_v<T, SqliteFile>) return "SqliteFile";
    if (std::is_same_v<T, SqliteMemory>) return "SqliteMemory";
    if (std::is_same_v<T, Postgres>) return "Postgres";
    return "InMemory";
  }
};
TYPED_TEST_SUITE(LeaseTest, Backends, BackendNames);

TYPED_TEST(LeaseTest, OneHolderAtATimeAndTheTokenGrowsOnEveryChangeOfHolder) {
  EXPECT_EQ(this->Acquire("a"), (LeaseState{true, "a", "http://a", 1}));
  EXPECT_EQ(this->Acquire("b"), (LeaseState{false, "a", "http://a", 1}));  // a holds it
  EXPECT_EQ(this->Acquire("a"), (LeaseState{true, "a", "http://a", 1}));   // a renewal keeps the token

  this->Lapse("a");
  EXPECT_EQ(this->Acquire("b"), (LeaseState{true, "b", "http://b", 2}));  // taken over after expiry
  EXPECT_EQ(this->Acquire("a"), (LeaseState{false, "b", "http://b", 2}));

  // Releasing: a non-holder's release changes nothing; the holder's frees the lease at once.
  ASSERT_TRUE(this->store().ReleaseLease(kLease, "a").ok());
  EXPECT_FALSE(this->Acquire("a").held);
  ASSERT_TRUE(this->store().ReleaseLease(kLease, "b").ok());
  EXPECT_EQ(this->Acquire("a"), (LeaseState{true, "a", "http://a", 3}));

  // Leases are independent of each other.
  auto other = this->store().TryAcquireLease("other", "b", "http://b", seconds(60));
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(*other, (LeaseState{true, "b", "http://b", 1}));

  EXPECT_EQ(this->store().TryAcquireLease(kLease, "", "", seconds(1)).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(this->store().TryAcquireLease(kLease, "a", "", Duration(0)).status().code(),
            StatusCode::kInvalidArgument);
}

TYPED_TEST(LeaseTest, ADeposedHoldersFencedBatchIsRefused) {
  Store& store = this->store();
  ASSERT_EQ(this->Acquire("a").token, 1);
  const LeaseFence a_fence{kLease, 1};
  ASSERT_TRUE(store.Commit(WriteBatch().Put("workload", "w1", "{}").Fence(a_fence)).ok());

  this->Lapse("a");
  ASSERT_EQ(this->Acquire("b").token, 2);  // b takes over: a is deposed
  Status late = store.Commit(
      WriteBatch().Put("workload", "w2", "{}").AppendJournal("usage", "{}", this->clock_.Now()).Fence(a_fence));
  EXPECT_EQ(late.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(late.message().find("fenced: lease token 1 is no longer current"), std::string::npos) << late.message();
  EXPECT_FALSE(store.Get("workload", "w2")->has_value());
  EXPECT_TRUE(store.Journal("usage")->empty());

  // In one group: the stale batch fails alone; an unfenced one and b's current one commit.
  WriteBatch stale, plain, current;
  stale.Put("workload", "stale", "{}").Fence(a_fence);
  plain.Put("workload", "plain", "{}");
  current.Put("workload", "current", "{}").AppendJournal("usage", "{}", this->clock_.Now()).Fence({kLease, 2});
  const WriteBatch* batches[] = {&stale, &plain, &current};
  CommitResult r_current;
  CommitResult* results[] = {nullptr, nullptr, &r_current};
  Status statuses[3];
  store.CommitGroup(batches, results, statuses);
  EXPECT_EQ(statuses[0].code(), StatusCode::kFailedPrecondition) << statuses[0].ToString();
  EXPECT_TRUE(statuses[1].ok()) << statuses[1].ToString();
  EXPECT_TRUE(statuses[2].ok()) << statuses[2].ToString();
  EXPECT_EQ(r_current.assigned, (std::vector<int64_t>{1, 1}));
  EXPECT_FALSE(store.Get("workload", "stale")->has_value());
  EXPECT_TRUE(store.Get("workload", "plain")->has_value());
  EXPECT_TRUE(store.Get("workload", "current")->has_value());

  // Through a GroupCommitter, as the server commits; and a fence on a lease nobody ever took.
  GroupCommitter committer(store);
  EXPECT_EQ(committer.Submit(WriteBatch().Put("workload", "w3", "{}").Fence(a_fence)).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_TRUE(committer.Submit(WriteBatch().Put("workload", "w4", "{}").Fence({kLease, 2})).ok());
  EXPECT_EQ(committer.Submit(WriteBatch().Put("workload", "w5", "{}").Fence({"never", 1})).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(*store.Count("workload"), 4);  // w1, plain, current, w4
}

// --- FencedStore: what a leader's ControlPlane commits through

TEST(FencedStoreTest, FencesEveryBatchUntilTheLeaseChangesHands) {
  ManualClock clock;
  auto base = std::make_unique<InMemoryStore>(clock);
  InMemoryStore& raw = *base;
  ASSERT_EQ(raw.TryAcquireLease(kLease, "a", "", seconds(5))->token, 1);
  FencedStore fenced(std::move(base), LeaseFence{kLease, 1});
  GroupCommitter committer(fenced);
  ASSERT_TRUE(committer.Submit(WriteBatch().Put("workload", "w1", "{}")).ok());
  clock.Advance(seconds(6));
  ASSERT_EQ(raw.TryAcquireLease(kLease, "b", "", seconds(5))->token, 2);  // b took over
  Status late = committer.Submit(WriteBatch().Put("workload", "w2", "{}"));
  EXPECT_EQ(late.code(), StatusCode::kUnavailable) << late.ToString();  // retry on the new leader
  EXPECT_NE(late.message().find("fenced: lease token 1 is no longer current"), std::string::npos) << late.message();
  // A batch with a fence of its own keeps it; reads pass through.
  EXPECT_TRUE(committer.Submit(WriteBatch().Put("workload", "w3", "{}").Fence({kLease, 2})).ok());
  EXPECT_EQ(*fenced.Count("workload"), 2);
  EXPECT_FALSE(fenced.Get("workload", "w2")->has_value());
  EXPECT_EQ(fenced.TryAcquireLease(kLease, "a", "", seconds(5))->holder, "b");
}

// --- the rule itself, without a store

TEST(DecideLeaseTest, TakesFreeOrExpiredLeasesRenewsOwnAndLeavesOthers) {
  LeaseState state;
  auto first = DecideLease(std::nullopt, "a", "http://a", 100, Duration(50), state);
  EXPECT_EQ(first, (LeaseRow{"a", "http://a", 1, 150}));
  EXPECT_TRUE(state.held);

  EXPECT_FALSE(DecideLease(first, "b", "http://b", 149, Duration(50), state).has_value());
  EXPECT_EQ(state, (LeaseState{false, "a", "http://a", 1}));

  EXPECT_EQ(DecideLease(first, "a", "http://a2", 149, Duration(50), state), (LeaseRow{"a", "http://a2", 1, 199}));
  EXPECT_EQ(DecideLease(first, "b", "http://b", 150, Duration(50), state), (LeaseRow{"b", "http://b", 2, 200}));
  EXPECT_EQ(state, (LeaseState{true, "b", "http://b", 2}));
  // The holder whose own lease expired, nobody having taken it, renews under the same token.
  EXPECT_EQ(DecideLease(first, "a", "http://a", 500, Duration(50), state), (LeaseRow{"a", "http://a", 1, 550}));

  EXPECT_EQ(ReleasedLease(first, "a", 120), (LeaseRow{"a", "http://a", 1, 120}));
  EXPECT_FALSE(ReleasedLease(first, "b", 120).has_value());
  EXPECT_FALSE(ReleasedLease(first, "a", 150).has_value());  // already expired
}

TEST(CheckFenceTest, NamesTheStaleAndTheCurrentToken) {
  EXPECT_TRUE(CheckFence({kLease, 3}, 3).ok());
  Status stale = CheckFence({kLease, 3}, 4);
  EXPECT_EQ(stale.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(stale.message(), "fenced: lease token 3 is no longer current (lease 'scheduler' is at token 4)");
  EXPECT_EQ(CheckFence({kLease, 3}, std::nullopt).code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace abacus
