#include "server/queue_fields.h"

#include <gtest/gtest.h>

namespace abacus::server {
namespace {

Queue MakeQueue(const std::string& cohort, int64_t cpu) {
  Queue q;
  q.name = "q1";
  q.tenant = "t1";
  q.cohort = cohort;
  q.quotas.push_back({QuotaResource::Cpu(), Quantity::FromMilli(cpu * 1000), std::nullopt, std::nullopt});
  return q;
}

TEST(QueueFieldsTest, NamesEachPlatformFieldThatChanged) {
  Queue before = MakeQueue("c1", 64);
  Queue after = before;
  after.description = "ours";
  after.queueing_strategy = QueueingStrategy::kStrictFifo;
  after.clusters = {"east"};
  EXPECT_TRUE(ChangedPlatformQueueFields(&before, after).empty());  // the tenant's own fields

  after = MakeQueue("c2", 1000000);
  after.quotas[0].borrowing_limit = Quantity::FromMilli(5000);
  after.weight_milli = 2500;
  auto fields = ChangedPlatformQueueFields(&before, after);
  ASSERT_EQ(fields.size(), 4u);
  EXPECT_EQ(fields[0], "cohort (c1 → c2)");
  EXPECT_EQ(fields[1], "weight (1 → 2.5)");
  EXPECT_NE(fields[2].find("quotas[cpu].nominal (64 → "), std::string::npos) << fields[2];
  EXPECT_EQ(fields[3], "quotas[cpu].borrowingLimit (unset → 5)");

  after = before;
  after.quotas.clear();
  EXPECT_EQ(ChangedPlatformQueueFields(&before, after), std::vector<std::string>{"quotas[cpu] (removed)"});
  // A new queue: every platform field it sets.
  EXPECT_EQ(ChangedPlatformQueueFields(nullptr, before).size(), 2u);  // cohort, quotas[cpu].nominal
  Queue bare;
  bare.name = "q9";
  EXPECT_TRUE(ChangedPlatformQueueFields(nullptr, bare).empty());
}

}  // namespace
}  // namespace abacus::server
