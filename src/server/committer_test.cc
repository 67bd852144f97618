// The one committer: queued items commit as one group with their entries sealed in order; a
// refused batch fails alone and leaves no gap in the chain; plain batches (no entries) share the
// same groups; a hook's own write on the committer thread goes through without waiting for
// itself; after Shutdown nothing more is taken.
#include "server/committer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "common/clock.h"

namespace abacus::server {
namespace {

govern::AuditRecord Entry(const std::string& name) {
  govern::AuditRecord r;
  r.actor = "user admin";
  r.action = "create";
  r.object_kind = "thing";
  r.object_name = name;
  r.result = "ok";
  return r;
}

class CommitterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = OpenStore("memory://", {&clock_});
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    auto log = govern::AuditLog::Open(*store_, clock_);
    ASSERT_TRUE(log.ok());
    audit_ = std::move(*log);
  }
  std::vector<std::string> AuditedNames() {
    std::vector<std::string> names;
    auto entries = audit_->Read();
    EXPECT_TRUE(entries.ok());
    if (entries.ok()) {
      for (const auto& e : *entries) names.push_back(e.record.object_name);
    }
    return names;
  }

  ManualClock clock_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<govern::AuditLog> audit_;
};

// Items queued while a group is held back commit together as the next group: each caller gets
// its own ops' versions, entries follow the order of the queue, and the conflicting batch (and
// its entry) fails alone.
TEST_F(CommitterTest, AQueuedGroupCommitsTogetherAndARefusedBatchFailsAlone) {
  ASSERT_TRUE(store_->Commit(WriteBatch().Put("thing", "taken", "{}", 0)).ok());
  Committer committer(*audit_, {});
  constexpr int kCallers = 6;
  std::vector<Status> statuses(kCallers);
  std::vector<CommitResult> results(kCallers);
  std::vector<std::thread> callers;
  {
    auto held = committer.HoldCommits();  // the committer cannot commit: everything queues
    for (int c = 0; c < kCallers; ++c) {
      callers.emplace_back([&, c] {
        const std::string key = c == 2 ? "taken" : "k" + std::to_string(c);
        WriteBatch batch;
        batch.Put("thing", key, "{}", 0);
        std::vector<govern::AuditRecord> records;
        if (c != 4) records.push_back(Entry(key));  // caller 4: a plain batch, no entry
        statuses[c] = committer.Commit(batch, std::move(records), &results[c]);
      });
      // One at a time into the queue, so that the queue's order is the callers' order. The
      // first is taken at once (a group of its own, stuck behind the hold); the rest queue.
      if (c == 0) {
        while (committer.stats().groups < 1) std::this_thread::yield();
      } else {
        while (committer.queued() < static_cast<size_t>(c)) std::this_thread::yield();
      }
    }
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(statuses[2].code(), StatusCode::kAborted) << statuses[2].ToString();
  for (int c : {0, 1, 3, 4, 5}) {
    ASSERT_TRUE(statuses[c].ok()) << c << ": " << statuses[c].ToString();
    ASSERT_EQ(results[c].assigned.size(), 1u);  // the caller's own op only
    EXPECT_EQ(results[c].assigned[0], 1);       // the new object's version
  }
  EXPECT_EQ(AuditedNames(), (std::vector<std::string>{"k0", "k1", "k3", "k5"}));
  auto verified = audit_->Verify();
  ASSERT_TRUE(verified.ok());
  EXPECT_TRUE(verified->ok) << verified->reason;
  EXPECT_EQ(*store_->Count("thing"), 6);  // taken + k0 k1 k3 k4 k5
  EXPECT_EQ(committer.stats().max_group, kCallers - 1);  // callers 1..5 went as one group
}

// Tickets (entries without a batch) are written in queue order; Wait reports each, Flush waits
// for all.
TEST_F(CommitterTest, QueuedEntriesAreWrittenAndWaitedFor) {
  Committer committer(*audit_, {});
  uint64_t first = committer.Enqueue({Entry("a"), Entry("b")});
  uint64_t second = committer.Enqueue({Entry("c")});
  ASSERT_GT(first, 0u);
  EXPECT_TRUE(committer.Wait(second, std::chrono::seconds(10)).ok());
  EXPECT_TRUE(committer.Wait(first, std::chrono::seconds(10)).ok());
  committer.Enqueue({Entry("d")});
  committer.Flush();
  EXPECT_EQ(AuditedNames(), (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(committer.failures(), 0);
}

// A housekeeping hook runs on the committer's thread; a commit it makes there goes through at
// once (waiting for its own thread would hang the server).
TEST_F(CommitterTest, AHooksOwnCommitDoesNotWaitForItself) {
  std::atomic<bool> committed{false};
  CommitterOptions options;
  options.housekeeping_every = std::chrono::milliseconds(1);
  Committer* self = nullptr;
  options.housekeeping = [&](bool) {
    if (self == nullptr || committed.load()) return;
    EXPECT_TRUE(self->OnCommitterThread());
    committed = self->Commit(WriteBatch().Put("thing", "from-hook", "{}"), {Entry("from-hook")}).ok();
  };
  Committer committer(*audit_, options);
  self = &committer;
  for (int i = 0; i < 5000 && !committed.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(committed.load());
  EXPECT_FALSE(committer.OnCommitterThread());
  committer.Shutdown();
  EXPECT_TRUE(store_->Get("thing", "from-hook")->has_value());
}

// A started commit does not hold its caller: it is done once its group committed (its ops'
// versions, its entry sealed in queue order with the waiting callers'), its hook runs after,
// a refused batch is done with its own failure, and after Shutdown one is done at once.
TEST_F(CommitterTest, AStartedCommitIsDoneWithoutItsCallerWaiting) {
  ASSERT_TRUE(store_->Commit(WriteBatch().Put("thing", "taken", "{}", 0)).ok());
  Committer committer(*audit_, {});
  std::atomic<int> hooks{0};
  std::shared_ptr<const Committer::Async> first, refused;
  {
    auto held = committer.HoldCommits();  // nothing commits while the caller goes on
    first = committer.Start(WriteBatch().Put("thing", "a", "{}", 0), {Entry("a")}, [&] { hooks++; });
    refused = committer.Start(WriteBatch().Put("thing", "taken", "{}", 0), {Entry("refused")}, [&] { hooks++; });
    EXPECT_FALSE(first->ready());
    EXPECT_FALSE(refused->ready());
  }
  ASSERT_TRUE(committer.Commit(WriteBatch().Put("thing", "b", "{}"), {Entry("b")}).ok());
  first->Wait();
  refused->Wait();
  ASSERT_TRUE(first->status.ok()) << first->status.ToString();
  ASSERT_EQ(first->result.assigned.size(), 1u);
  EXPECT_EQ(first->result.assigned[0], 1);
  EXPECT_EQ(refused->status.code(), StatusCode::kAborted) << refused->status.ToString();
  committer.Flush();
  EXPECT_EQ(hooks.load(), 2);
  EXPECT_EQ(AuditedNames(), (std::vector<std::string>{"a", "b"}));
  committer.Shutdown();
  auto late = committer.Start(WriteBatch().Put("thing", "late", "{}"), {Entry("late")}, [&] { hooks++; });
  EXPECT_TRUE(late->ready());
  EXPECT_EQ(late->status.code(), StatusCode::kUnavailable);
  EXPECT_EQ(hooks.load(), 2);
  EXPECT_EQ(committer.failures(), 0);  // refused and late answered their callers: nothing lost
}

TEST_F(CommitterTest, AfterShutdownNothingIsTaken) {
  Committer committer(*audit_, {});
  ASSERT_TRUE(committer.Commit(WriteBatch().Put("thing", "before", "{}"), {Entry("before")}).ok());
  committer.Shutdown();
  Status late = committer.Commit(WriteBatch().Put("thing", "after", "{}"), {Entry("after")});
  EXPECT_EQ(late.code(), StatusCode::kUnavailable) << late.ToString();
  EXPECT_EQ(committer.Enqueue({Entry("late")}), 0u);
  EXPECT_FALSE(store_->Get("thing", "after")->has_value());
  EXPECT_EQ(AuditedNames(), (std::vector<std::string>{"before"}));
}

}  // namespace
}  // namespace abacus::server
