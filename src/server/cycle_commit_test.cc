// The scheduling cycle's write path (issue 22, point 1): decisions are assumed on working copies
// of the records, committed, and only then swapped into the ledger, as every other write. So a
// reader never sees an admission before it is durable, and a cycle whose commit fails leaves the
// records exactly as they were committed.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <variant>

#include "server/control_plane_fixture.h"
#include "server/server_test_util.h"
#include "store/store.h"

namespace abacus::server {
namespace {

using nlohmann::json;

// Forwards to the opened store, except a commit whose batch admits a workload (an "Admitted"
// event): while held it waits at a gate, while failing it is refused.
class AdmissionGate final : public Store {
 public:
  explicit AdmissionGate(std::unique_ptr<Store> inner) : inner_(std::move(inner)) {}

  void Hold() {
    std::lock_guard lock(mu_);
    held_ = true;
  }
  void Release() {
    {
      std::lock_guard lock(mu_);
      held_ = false;
    }
    cv_.notify_all();
  }
  void Fail(bool fail) { failing_.store(fail); }
  // Blocks until `n` admitting commits have arrived (held, failed or passed).
  void WaitForAdmissions(int n) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return arrivals_ >= n; });
  }

  void CommitGroup(std::span<const WriteBatch* const> batches, std::span<CommitResult* const> results,
                   std::span<Status> statuses) override {
    bool admits = false;
    for (const WriteBatch* b : batches) admits |= Admits(*b);
    if (admits) {
      std::unique_lock lock(mu_);
      ++arrivals_;
      cv_.notify_all();
      cv_.wait(lock, [&] { return !held_; });
      if (failing_.load()) {
        for (Status& s : statuses) s = Unavailable("test: the admission's commit fails");
        return;
      }
    }
    inner_->CommitGroup(batches, results, statuses);
  }
  Result<std::optional<ObjectRecord>> Get(std::string_view kind, std::string_view key) override {
    return inner_->Get(kind, key);
  }
  Result<std::vector<ObjectRecord>> List(std::string_view kind) override { return inner_->List(kind); }
  Result<int64_t> Count(std::string_view kind) override { return inner_->Count(kind); }
  Result<std::vector<EventRecord>> Events(std::string_view kind, std::string_view key, int64_t after_seq,
                                          size_t limit) override {
    return inner_->Events(kind, key, after_seq, limit);
  }
  Result<std::vector<JournalRecord>> Journal(std::string_view stream, int64_t after_seq, size_t limit) override {
    return inner_->Journal(stream, after_seq, limit);
  }
  Result<std::optional<std::string>> GetMeta(std::string_view key) override { return inner_->GetMeta(key); }
  Result<LeaseState> TryAcquireLease(std::string_view name, std::string_view holder, std::string_view address,
                                     Duration ttl) override {
    return inner_->TryAcquireLease(name, holder, address, ttl);
  }
  Status ReleaseLease(std::string_view name, std::string_view holder) override {
    return inner_->ReleaseLease(name, holder);
  }
  std::string Describe() const override { return "admission-gate:" + inner_->Describe(); }
  StoreCopyAccess* copy_access() override { return inner_->copy_access(); }

 private:
  static bool Admits(const WriteBatch& b) {
    for (const WriteOp& op : b.ops()) {
      if (const auto* ev = std::get_if<EventOp>(&op); ev != nullptr && ev->type == "Admitted") return true;
    }
    return false;
  }

  std::unique_ptr<Store> inner_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool held_ = false;  // guarded by mu_
  int arrivals_ = 0;   // guarded by mu_
  std::atomic<bool> failing_{false};
};

class CycleCommitTest : public testing_cp::ControlPlaneFixture {
 protected:
  void SetUp() override {
    ControlPlaneFixture::SetUp();
    Open([this](ControlPlaneOptions& o) {
      o.wrap_store = [this](std::unique_ptr<Store> inner) {
        auto gate = std::make_unique<AdmissionGate>(std::move(inner));
        gate_ = gate.get();
        return std::unique_ptr<Store>(std::move(gate));
      };
    });
    ApplyOrg(testing_org::AcmeOrg("train", 2));
    ASSERT_TRUE(cp_->RegisterAgent(testing_cp::A100Node("gpu-a", 2)).ok());
  }
  // Submits a one-GPU job and returns its id (its own commit is not held: it admits nothing).
  std::string Submit(const std::string& name) {
    auto r = cp_->Submit(testing_cp::A100Job(name, 1), false, "job.yaml");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? (*r)[0]["id"].get<std::string>() : "";
  }

  AdmissionGate* gate_ = nullptr;
};

// While the cycle's commit waits for the disk, readers see the workload as last committed:
// Pending, with no placement, and the queue holds nothing yet. Before the fix the loop changed
// the ledger's records in place before committing, and this read said Admitted.
TEST_F(CycleCommitTest, NoReaderSeesAnAdmissionBeforeItIsDurable) {
  gate_->Hold();
  const std::string id = Submit("held");
  gate_->WaitForAdmissions(1);  // the cycle decided and is committing
  json during = WorkloadJson(id);
  EXPECT_EQ(during["state"], "Pending") << during.dump();
  EXPECT_TRUE(during["placements"].empty()) << during.dump();
  gate_->Release();
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
  gate_->WaitForAdmissions(1);
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

}  // namespace
}  // namespace abacus::server
