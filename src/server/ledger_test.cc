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

// Issue 21: an apply puts its objects in at once (PutConfigs): replaced objects keep their place,
// new ones come last, and the configuration is rebuilt once, as one new snapshot.
TEST(LedgerTest, PutConfigsReplacesInPlaceAndRebuildsOnce) {
  Ledger ledger;
  Configure(ledger, "kind: Tenant\nname: t\n---\n" + QueueYaml("q1"));
  ParsedDocuments docs = ParseDocuments(
      "kind: Queue\nname: q1\ntenant: t\nquotas:\n  - {resource: cpu, nominal: 8}\n---\n" + QueueYaml("q2") +
          "---\n" + QueueYaml("q3"),
      "a.yaml");
  ASSERT_TRUE(docs.diagnostics.empty()) << docs.diagnostics.ToString();
  std::vector<const SpecObject*> objects;
  for (const auto& d : docs.documents) objects.push_back(&d.object);
  const uint64_t generation = ledger.generation();
  std::shared_ptr<const TenancyConfig> before = ledger.ConfigSnapshot();
  TenancyConfig merged = ledger.MergedConfig(objects);  // changes nothing
  EXPECT_EQ(ledger.ConfigSnapshot(), before);
  ASSERT_NE(merged.FindQueue("q3"), nullptr);

  ledger.PutConfigs(objects);
  EXPECT_EQ(ledger.generation(), generation + 1);  // one rebuild for three objects
  EXPECT_EQ(before->FindQueue("q2"), nullptr);     // the old snapshot is untouched
  ASSERT_EQ(ledger.config_objects().size(), 4u);
  EXPECT_EQ(ledger.config_objects()[1].first, "queue/q1");  // replaced in place
  EXPECT_EQ(ledger.config_objects()[2].first, "queue/q2");
  EXPECT_EQ(ledger.config_objects()[3].first, "queue/q3");
  EXPECT_EQ(ledger.config().FindQueue("q1")->quotas[0].nominal.milli(), 8000);
  EXPECT_NE(ledger.ConfigSnapshot()->FindQueue("q3"), nullptr);
  // Afterwards PutConfig works alone again.
  Configure(ledger, QueueYaml("q4"));
  EXPECT_EQ(ledger.generation(), generation + 2);
  EXPECT_EQ(ledger.config_objects().size(), 5u);
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

// A change of the nodes or the configuration retires the fit checker until the next snapshot
// is built from the new inventory: a submission in between gets no NeverFits verdict from the
// inventory before the change (one that would call work on a just-registered node unrunnable;
// CliTest.SubmitWarnsAtOnceWhenWorkCanNeverRun failed on it when the machine was loaded).
TEST(LedgerTest, ANodeOrConfigChangeRetiresTheFitCheckerUntilTheNextSnapshot) {
  Ledger ledger;
  Configure(ledger, "kind: Tenant\nname: t\n---\n" + QueueYaml("q1"));
  auto snapshot = [&ledger] {
    SnapshotIndex index;
    ledger.BuildSnapshot(Time{}, index, sched::ScopeOf(sched::CycleKind::kFull, 0), nullptr);
  };
  snapshot();
  std::shared_ptr<const FitChecker> first = ledger.FitCheckerSnapshot();
  ASSERT_NE(first, nullptr);
  NodeRecord node;
  node.node.name = "n1";
  ledger.PutNode(node);
  EXPECT_EQ(ledger.FitCheckerSnapshot(), nullptr);
  snapshot();
  std::shared_ptr<const FitChecker> second = ledger.FitCheckerSnapshot();
  ASSERT_NE(second, nullptr);
  EXPECT_NE(second, first);
  Configure(ledger, QueueYaml("q2"));
  EXPECT_EQ(ledger.FitCheckerSnapshot(), nullptr);
  snapshot();
  EXPECT_NE(ledger.FitCheckerSnapshot(), nullptr);
}

}  // namespace
}  // namespace abacus::server
