// LeaseKeeper on the in-memory store and a manual clock: who leads, when a silent leader stops
// counting itself one, takeover, release, pause, and store errors.
#include "server/ha_lease_keeper.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "store/memory_store.h"
#include "store/store_test_util.h"

namespace abacus::server {
namespace {

using namespace std::chrono_literals;

LeaseKeeperOptions Options(const std::string& holder) {
  LeaseKeeperOptions o;
  o.name = "scheduler";
  o.holder = holder;
  o.address = "http://" + holder;
  o.ttl = 5s;
  o.renew_every = 1s;
  return o;
}

// Forwards to an InMemoryStore; lease calls fail while `down` (the database is unreachable).
class FlakyLeaseStore final : public testing_util::ForwardingStore {
 public:
  explicit FlakyLeaseStore(const Clock& clock) : ForwardingStore(std::make_unique<InMemoryStore>(clock)) {}
  std::atomic<bool> down{false};

  Result<LeaseState> TryAcquireLease(std::string_view n, std::string_view h, std::string_view a,
                                     Duration ttl) override {
    if (down) return Unavailable("database unreachable");
    return ForwardingStore::TryAcquireLease(n, h, a, ttl);
  }
  Status ReleaseLease(std::string_view n, std::string_view h) override {
    if (down) return Unavailable("database unreachable");
    return ForwardingStore::ReleaseLease(n, h);
  }
  std::string Describe() const override { return "flaky"; }
};

TEST(LeaseKeeperTest, OneLeadsTheOtherFollowsAndTakesOverWhenTheLeaderFallsSilent) {
  ManualClock clock;
  InMemoryStore store(clock);
  LeaseKeeper a(store, clock, Options("a")), b(store, clock, Options("b"));
  a.Tick();
  b.Tick();
  LeaseView va = a.view(), vb = b.view();
  EXPECT_TRUE(va.leader);
  EXPECT_EQ(va.token, 1);
  EXPECT_EQ(va.leader_address, "http://a");
  EXPECT_FALSE(vb.leader);
  EXPECT_EQ(vb.token, 1);
  EXPECT_EQ(vb.leader_address, "http://a");  // where b forwards to

  // a falls silent (it died, or cannot reach the store): it counts itself the leader only until
  // ttl - renew_every after its last renewal, before the store lets b in at ttl.
  clock.Advance(4s - 1us);
  EXPECT_TRUE(a.view().leader);
  clock.Advance(1us);
  EXPECT_FALSE(a.view().leader);
  b.Tick();
  EXPECT_FALSE(b.view().leader);  // the store still holds a's lease
  clock.Advance(1s);
  b.Tick();
  vb = b.view();
  EXPECT_TRUE(vb.leader);
  EXPECT_EQ(vb.token, 2);
  EXPECT_EQ(vb.leader_address, "http://b");
  a.Tick();  // a comes back: a follower of b
  va = a.view();
  EXPECT_FALSE(va.leader);
  EXPECT_EQ(va.token, 2);
  EXPECT_EQ(va.leader_address, "http://b");
}

TEST(LeaseKeeperTest, ReleaseHandsTheLeaseOverAtOnceAndPauseKeepsAServerOut) {
  ManualClock clock;
  InMemoryStore store(clock);
  LeaseKeeper a(store, clock, Options("a")), b(store, clock, Options("b"));
  a.Tick();
  ASSERT_TRUE(a.view().leader);
  ASSERT_TRUE(a.Release().ok());  // a graceful shutdown
  EXPECT_FALSE(a.view().leader);
  b.Tick();
  EXPECT_TRUE(b.view().leader);
  EXPECT_EQ(b.view().token, 2);

  b.Pause(5s);  // b could not load the ledger: it gives the lease up and stays out a while
  EXPECT_FALSE(b.view().leader);
  a.Tick();
  EXPECT_TRUE(a.view().leader);
  EXPECT_EQ(a.view().token, 3);
  clock.Advance(4s);
  ASSERT_TRUE(a.Release().ok());
  b.Tick();  // still paused: no attempt
  EXPECT_FALSE(b.view().leader);
  clock.Advance(1s);
  b.Tick();
  EXPECT_TRUE(b.view().leader);
  EXPECT_EQ(b.view().token, 4);
}

TEST(LeaseKeeperTest, AStoreErrorKeepsALeaderOnlyUntilItsLastRenewalRunsOut) {
  ManualClock clock;
  FlakyLeaseStore store(clock);
  LeaseKeeper a(store, clock, Options("a"));
  a.Tick();
  ASSERT_TRUE(a.view().leader);
  const uint64_t before = a.view().changes;
  store.down = true;
  clock.Advance(2s);
  a.Tick();  // fails: still the leader, the last renewal is recent
  EXPECT_TRUE(a.view().leader);
  EXPECT_EQ(a.view().changes, before);
  clock.Advance(2s);
  a.Tick();  // fails again, and the renewal has run out: a follower now (a change waiters see)
  EXPECT_FALSE(a.view().leader);
  EXPECT_GT(a.view().changes, before);
  store.down = false;
  a.Tick();  // nobody took it meanwhile: a renews under the same token
  EXPECT_TRUE(a.view().leader);
  EXPECT_EQ(a.view().token, 1);
}

TEST(LeaseKeeperTest, TheThreadRenewsAndWaitersSeeTheChange) {
  ManualClock clock;
  InMemoryStore store(clock);
  LeaseKeeperOptions o = Options("a");
  o.renew_every = 1ms;
  LeaseKeeper a(store, clock, o);
  LeaseView seen = a.view();
  EXPECT_FALSE(seen.leader);
  a.Start();
  LeaseView v = seen;
  for (int i = 0; i < 1000 && !v.leader; ++i) v = a.WaitForChange(v.changes, 100ms);
  EXPECT_TRUE(v.leader);
  EXPECT_EQ(v.token, 1);
  a.Stop();
  a.Stop();  // idempotent
}

TEST(LeaseKeeperTest, HolderIdsDifferBetweenKeepers) { EXPECT_NE(MakeLeaseHolderId(), MakeLeaseHolderId()); }

}  // namespace
}  // namespace abacus::server
