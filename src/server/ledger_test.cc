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
