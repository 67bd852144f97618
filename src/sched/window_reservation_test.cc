// Time-window reservations: occurrences, which nodes a reservation holds, who owns it.
#include "sched/window_reservation.h"

#include <gtest/gtest.h>

namespace abacus::sched {
namespace {

using std::chrono::hours;

Time H(int h) { return FromMicros(0) + hours(h); }

TEST(WindowReservationTest, OneWindowIsInForceUntilItsEndThenOver) {
  WindowReservation r;
  r.start = H(2);
  r.end = H(4);
  ASSERT_TRUE(CurrentWindow(r, H(0)));
  EXPECT_EQ(CurrentWindow(r, H(0))->start, H(2));
  EXPECT_EQ(CurrentWindow(r, H(3))->end, H(4));
  EXPECT_FALSE(CurrentWindow(r, H(4)));
}

TEST(WindowReservationTest, RecurringWindowMovesToTheNextOccurrence) {
  WindowReservation r;
  r.start = H(2);
  r.end = H(4);
  r.every = hours(24);
  auto w = CurrentWindow(r, H(5));
  ASSERT_TRUE(w);
  EXPECT_EQ(w->start, H(26));
  EXPECT_EQ(w->end, H(28));
  EXPECT_EQ(CurrentWindow(r, H(27))->start, H(26));
  EXPECT_EQ(CurrentWindow(r, H(28))->start, H(50));
  auto between = WindowsBetween(r, H(3), H(51));
  ASSERT_EQ(between.size(), 3u);  // 2–4 (in force at 3), 26–28, 50–52
  EXPECT_EQ(between[0].start, H(2));
  EXPECT_EQ(between[2].start, H(50));
}

TEST(WindowReservationTest, DeviceCountTakesNodesInOrderAndNamedNodesExactly) {
  const FlavorId a100 = Flavor::Parse("gpu/nvidia/A100").value().Intern();
  std::vector<NodeInfo> nodes(4);
  for (int i = 0; i < 4; ++i) {
    nodes[i].name = "n" + std::to_string(i);
    nodes[i].pool = i == 0 ? "other" : "train";
    for (int d = 0; d < 4; ++d) nodes[i].devices.push_back({d, a100});
  }
  nodes[2].state = NodeState::kCordoned;  // a drain does not move a reservation
  WindowReservation count;
  count.flavor = a100;
  count.devices = 6;
  count.pool = "train";
  WindowReservation named;
  named.nodes = {"n3", "missing"};
  auto held = ReservedNodes(nodes, {count, named});
  ASSERT_EQ(held.size(), 2u);
  EXPECT_EQ(held[0], (std::vector<NodeIndex>{1, 2}));
  EXPECT_EQ(held[1], (std::vector<NodeIndex>{3}));
}

TEST(WindowReservationTest, GateLetsTheOwnerAndShortWorkThrough) {
  std::vector<NodeInfo> nodes(2);
  nodes[0].name = "a";
  nodes[1].name = "b";
  std::vector<QueueInfo> queues(2);
  queues[0].name = "qa";
  queues[0].tenant = "team-a";
  queues[1].name = "qb";
  queues[1].tenant = "team-b";
  WindowReservation r;
  r.name = "r";
  r.nodes = {"b"};
  r.tenant = "team-a";
  r.start = H(6);
  r.end = H(8);
  std::vector<WindowReservation> rs = {r};
  ReservationGate gate(nodes, queues, rs, H(0));
  WorkloadInfo owner, bounded, unbounded;
  owner.queue = 0;
  bounded.queue = unbounded.queue = 1;
  bounded.max_runtime = hours(6);
  gate.For(owner);
  EXPECT_FALSE(gate.Blocks(1));
  gate.For(bounded);
  EXPECT_FALSE(gate.Blocks(1));  // ends exactly at the start
  gate.For(unbounded);
  EXPECT_TRUE(gate.Blocks(1));
  EXPECT_FALSE(gate.Blocks(0));
  EXPECT_NE(gate.Why(1).find("declares no maxRuntime"), std::string::npos);
  ReservationGate during(nodes, queues, rs, H(7));
  during.For(bounded);
  EXPECT_TRUE(during.Blocks(1));
  EXPECT_NE(during.Why(1).find("in force now"), std::string::npos);
  ReservationGate after(nodes, queues, rs, H(8));
  EXPECT_TRUE(after.empty());
}

}  // namespace
}  // namespace abacus::sched
