#include "sched/tenancy_snapshot.h"

#include <gtest/gtest.h>

#include "workload/documents.h"

namespace abacus::sched {
namespace {

TenancyConfig Config(const std::string& yaml) {
  ParsedDocuments parsed = ParseDocuments(yaml, "org.yaml");
  EXPECT_TRUE(parsed.diagnostics.empty()) << parsed.diagnostics.ToString();
  TenancyConfig config;
  Diagnostics diags;
  AddToTenancyConfig(parsed.documents, config, diags);
  return config;
}

// The server and the simulator translate a configuration with this one function (issue 22.4).
TEST(TenancySnapshotTest, CohortsQueuesAndPoolsBecomeTheSchedulersInput) {
  TenancyConfig config = Config(R"(kind: Tenant
name: acme
pools: [train]
---
kind: Cohort
name: root
---
kind: Cohort
name: org
parent: root
quotas: [{resource: cpu, nominal: 4}]
---
kind: Queue
name: q
tenant: acme
cohort: org
queueingStrategy: StrictFIFO
quotas:
  - {resource: gpu/nvidia/A100-80G, nominal: 8, borrowingLimit: 2}
---
kind: Pool
name: train
tenants: [acme]
---
kind: Pool
name: open
)");
  Snapshot s;
  std::map<std::string, int> queue_index;
  EXPECT_TRUE(AddTenancy(config, &s, &queue_index).empty());
  ASSERT_EQ(s.cohorts.size(), 2u);
  EXPECT_EQ(s.cohorts[1].name, "org");
  EXPECT_EQ(s.cohorts[1].parent, 0);
  EXPECT_EQ(s.cohorts[1].quotas[0].nominal, 4000);  // milli-cpu
  ASSERT_EQ(s.queues.size(), 1u);
  EXPECT_EQ(queue_index.at("q"), 0);
  EXPECT_EQ(s.queues[0].cohort, 1);
  EXPECT_EQ(s.queues[0].strategy, QueueingStrategy::kStrictFifo);
  EXPECT_EQ(s.queues[0].quotas[0].nominal, 8000);  // milli-devices
  EXPECT_EQ(s.queues[0].quotas[0].borrowing_limit, 2000);
  EXPECT_EQ(s.queues[0].allowed_pools, std::vector<std::string>{"train"});
  // A pool without tenants is open to all: it is not listed.
  EXPECT_EQ(s.pool_tenants.size(), 1u);
  EXPECT_EQ(s.pool_tenants.at("train"), std::vector<std::string>{"acme"});
}

TEST(TenancySnapshotTest, ReferencesToMissingCohortsAreLeftOutAndNamed) {
  TenancyConfig config;
  Cohort c;
  c.name = "org";
  c.parent = "gone";
  ASSERT_TRUE(config.AddCohort(c).ok());
  Queue q;
  q.name = "q";
  q.tenant = "acme";
  q.cohort = "missing";
  ASSERT_TRUE(config.AddQueue(q).ok());
  Snapshot s;
  std::vector<std::string> problems = AddTenancy(config, &s);
  EXPECT_EQ(problems, (std::vector<std::string>{"cohort org: unknown parent gone", "queue q: unknown cohort missing"}));
  EXPECT_EQ(s.cohorts[0].parent, kNone);
  EXPECT_EQ(s.queues[0].cohort, kNone);
}

// kind Reservation reaches the scheduler as a WindowReservation; YAML and JSON decode alike.
TEST(TenancySnapshotTest, ReservationsBecomeWindowReservations) {
  TenancyConfig config = Config(R"(kind: Reservation
name: team-a-a100
devices: {flavor: gpu/nvidia/A100-80G, count: 4, pool: train}
tenant: team-a
start: 2026-12-05T02:00:00Z
end: 2026-12-05T06:00:00Z
recurrence: daily
---
kind: Reservation
name: node3-maint
nodes: [node-3]
start: 2026-12-06T02:00:00Z
end: 2026-12-06T04:00:00Z
recurrence: {every: 168h}
drain: true
drainGrace: 30m
)");
  Snapshot s;
  AddTenancy(config, &s);
  ASSERT_EQ(s.window_reservations.size(), 2u);
  const WindowReservation& a = s.window_reservations[0];
  EXPECT_EQ(a.name, "team-a-a100");
  EXPECT_EQ(Flavor::FromId(a.flavor).name(), "gpu/nvidia/A100-80G");
  EXPECT_EQ(a.devices, 4);
  EXPECT_EQ(a.pool, "train");
  EXPECT_EQ(a.tenant, "team-a");
  EXPECT_EQ(FormatTime(a.start), "2026-12-05T02:00:00.000Z");
  EXPECT_EQ(a.every, std::chrono::hours(24));
  const WindowReservation& m = s.window_reservations[1];
  EXPECT_EQ(m.nodes, std::vector<std::string>{"node-3"});
  EXPECT_TRUE(m.drain);
  EXPECT_EQ(m.every, std::chrono::hours(168));
  EXPECT_EQ(config.FindReservation("node3-maint")->drain_grace, std::chrono::minutes(30));
}

TEST(TenancySnapshotTest, ReservationMistakesAreReportedAtTheirFields) {
  ParsedDocuments parsed = ParseDocuments(R"(kind: Reservation
name: bad
nodes: [n1]
devices: {flavor: gpu/nvidia/A100-80G, count: 0}
tenant: a
user: bob
start: 2026-12-05T06:00:00Z
end: 2026-12-05T02:00:00Z
recurrence: hourly
)",
                                          "r.yaml");
  const std::string text = parsed.diagnostics.ToString();
  EXPECT_NE(text.find("give nodes or devices, one of them"), std::string::npos) << text;
  EXPECT_NE(text.find("devices.count: must be at least 1"), std::string::npos) << text;
  EXPECT_NE(text.find("a reservation is for one owner"), std::string::npos) << text;
  EXPECT_NE(text.find("end: must be after start"), std::string::npos) << text;
  EXPECT_NE(text.find("expected daily, weekly or {every: DURATION}"), std::string::npos) << text;
}

}  // namespace
}  // namespace abacus::sched
