#include "meter/usage_ledger.h"

#include <gtest/gtest.h>

#include "meter/meter_test_util.h"
#include "store/forwarding_store.h"
#include "store/memory_store.h"
#include "store/store_test_util.h"

namespace abacus::meter {
namespace {

using namespace scenario;  // NOLINT: the scenario helpers
using abacus::testing_util::ScratchDir;

// An InMemoryStore "survives" a restart by being kept; SqliteStore is closed and reopened.
struct MemoryBackend {
  static constexpr bool kReopens = false;
  std::unique_ptr<Store> Open(const ScratchDir&, const Clock& clock) {
    if (!kept) kept = std::make_unique<InMemoryStore>(clock);
    // Forwards to the kept store, so that "closing" it loses nothing.
    return std::make_unique<ForwardingStore>(*kept);
  }
  std::unique_ptr<InMemoryStore> kept;
};

struct SqliteBackend {
  std::unique_ptr<Store> Open(const ScratchDir& dir, const Clock& clock) {
    auto s = OpenStore("sqlite://" + dir.File("abacus.db"), StoreOptions{&clock});
    return s.ok() ? std::move(s).value() : nullptr;
  }
};

template <typename Backend>
class UsageLedgerTest : public ::testing::Test {
 protected:
  void SetUp() override { Restart(); }
  // Drops the ledger and the store (a crash), then opens both again.
  void Restart() {
    ledger_.reset();
    store_.reset();
    store_ = backend_.Open(dir_, clock_);
    ASSERT_NE(store_, nullptr);
    auto ledger = UsageLedger::Load(*store_, clock_);
    ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
    ledger_ = std::move(ledger).value();
  }
  std::vector<UsageInterval> All() {
    auto all = ReadUsage(*store_, T(1, 0), T(9, 0));
    EXPECT_TRUE(all.ok());
    return all.value_or({});
  }

  ScratchDir dir_;
  ManualClock clock_{T(1, 0)};
  Backend backend_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<UsageLedger> ledger_;
};

using Backends = ::testing::Types<MemoryBackend, SqliteBackend>;
TYPED_TEST_SUITE(UsageLedgerTest, Backends);

TYPED_TEST(UsageLedgerTest, OpenAndClosePersistOneDocumentPerInterval) {
  auto id = this->ledger_->Open(Notebook());
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(*id, "nb-0@" + std::to_string(ToMicros(T(1, 10))));
  EXPECT_EQ(this->ledger_->OpenIntervals().size(), 1u);
  ASSERT_TRUE(this->ledger_->Close("nb-0", T(1, 14), EndReason::kCancelled).ok());
  EXPECT_TRUE(this->ledger_->OpenIntervals().empty());
  auto all = this->All();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0], ScenarioIntervals()[2]);
  EXPECT_EQ(this->store_->Count(UsageLedger::kKind).value(), 1);
}

TYPED_TEST(UsageLedgerTest, RejectsASecondOpenIntervalAndUnknownCloses) {
  ASSERT_TRUE(this->ledger_->Open(Notebook()).ok());
  EXPECT_EQ(this->ledger_->Open(Notebook()).status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(this->ledger_->Close("nope", T(1, 11), EndReason::kFailed).code(), StatusCode::kNotFound);
  EXPECT_EQ(this->ledger_->Close("nb-0", T(1, 11), EndReason::kOpen).code(), StatusCode::kInvalidArgument);
}

TYPED_TEST(UsageLedgerTest, FindOpenReturnsTheOpenIntervalUntilItCloses) {
  UsageInterval nb = Notebook();
  ASSERT_TRUE(this->ledger_->Open(nb).ok());
  auto found = this->ledger_->FindOpen(nb.task_id);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->queue, nb.queue);
  EXPECT_EQ(found->start, nb.start);
  EXPECT_FALSE(this->ledger_->FindOpen("nope").has_value());
  ASSERT_TRUE(this->ledger_->Close(nb.task_id, nb.start + std::chrono::hours(1), EndReason::kSucceeded).ok());
  EXPECT_FALSE(this->ledger_->FindOpen(nb.task_id).has_value());
}

TYPED_TEST(UsageLedgerTest, OpenWithoutStartUsesTheClock) {
  this->clock_.Set(T(1, 5));
  UsageInterval iv = Notebook();
  iv.start = Time{};
  ASSERT_TRUE(this->ledger_->Open(iv).ok());
  EXPECT_EQ(this->ledger_->OpenIntervals()[0].start, T(1, 5));
}

TYPED_TEST(UsageLedgerTest, OpenIntervalsSurviveARestart) {
  ASSERT_TRUE(this->ledger_->Open(Infer(0)).ok());
  this->Restart();
  ASSERT_EQ(this->ledger_->OpenIntervals().size(), 1u);
  EXPECT_TRUE(this->ledger_->Close("inf-0", T(1, 21), EndReason::kSucceeded).ok());
}

TYPED_TEST(UsageLedgerTest, RecoverClosesGoneTasksAtTheCheckpointAndKeepsRunningOnes) {
  ASSERT_TRUE(this->ledger_->Open(Infer(0)).ok());
  ASSERT_TRUE(this->ledger_->Open(Infer(1)).ok());
  this->clock_.Set(T(1, 23));
  ASSERT_TRUE(this->ledger_->Checkpoint().ok());
  this->Restart();
  EXPECT_EQ(this->ledger_->LastCheckpoint().value(), T(1, 23));

  auto r = this->ledger_->Recover(T(2, 1), {"inf-1"});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->closed, 1);
  EXPECT_EQ(r->kept, 1);
  EXPECT_EQ(this->ledger_->LastCheckpoint().value(), T(2, 1));
  auto again = this->ledger_->Recover(T(2, 1), {"inf-1"});  // idempotent: nothing more closes
  EXPECT_EQ(again->closed, 0);
  ASSERT_TRUE(this->ledger_->Close("inf-1", T(2, 3), EndReason::kScaledDown).ok());

  auto all = this->All();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0], ScenarioIntervals()[3]);  // inf-0: 20:00–23:00 ServerRestart
  EXPECT_EQ(all[1], ScenarioIntervals()[4]);  // inf-1: one interval, 20:00–03:00
}

TYPED_TEST(UsageLedgerTest, RecoverPrefersALaterNodeHeartbeatAndNeverEndsBeforeStart) {
  ASSERT_TRUE(this->ledger_->Open(Infer(0)).ok());                       // gpu-3, from 20:00
  ASSERT_TRUE(this->ledger_->Open(TrainA(T(1, 22))).ok());               // gpu-1, from 22:00
  this->clock_.Set(T(1, 21));
  ASSERT_TRUE(this->ledger_->Checkpoint().ok());
  this->Restart();
  auto r = this->ledger_->Recover(T(2, 1), {}, {{"gpu-3", T(1, 21, 30)}});
  ASSERT_EQ(r->closed, 2);
  auto all = this->All();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].end, T(1, 22));      // a-0 opened after the checkpoint: zero length
  EXPECT_EQ(all[1].end, T(1, 21, 30));  // inf-0: its node's heartbeat is later than the checkpoint
}

TYPED_TEST(UsageLedgerTest, RecoverWithoutACheckpointClosesAtTheStart) {
  ASSERT_TRUE(this->ledger_->Open(Infer(0)).ok());
  this->Restart();
  ASSERT_EQ(this->ledger_->Recover(T(2, 1), {})->closed, 1);
  EXPECT_EQ(this->All()[0].end, T(1, 20));
}

TEST(UsageCodecTest, RoundTripsAndRejectsContradictions) {
  UsageInterval iv = ScenarioIntervals()[0];
  auto back = UsageFromJson(UsageToJson(iv));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, iv);
  nlohmann::json j = UsageToJson(iv);
  j["endReason"] = "Open";
  EXPECT_FALSE(UsageFromJson(j).ok());
  j["endReason"] = "Sideways";
  EXPECT_FALSE(UsageFromJson(j).ok());
  EXPECT_FALSE(UsageFromJson(nlohmann::json::array()).ok());
}

}  // namespace
}  // namespace abacus::meter
