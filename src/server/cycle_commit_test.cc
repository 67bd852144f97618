// The scheduling cycle's write path (issue 22, point 1): decisions are assumed on working copies
// of the records, committed, and only then swapped into the ledger, as every other write. So a
// reader never sees an admission before it is durable, and a cycle whose commit fails leaves the
// records exactly as they were committed.
#include <gtest/gtest.h>

#include <memory>
#include <span>
#include <string>
#include <variant>

#include "common/test_eventually.h"
#include "server/control_plane_fixture.h"
#include "server/server_test_util.h"
#include "store/store.h"
#include "store/store_test_util.h"

namespace abacus::server {
namespace {

using nlohmann::json;

// True when one of `batches` admits a workload (an "Admitted" event): the commit the gate holds.
bool Admits(std::span<const WriteBatch* const> batches) {
  for (const WriteBatch* b : batches) {
    for (const WriteOp& op : b->ops()) {
      if (const auto* ev = std::get_if<EventOp>(&op); ev != nullptr && ev->type == "Admitted") return true;
    }
  }
  return false;
}

class CycleCommitTest : public testing_cp::ControlPlaneFixture {
 protected:
  void SetUp() override {
    ControlPlaneFixture::SetUp();
    Open([this](ControlPlaneOptions& o) {
      o.wrap_store = [this](std::unique_ptr<Store> inner) {
        auto gate = std::make_unique<testing_util::GatedStore>(std::move(inner), Admits);
        gate_ = gate.get();
        return std::unique_ptr<Store>(std::move(gate));
      };
    });
    ApplyOrg(testing_org::AcmeOrg("train", 2));
    ASSERT_TRUE(cp_->RegisterAgent(testing_cp::A100Node("gpu-a", 2), nullptr).ok());
  }
  // Submits a one-GPU job and returns its id (its own commit is not held: it admits nothing).
  std::string Submit(const std::string& name) {
    auto r = cp_->Submit(testing_cp::A100Job(name, 1), false, "job.yaml", nullptr, {}, false, nullptr);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->answer.submitted[0].id : "";
  }

  testing_util::GatedStore* gate_ = nullptr;  // holds or refuses only the commits that admit
};

// While the cycle's commit waits for the disk, readers see the workload as last committed:
// Pending, with no placement, and the queue holds nothing yet. Before the fix the loop changed
// the ledger's records in place before committing, and this read said Admitted.
TEST_F(CycleCommitTest, NoReaderSeesAnAdmissionBeforeItIsDurable) {
  gate_->Close();
  const std::string id = Submit("held");
  gate_->WaitForArrivals(1);  // the cycle decided and is committing
  json during = WorkloadJson(id);
  EXPECT_EQ(during["state"], "Pending") << during.dump();
  EXPECT_TRUE(during["placements"].empty()) << during.dump();
  gate_->Open();
  cp_->WaitForCycle();
  json after = WorkloadJson(id);
  EXPECT_EQ(after["state"], "Admitted") << after.dump();
  ASSERT_EQ(after["placements"].size(), 1u) << after.dump();
  EXPECT_EQ(after["placements"][0]["node"], "gpu-a");
}

// A cycle whose commit fails changes nothing anyone can see, and the next timer cycle (which
// retries every waiting workload) admits the workload once the store takes writes again.
TEST_F(CycleCommitTest, AFailedCycleCommitLeavesTheRecordsAsCommitted) {
  gate_->Fail(true);
  const std::string id = Submit("refused");
  gate_->WaitForArrivals(1);
  cp_->WaitForCycle();
  json failed = WorkloadJson(id);
  EXPECT_EQ(failed["state"], "Pending") << failed.dump();
  EXPECT_TRUE(failed["placements"].empty()) << failed.dump();
  EXPECT_FALSE(failed.contains("admittedAt")) << failed.dump();
  gate_->Fail(false);
  clock_.Advance(std::chrono::seconds(2));  // past the default cycle_interval (1 s)
  cp_->WaitForCycle();
  cp_->WaitForCycle();
  json admitted = WorkloadJson(id);
  EXPECT_EQ(admitted["state"], "Admitted") << admitted.dump();
  EXPECT_EQ(admitted["placements"].size(), 1u) << admitted.dump();
}

// The loop does not wait for its own commits (issue 22.3): while a cycle's commit is held at the
// disk, the loop takes its next turn and hands the committer the batch of a task report that
// arrived meanwhile. Neither change is visible until it is durable; once the disk answers, both
// settle, in order. Before the change the loop sat inside the cycle's commit and the report's
// batch never reached the committer until the gate opened (the first wait below gave up).
TEST_F(CycleCommitTest, TheLoopGoesOnWhileItsCycleCommits) {
  const std::string first = Submit("first");
  cp_->WaitForCycle();
  ASSERT_EQ(WorkloadJson(first)["state"], "Admitted");
  auto running = cp_->AgentStatus("gpu-a", json{{"node", "gpu-a"},
                                                {"tasks", json::array({{{"taskId", first + ".0.0.1"},
                                                                        {"phase", "Running"},
                                                                        {"pid", 7},
                                                                        {"startedAt", "2026-01-01T00:10:00.000Z"}}})}});
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  cp_->WaitForCycle();
  ASSERT_EQ(WorkloadJson(first)["state"], "Running");

  gate_->Close();
  const std::string second = Submit("second");
  gate_->WaitForArrivals(2);  // the cycle admitting `second` waits at the disk (the first admitted `first`)
  auto exited = cp_->AgentStatus("gpu-a", json{{"node", "gpu-a"},
                                               {"tasks", json::array({{{"taskId", first + ".0.0.1"},
                                                                       {"phase", "Exited"},
                                                                       {"exitCode", 0},
                                                                       {"startedAt", "2026-01-01T00:10:00.000Z"},
                                                                       {"finishedAt", "2026-01-01T00:11:00.000Z"}}})}});
  ASSERT_TRUE(exited.ok()) << exited.status().ToString();
  Committer& committer = cp_->governance().committer();
  EXPECT_TRUE(Eventually([&] { return committer.queued() >= 1; }))
      << "the loop did not hand over the report's batch while its cycle was committing";
  EXPECT_EQ(WorkloadJson(first)["state"], "Running");    // the report is not durable yet
  EXPECT_EQ(WorkloadJson(second)["state"], "Pending");   // nor the admission
  gate_->Open();
  cp_->WaitForCycle();
  EXPECT_EQ(WorkloadJson(second)["state"], "Admitted");
  EXPECT_TRUE(Eventually([&] { return WorkloadJson(first)["state"] == "Succeeded"; }))
      << WorkloadJson(first).dump();
  // Two admissions and two reports went through the loop's own commits (/metrics counts them).
  const std::string metrics = cp_->RenderMetrics();
  const size_t at = metrics.find("\nabacus_loop_commits_total ");
  ASSERT_NE(at, std::string::npos) << metrics;
  EXPECT_GE(std::stoll(metrics.substr(at + std::string("\nabacus_loop_commits_total ").size())), 4);
  EXPECT_NE(metrics.find("\nabacus_loop_commit_waits_total "), std::string::npos);
}

}  // namespace
}  // namespace abacus::server
