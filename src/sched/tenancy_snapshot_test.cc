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

}  // namespace
}  // namespace abacus::sched
