#include "server/ledger.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "workload/documents.h"

namespace abacus::server {
namespace {

// Adds the objects of `yaml` to the ledger's configuration.
void Configure(Ledger& ledger, const std::string& yaml) {
  ParsedDocuments docs = ParseDocuments(yaml, "config.yaml");
  ASSERT_TRUE(docs.diagnostics.empty()) << docs.diagnostics.ToString();
  for (const auto& d : docs.documents) ledger.PutConfig(d.object);
}

std::string QueueYaml(const std::string& name) {
  return "kind: Queue\nname: " + name + "\ntenant: t\nquotas:\n  - {resource: cpu, nominal: 4}\n";
}

TEST(LedgerTest, AConfigSnapshotStaysAsTakenWhileTheConfigurationIsReplaced) {
  Ledger ledger;
  Configure(ledger, "kind: Tenant\nname: t\n---\n" + QueueYaml("q1"));
  std::shared_ptr<const TenancyConfig> before = ledger.ConfigSnapshot();
  EXPECT_NE(before->FindQueue("q1"), nullptr);
  EXPECT_EQ(&ledger.config(), before.get());
  Configure(ledger, QueueYaml("q2"));
  EXPECT_EQ(before->FindQueue("q2"), nullptr);  // a snapshot is never changed in place
  std::shared_ptr<const TenancyConfig> after = ledger.ConfigSnapshot();
  EXPECT_NE(after->FindQueue("q1"), nullptr);
  EXPECT_NE(after->FindQueue("q2"), nullptr);
  EXPECT_EQ(&ledger.config(), after.get());
}

// Issue 21: an apply plans the next configuration without changing the ledger, then swaps it
// in; replaced objects keep their place, new ones come last, and the plan holds the old one.
TEST(LedgerTest, APlannedConfigurationChangesNothingUntilInstalled) {
  Ledger ledger;
  Configure(ledger, "kind: Tenant\nname: t\n---\n" + QueueYaml("q1"));
  ParsedDocuments docs = ParseDocuments(
      "kind: Queue\nname: q1\ntenant: t\nquotas:\n  - {resource: cpu, nominal: 8}\n---\n" + QueueYaml("q2"), "a.yaml");
  ASSERT_TRUE(docs.diagnostics.empty()) << docs.diagnostics.ToString();
  std::vector<const SpecObject*> objects;
  for (const auto& d : docs.documents) objects.push_back(&d.object);
  const uint64_t generation = ledger.generation();
  std::shared_ptr<const TenancyConfig> before = ledger.ConfigSnapshot();

  Ledger::ConfigPlan plan = ledger.PlanConfig(objects);
  EXPECT_EQ(ledger.generation(), generation);
  EXPECT_EQ(ledger.ConfigSnapshot(), before);
  EXPECT_EQ(ledger.FindConfigObject("queue/q2"), nullptr);
  ASSERT_NE(plan.config->FindQueue("q2"), nullptr);
  EXPECT_EQ(plan.config->FindQueue("q1")->quotas[0].nominal.milli(), 8000);

  ledger.InstallConfig(plan);
  EXPECT_GT(ledger.generation(), generation);
  EXPECT_EQ(plan.config, before);  // the plan now holds the previous configuration
  ASSERT_EQ(ledger.config_objects().size(), 3u);
  EXPECT_EQ(ledger.config_objects()[1].first, "queue/q1");  // replaced in place
  EXPECT_EQ(ledger.config_objects()[2].first, "queue/q2");
  ASSERT_NE(ledger.FindConfigObject("queue/q2"), nullptr);
  EXPECT_EQ(ledger.config().FindQueue("q1")->quotas[0].nominal.milli(), 8000);
}

TEST(LedgerTest, SnapshotsCanBeReadWhileTheConfigurationChanges) {
  Ledger ledger;
  Configure(ledger, "kind: Tenant\nname: t\n---\n" + QueueYaml("q0"));
  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  std::thread reader([&] {
    while (!done.load()) {
      auto config = ledger.ConfigSnapshot();
      // Every snapshot is whole: the first queue is always there, the tenant too.
      if (config->FindQueue("q0") == nullptr || config->FindTenant("t") == nullptr) {
        ADD_FAILURE() << "a snapshot lost an object";
        return;
      }
      reads.fetch_add(1);
    }
  });
  for (int i = 1; i <= 100; ++i) Configure(ledger, QueueYaml("q" + std::to_string(i)));
  done = true;
  reader.join();
  EXPECT_GT(reads.load(), 0);
  EXPECT_NE(ledger.ConfigSnapshot()->FindQueue("q100"), nullptr);
}

}  // namespace
}  // namespace abacus::server
