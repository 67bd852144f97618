#include "server/loop_inbox.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace abacus::server {
namespace {

using namespace std::chrono_literals;

WorkloadRecord Record(const std::string& id, const std::string& name) {
  WorkloadRecord r;
  r.id = id;
  r.spec.name = name;
  return r;
}

TEST(LoopInboxTest, ATurnTakesEverythingSentAndReadersSeeSubmissionsUntilThen) {
  LoopInbox inbox;
  inbox.Submit({Record("wl-1", "a"), Record("wl-2", "b")});
  TaskReport report;
  report.node = "n1";
  report.task_id = "t1";
  inbox.Report({report});
  int ran = 0;
  ASSERT_TRUE(inbox.Run([&] { ++ran; }).ok());
  EXPECT_EQ(inbox.FindSubmitted("wl-2")->spec.name, "b");
  EXPECT_EQ(inbox.FindSubmitted("a")->id, "wl-1");
  EXPECT_FALSE(inbox.FindSubmitted("c").has_value());
  LoopInbox::Turn turn = inbox.Take(0ms);
  EXPECT_TRUE(turn.submitted);
  EXPECT_EQ(turn.reports.size(), 1u);
  ASSERT_EQ(turn.commands.size(), 1u);
  turn.commands.front()();
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(turn.seen_seq, 2u);  // the submission and the command
  EXPECT_FALSE(turn.stop);
  // Submissions stay readable until the loop moves them (under the readers' lock).
  EXPECT_EQ(inbox.FindSubmitted("wl-1")->spec.name, "a");
  EXPECT_EQ(inbox.TakeSubmitted().size(), 2u);
  EXPECT_TRUE(inbox.Submitted().empty());  // in the ledger from here on
  EXPECT_TRUE(inbox.CycleOwed(turn.seen_seq));
  inbox.Cycled(turn.seen_seq);
  EXPECT_FALSE(inbox.CycleOwed(turn.seen_seq));
}

TEST(LoopInboxTest, WaitForCycleReturnsOnceTheLoopCycledAfterIt) {
  LoopInbox inbox;
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    inbox.WaitForCycle();
    done = true;
  });
  LoopInbox::Turn turn = inbox.Take(10s);  // woken by the wait itself
  EXPECT_EQ(turn.seen_seq, 1u);
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(done.load());
  inbox.Cycled(turn.seen_seq);
  waiter.join();
  EXPECT_TRUE(done.load());
}

// While the cycle that covers a wait is committing, the wait neither owes another cycle nor
// wakes the loop (no turn after turn until the commit is done); the wait is answered when that
// cycle is Cycled. A Nudge (the loop's own commit is done) wakes a waiting turn at once.
TEST(LoopInboxTest, ACommittingCycleHoldsItsWaitsAndANudgeWakesTheLoop) {
  LoopInbox inbox;
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    inbox.WaitForCycle();
    done = true;
  });
  LoopInbox::Turn turn = inbox.Take(10s);
  ASSERT_EQ(turn.seen_seq, 1u);
  EXPECT_TRUE(inbox.CycleOwed(turn.seen_seq));
  inbox.Cycling(turn.seen_seq);
  EXPECT_FALSE(inbox.CycleOwed(turn.seen_seq));
  std::atomic<bool> nudged{false};
  std::thread committer([&] {
    std::this_thread::sleep_for(20ms);
    nudged = true;
    inbox.Nudge();
  });
  LoopInbox::Turn next = inbox.Take(std::chrono::hours(1));  // only the nudge wakes it
  EXPECT_TRUE(nudged.load()) << "the turn came before the nudge: the committing cycle's wait woke it";
  committer.join();
  EXPECT_EQ(next.seen_seq, 1u);
  EXPECT_TRUE(next.reports.empty());
  EXPECT_TRUE(next.commands.empty());
  EXPECT_FALSE(done.load());
  inbox.Cycled(turn.seen_seq);
  waiter.join();
  EXPECT_TRUE(done.load());
}

TEST(LoopInboxTest, CloseStopsTheLoopRefusesCommandsAndReleasesWaits) {
  LoopInbox inbox;
  ASSERT_TRUE(inbox.Run([] {}).ok());
  inbox.Close();
  EXPECT_EQ(inbox.Run([] {}).code(), StatusCode::kUnavailable);
  inbox.WaitForCycle();  // returns at once: closed
  LoopInbox::Turn turn = inbox.Take(10s);
  EXPECT_TRUE(turn.stop);
  EXPECT_EQ(turn.commands.size(), 1u);  // sent before the close: still answered
  EXPECT_TRUE(inbox.TakeLast().empty());
}

}  // namespace
}  // namespace abacus::server
