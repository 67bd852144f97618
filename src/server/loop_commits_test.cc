#include "server/loop_commits.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace abacus::server {
namespace {

// A commit as the committer hands it back, done or not yet.
std::shared_ptr<Committer::Async> InFlight() { return std::make_shared<Committer::Async>(); }

void Finish(Committer::Async& c, Status st = Status::OK()) {
  c.status = std::move(st);
  c.done.store(true, std::memory_order_release);
  c.done.notify_all();
}

class LoopCommitsTest : public testing::Test {
 protected:
  // Adds `c` changing `ids`; its continuation appends `name` (and "!" when it failed) to settled_.
  void Add(const std::shared_ptr<Committer::Async>& c, std::vector<std::string> ids, const std::string& name) {
    commits_.Add(c, std::move(ids), [this, name](const Committer::Async& done) {
      settled_.push_back(done.status.ok() ? name : name + "!");
    });
  }
  LoopCommits commits_;
  std::vector<std::string> settled_;
};

TEST_F(LoopCommitsTest, SettlesOldestFirstAndSettleDoneNeverWaits) {
  auto a = InFlight(), b = InFlight(), c = InFlight();
  Add(a, {"x"}, "a");
  Add(b, {"y"}, "b");
  Add(c, {"z"}, "c");
  Finish(*b);
  commits_.SettleDone();  // b is done, but a is not: nothing settles out of order
  EXPECT_TRUE(settled_.empty());
  Finish(*a);
  commits_.SettleDone();
  EXPECT_EQ(settled_, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(commits_.size(), 1u);
  EXPECT_EQ(commits_.settled(), 2);
  EXPECT_EQ(commits_.waited(), 0);  // both were done when settled
  EXPECT_TRUE(commits_.Touches("z"));
  EXPECT_FALSE(commits_.Touches("x"));
}

TEST_F(LoopCommitsTest, SettleTouchingSettlesUpToTheLastCommitThatChangesTheRecord) {
  auto a = InFlight(), b = InFlight(), c = InFlight(), d = InFlight();
  Add(a, {"x"}, "a");
  Add(b, {"y"}, "b");
  Add(c, {"x", "w"}, "c");
  Add(d, {"v"}, "d");
  for (auto* one : {a.get(), b.get(), c.get(), d.get()}) Finish(*one);
  commits_.SettleTouching("nobody");
  EXPECT_TRUE(settled_.empty());
  commits_.SettleTouching("x");  // a and c change x: everything up to c settles, d stays
  EXPECT_EQ(settled_, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_FALSE(commits_.Touches("x"));
  EXPECT_TRUE(commits_.Touches("v"));
}

TEST_F(LoopCommitsTest, SettleAllWaitsForACommitStillInFlight) {
  auto a = InFlight();
  Add(a, {"x"}, "a");
  std::thread committer([&] { Finish(*a); });
  commits_.SettleAll();
  committer.join();
  EXPECT_EQ(settled_, (std::vector<std::string>{"a"}));
  EXPECT_EQ(commits_.size(), 0u);
  EXPECT_EQ(commits_.settled(), 1);
  EXPECT_LE(commits_.waited(), 1);  // waited unless the other thread finished first
}

TEST_F(LoopCommitsTest, AFailureSettlesEveryCommitInFlightBeforeTheHookRunsOnce) {
  int hooks = 0;
  commits_.SetAfterFailure([&] {
    ++hooks;
    settled_.push_back("hook");
  });
  auto a = InFlight(), b = InFlight();
  Add(a, {"x"}, "a");
  Add(b, {"y"}, "b");
  Finish(*a, Unavailable("disk gone"));
  std::thread committer([&] { Finish(*b); });
  commits_.SettleDone();  // a failed: b is waited for, then the hook reloads once
  committer.join();
  EXPECT_EQ(settled_, (std::vector<std::string>{"a!", "b", "hook"}));
  EXPECT_EQ(hooks, 1);
  auto c = InFlight();
  Add(c, {"z"}, "c");
  Finish(*c);
  commits_.SettleDone();
  EXPECT_EQ(hooks, 1);  // no failure since
}

// A continuation may start the next commit (a command's next step), which settles after it;
// it may not settle, which would wait inside a settle: that aborts (a programming error).
TEST_F(LoopCommitsTest, AContinuationMayAddACommitButNeverSettles) {
  auto a = InFlight(), b = InFlight();
  commits_.Add(a, {"x"}, [&](const Committer::Async&) {
    settled_.push_back("a");
    Add(b, {"x"}, "b");
  });
  Finish(*a);
  Finish(*b);
  commits_.SettleAll();
  EXPECT_EQ(settled_, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(commits_.size(), 0u);

  auto c = InFlight();
  commits_.Add(c, {"y"}, [&](const Committer::Async&) { commits_.SettleAll(); });
  Finish(*c);
  EXPECT_DEATH(commits_.SettleAll(), "continuation settled");
}

TEST_F(LoopCommitsTest, EveryRecordABatchWritesIsInFlightUntilItsCommitSettles) {
  WriteBatch batch;
  batch.Put("workload", "w-1", "{}").Put("usage", "u-7", "{}").Delete("idempotency", "k-2");
  batch.AppendEvent("workload", "w-1", "Admitted", "{}", Time{});
  EXPECT_EQ(RecordsWrittenBy(batch),
            (std::vector<std::string>{"workload/w-1", "usage/u-7", "idempotency/k-2"}));  // events are not records
  auto a = InFlight();
  Add(a, RecordsWrittenBy(batch), "a");
  EXPECT_TRUE(commits_.Touches(RecordCommitId("usage", "u-7")));
  EXPECT_TRUE(commits_.Touches(RecordCommitId("idempotency", "k-2")));
  EXPECT_FALSE(commits_.Touches(RecordCommitId("node", "w-1")));  // the same key, another kind
  Finish(*a);
  commits_.SettleTouching(RecordCommitId("usage", "u-7"));
  EXPECT_EQ(settled_, (std::vector<std::string>{"a"}));
  EXPECT_FALSE(commits_.Touches(RecordCommitId("workload", "w-1")));
}

}  // namespace
}  // namespace abacus::server
