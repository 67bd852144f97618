// UsageSync: the usage ledger follows the records. At open it opens an interval for every held
// allocation that has none and closes those no record holds; a transition's intervals are
// staged in its batch with the reason it ended; a batch that was not committed is forgotten.
#include "server/usage_sync.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

#include "store/memory_store.h"

namespace abacus::server {
namespace {

using namespace std::chrono_literals;

WorkloadRecord Running(const std::string& id, Time admitted) {
  WorkloadRecord r;
  r.id = id;
  r.spec.name = id;
  r.spec.project = "acme/ml";
  r.spec.queue = "train";
  r.state = WorkloadState::kRunning;
  r.admitted_at = admitted;
  PlacementRecord p;
  p.node = "gpu-1";
  p.cpu_milli = 1000;
  r.placements.push_back(p);
  return r;
}

class UsageSyncTest : public ::testing::Test {
 protected:
  std::vector<meter::UsageInterval> Stored() {
    auto all = meter::ReadUsage(store_, FromMicros(0), clock_.Now() + 24h);
    EXPECT_TRUE(all.ok()) << all.status().ToString();
    return all.ok() ? *all : std::vector<meter::UsageInterval>{};
  }
  // Puts `running` into the ledger, opens the usage sync on it, then lets `elapsed` pass; null
  // (with a failure) when it does not open.
  std::unique_ptr<UsageSync> OpenAfter(WorkloadRecord running, Duration elapsed) {
    ledger_.PutWorkload(std::move(running));
    auto sync = UsageSync::Open(store_, clock_, ledger_, 24h);
    EXPECT_TRUE(sync.ok()) << sync.status().ToString();
    clock_.Advance(elapsed);
    return sync.ok() ? std::move(*sync) : nullptr;
  }
  // The one interval stored, closed: its end and reason (nullopt end, with a failure, otherwise).
  std::pair<std::optional<Time>, meter::EndReason> OnlyClosed() {
    std::vector<meter::UsageInterval> stored = Stored();
    EXPECT_EQ(stored.size(), 1u);
    if (stored.size() != 1 || stored[0].open()) {
      ADD_FAILURE() << "not one closed interval";
      return {std::nullopt, meter::EndReason::kOpen};
    }
    return {stored[0].end, stored[0].end_reason};
  }
  // Runs wl-1 from now; `elapsed` later stages and commits its end in `state`, its task having
  // exited at `exited` as its agent saw it.
  void ExitAfter(Duration elapsed, WorkloadState state, Time exited) {
    ledger_.PutWorkload(Running("wl-1", clock_.Now()));
    auto sync = UsageSync::Open(store_, clock_, ledger_, 24h);
    ASSERT_TRUE(sync.ok());
    clock_.Advance(elapsed);
    WorkloadRecord before = *ledger_.FindWorkload("wl-1");
    WorkloadRecord after = before;
    after.state = state;
    after.placements[0].phase = "Exited";
    after.placements[0].finished_at = exited;
    WriteBatch batch;
    (*sync)->Stage(&before, after, batch, clock_.Now());
    ASSERT_TRUE(store_.Commit(batch).ok());
  }
  ManualClock clock_;
  InMemoryStore store_{clock_};
  Ledger ledger_;
};

TEST_F(UsageSyncTest, OpenGivesEveryHeldAllocationOneIntervalFromItsAdmission) {
  const Time admitted = clock_.Now();
  ledger_.PutWorkload(Running("wl-1", admitted));
  clock_.Advance(1h);
  auto sync = UsageSync::Open(store_, clock_, ledger_, 24h);
  ASSERT_TRUE(sync.ok()) << sync.status().ToString();
  std::vector<meter::UsageInterval> stored = Stored();
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_EQ(stored[0].workload_id, "wl-1");
  EXPECT_TRUE(stored[0].open());
  EXPECT_EQ(stored[0].start, admitted);
  // A second start finds it there and opens nothing more.
  auto again = UsageSync::Open(store_, clock_, ledger_, 24h);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(Stored().size(), 1u);
}

TEST_F(UsageSyncTest, ATransitionClosesItsIntervalsWithTheReasonInItsOwnBatch) {
  ledger_.PutWorkload(Running("wl-1", clock_.Now()));
  auto sync = UsageSync::Open(store_, clock_, ledger_, 24h);
  ASSERT_TRUE(sync.ok());
  clock_.Advance(30min);
  WorkloadRecord before = *ledger_.FindWorkload("wl-1");
  WorkloadRecord after = before;
  after.state = WorkloadState::kSucceeded;
  after.finished_at = clock_.Now();
  WriteBatch batch;
  (*sync)->Stage(&before, after, batch, clock_.Now());
  ASSERT_FALSE(batch.empty());
  EXPECT_TRUE(Stored()[0].open());  // staged, not yet committed
  ASSERT_TRUE(store_.Commit(batch).ok());
  std::vector<meter::UsageInterval> stored = Stored();
  ASSERT_EQ(stored.size(), 1u);
  EXPECT_FALSE(stored[0].open());
  EXPECT_EQ(*stored[0].end, clock_.Now());
  EXPECT_EQ(stored[0].end_reason, meter::EndReason::kSucceeded);
}

TEST_F(UsageSyncTest, ABatchThatWasNotCommittedIsForgotten) {
  auto sync = UsageSync::Open(store_, clock_, ledger_, 24h);
  ASSERT_TRUE(sync.ok());
  WorkloadRecord admitted = Running("wl-2", clock_.Now());
  WriteBatch lost;
  (*sync)->Stage(nullptr, admitted, lost, clock_.Now());
  ASSERT_FALSE(lost.empty());
  // Without CommitFailed the ledger counts the interval open: staging it again adds nothing.
  WriteBatch repeat;
  (*sync)->Stage(nullptr, admitted, repeat, clock_.Now());
  EXPECT_TRUE(repeat.empty());
  // The commit failed: what was staged is forgotten, and the next try stages it again.
  (*sync)->CommitFailed();
  WriteBatch retry;
  (*sync)->Stage(nullptr, admitted, retry, clock_.Now());
  EXPECT_FALSE(retry.empty());
  ASSERT_TRUE(store_.Commit(retry).ok());
  ASSERT_EQ(Stored().size(), 1u);
  EXPECT_TRUE(Stored()[0].open());
}

// The probe of 2026-12-07: a service's replica that ran again (a rollout, a rollback, a restart)
// or a replica added later was billed from the workload's first admission, so each replacement
// added the whole life of the service again (65 s of holding billed as 162 s).
TEST_F(UsageSyncTest, ATaskPlacedAfterTheAdmissionHoldsFromItsOwnPlacement) {
  const Time admitted = clock_.Now();
  auto sync = OpenAfter(Running("wl-1", admitted), 47s);
  ASSERT_NE(sync, nullptr);
  // The replica runs again (run 1: a new task id) and a second replica is added.
  WorkloadRecord before = *ledger_.FindWorkload("wl-1");
  WorkloadRecord after = before;
  after.placements[0].run = 1;
  PlacementRecord added = before.placements[0];
  added.replica = 1;
  after.placements.push_back(added);
  WriteBatch batch;
  sync->Stage(&before, after, batch, clock_.Now());
  ASSERT_TRUE(store_.Commit(batch).ok());
  std::vector<meter::UsageInterval> stored = Stored();
  ASSERT_EQ(stored.size(), 3u);
  int opened_now = 0;
  for (const auto& iv : stored) {
    if (iv.open()) {
      EXPECT_EQ(iv.start, clock_.Now()) << iv.task_id;
      ++opened_now;
    } else {
      EXPECT_EQ(iv.start, admitted) << iv.task_id;  // the first run: from the admission
      EXPECT_EQ(*iv.end, clock_.Now());
    }
  }
  EXPECT_EQ(opened_now, 2);
}

// The probe of 2026-12-07: a task that ended while the server was down was billed until the
// server learned of it. A task that exited closes at its exit as its agent saw it (never after
// now, never before the interval's start).
TEST_F(UsageSyncTest, ATaskThatExitedClosesAtItsExitNotWhenTheServerLearnedOfIt) {
  const Time admitted = clock_.Now();
  ExitAfter(60s, WorkloadState::kSucceeded, admitted + 10s);  // the report comes a minute late
  auto [end, reason] = OnlyClosed();
  EXPECT_EQ(end, std::optional<Time>(admitted + 10s));
  EXPECT_EQ(reason, meter::EndReason::kSucceeded);
}

TEST_F(UsageSyncTest, AnExitTimeAfterNowClosesAtNow) {
  ExitAfter(5s, WorkloadState::kFailed, clock_.Now() + 5s + 1h);  // an agent's clock far ahead
  EXPECT_EQ(OnlyClosed().first, std::optional<Time>(clock_.Now()));
}

// An attempt that ends in a requeue (its task lost with its agent, or failed and retried) closes
// when its task ended as far as is known, not when the server requeued it: the requeue starts the
// next attempt, whose task ids differ, so the ended placements are matched by the attempt they
// ran in. (The interval of an agent killed at 10 s and started again at 60 s closed at 60 s.)
TEST_F(UsageSyncTest, AnAttemptEndedByARequeueClosesAtItsTasksEndNotAtTheRequeue) {
  const Time admitted = clock_.Now();
  auto sync = OpenAfter(Running("wl-1", admitted), 60s);
  ASSERT_NE(sync, nullptr);
  WorkloadRecord before = *ledger_.FindWorkload("wl-1");
  std::vector<PlacementRecord> ended = before.placements;
  ended[0].phase = "Lost";
  ended[0].lost_reason = "AgentRestart";
  ended[0].finished_at = admitted + 10s;  // the previous agent's last call
  WorkloadRecord after = before;
  after.state = WorkloadState::kRequeued;
  after.requeue_reason = RequeueReason::kAgentRestart;
  after.placements.clear();
  after.requeues++;  // the next attempt
  WriteBatch batch;
  sync->Stage(&before, after, batch, clock_.Now(), &ended);
  ASSERT_TRUE(store_.Commit(batch).ok());
  auto [end, reason] = OnlyClosed();
  EXPECT_EQ(end, std::optional<Time>(admitted + 10s));
  EXPECT_EQ(reason, meter::EndReason::kNodeLost);
}

// A part of a workload that holds on (a BatchJob's slot released after its task ended) closes
// with that task's own end, not "ScaledDown" (the probe of 2026-12-07).
TEST_F(UsageSyncTest, APartReleasedAfterItsTaskEndedClosesWithThatEnd) {
  WorkloadRecord running = Running("wl-1", clock_.Now());
  for (int r = 1; r <= 3; ++r) {
    PlacementRecord p = running.placements[0];
    p.replica = r;
    running.placements.push_back(p);
  }
  ledger_.PutWorkload(running);
  auto sync = UsageSync::Open(store_, clock_, ledger_, 24h);
  ASSERT_TRUE(sync.ok());
  clock_.Advance(30s);
  WorkloadRecord before = *ledger_.FindWorkload("wl-1");
  std::vector<PlacementRecord> ended;
  for (int r = 1; r <= 3; ++r) ended.push_back(before.placements[r]);
  ended[0].phase = "Exited";  // replica 1 succeeded
  ended[1].phase = "Exited";  // replica 2 failed
  ended[1].exit_code = 3;
  ended[2].phase = "Lost";    // replica 3 was on a lost node
  ended[2].lost_reason = "NodeLost";
  WorkloadRecord after = before;
  after.placements.resize(1);  // the slots are released; replica 0 runs on
  WriteBatch batch;
  (*sync)->Stage(&before, after, batch, clock_.Now(), &ended);
  ASSERT_TRUE(store_.Commit(batch).ok());
  std::map<std::string, meter::EndReason> reasons;
  for (const auto& iv : Stored()) reasons[iv.task_id] = iv.end_reason;
  ASSERT_EQ(reasons.size(), 4u);
  std::vector<meter::EndReason> got;
  for (const auto& [task, reason] : reasons) got.push_back(reason);
  EXPECT_EQ(got, (std::vector<meter::EndReason>{meter::EndReason::kOpen, meter::EndReason::kSucceeded,
                                                meter::EndReason::kFailed, meter::EndReason::kNodeLost}));
}

}  // namespace
}  // namespace abacus::server
