// The metering scenario end to end (see meter_test_util.h): the ledger records it on a SQLite
// file across a crash and restart, and the usage report prices it; every number is computed
// by hand in the comments.
#include <gtest/gtest.h>

#include "meter/meter_test_util.h"
#include "meter/reports.h"
#include "meter/usage_ledger.h"
#include "store/store_test_util.h"

namespace abacus::meter {
namespace {

using namespace scenario;  // NOLINT: the scenario helpers

class MeteringScenarioTest : public ::testing::Test {
 protected:
  void Open() {
    auto store = OpenStore("sqlite://" + dir_.File("abacus.db"), StoreOptions{&clock_});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
    auto ledger = UsageLedger::Load(*store_, clock_);
    ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
    ledger_ = std::move(ledger).value();
  }
  void Crash() {
    ledger_.reset();
    store_.reset();
  }
  // At `t`: `f` happens, then the periodic checkpoint.
  template <typename F>
  void At(Time t, F&& f) {
    clock_.Set(t);
    f();
    ASSERT_TRUE(ledger_->Checkpoint().ok());
  }
  void Play() {
    Open();
    At(T(1, 8), [&] { ASSERT_TRUE(ledger_->Open(TrainA(T(1, 8))).ok()); });
    At(T(1, 10), [&] { ASSERT_TRUE(ledger_->Open(Notebook()).ok()); });
    At(T(1, 14), [&] { ASSERT_TRUE(ledger_->Close("nb-0", T(1, 14), EndReason::kCancelled).ok()); });
    At(T(1, 16), [&] { ASSERT_TRUE(ledger_->Close("a-0", T(1, 16), EndReason::kPreempted).ok()); });
    At(T(1, 20), [&] {
      ASSERT_TRUE(ledger_->Open(Infer(0)).ok());
      ASSERT_TRUE(ledger_->Open(Infer(1)).ok());
    });
    At(T(1, 23), [] {});
    // Requeued train-a starts again after the last checkpoint; then the server crashes.
    clock_.Set(T(2, 0));
    ASSERT_TRUE(ledger_->Open(TrainA(T(2, 0))).ok());
    Crash();
    // Restart at 01:00: agents report a-0 and inf-1 running; inf-0 is gone.
    clock_.Set(T(2, 1));
    Open();
    auto r = ledger_->Recover(T(2, 1), {"a-0", "inf-1"});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->closed, 1);
    EXPECT_EQ(r->kept, 2);
    At(T(2, 2), [&] { ASSERT_TRUE(ledger_->Close("a-0", T(2, 2), EndReason::kSucceeded).ok()); });
    At(T(2, 3), [&] { ASSERT_TRUE(ledger_->Close("inf-1", T(2, 3), EndReason::kScaledDown).ok()); });
  }
  std::vector<UsageInterval> Intervals() {
    auto all = ledger_->Read(T(1, 0), T(3, 0));
    EXPECT_TRUE(all.ok());
    return all.value_or({});
  }
  Table Usage(const std::string& by, ReportWindow window = ScenarioWindow()) {
    auto intervals = Intervals();
    auto grouping = ParseGrouping(by);
    EXPECT_TRUE(grouping.ok());
    auto t = UsageReport(intervals, {window, *grouping, &prices_});
    EXPECT_TRUE(t.ok());
    return t.value_or(Table{});
  }

  abacus::testing_util::ScratchDir dir_;
  ManualClock clock_{T(1, 0)};
  PriceList prices_ = ScenarioPrices();
  std::unique_ptr<Store> store_;
  std::unique_ptr<UsageLedger> ledger_;
};

TEST_F(MeteringScenarioTest, LedgerHoldsEachIntervalOnceAcrossTheRestart) {
  Play();
  std::vector<UsageInterval> got = Intervals();
  std::vector<UsageInterval> want = ScenarioIntervals();
  auto by_id = [](const UsageInterval& a, const UsageInterval& b) { return a.id < b.id; };
  std::sort(want.begin(), want.end(), by_id);
  EXPECT_EQ(got, want);
  EXPECT_TRUE(ledger_->OpenIntervals().empty());
}

TEST_F(MeteringScenarioTest, UsageAndCostByTenantAsCsv) {
  Play();
  // nlp: train-a 8h + 2h × 4 A100 = 40 device-hours; 4h×4×2.00 + 4h×4×3.00 + 2h×4×3.00 = 104.00;
  //      10h × 8 cores = 80 core-hours × 0.04 = 3.20; 10h × 64Gi = 640 GiB-hours × 0.01 = 6.40.
  // vision: notebook 4h × 0.5 = 2 (2h×0.5×2.00 + 2h×0.5×3.00 = 5.00), infer 3h + 7h of T4 at
  //      gpu/* 1.00 = 10.00; cores 4h×2 + 10h×4 = 48 (1.92); GiB 4h×16 + 10h×8 = 144 (1.44).
  EXPECT_EQ(RenderCsv(Usage("tenant")),
            "tenant,workloads,deviceHours,cpuCoreHours,memoryGiBHours,deviceCost,cpuCost,memoryCost,cost\r\n"
            "nlp,1,40.000,80.000,640.000,104.00,3.20,6.40,113.60\r\n"
            "vision,2,12.000,48.000,144.000,15.00,1.92,1.44,18.36\r\n");
}

TEST_F(MeteringScenarioTest, UsageByFlavorAndDaySplitsAtMidnight) {
  Play();
  Table t = Usage("flavor,day");
  ASSERT_EQ(t.columns[0].name, "period");
  std::vector<std::vector<std::string>> want = {
      // A100 Mar 1: train-a 32 + notebook 2 device-hours; 80.00 + 5.00; 72 core-h; 576 GiB-h.
      {"2026-03-01", kA100, "2", "34.000", "72.000", "576.000", "85.00", "2.88", "5.76", "93.64"},
      // T4 Mar 1: inf-0 3h + inf-1 4h.
      {"2026-03-01", kT4, "1", "7.000", "28.000", "56.000", "7.00", "1.12", "0.56", "8.68"},
      {"2026-03-02", kA100, "1", "8.000", "16.000", "128.000", "24.00", "0.64", "1.28", "25.92"},
      {"2026-03-02", kT4, "1", "3.000", "12.000", "24.000", "3.00", "0.48", "0.24", "3.72"},
  };
  EXPECT_EQ(t.rows, want);
  EXPECT_EQ(t.notes[0], "total: 3 workloads, 52.000 device-hours, 128.000 core-hours, 784.000 GiB-hours, "
                        "cost 131.96 USD");
}

TEST_F(MeteringScenarioTest, UsageByHourSplitsAtEachHourWithinTheWindow) {
  Play();
  // 09:30–11:00 on Mar 1: train-a's 4 A100 from 09:30, the notebook's half A100 from 10:00.
  Table t = Usage("flavor,hour", ReportWindow{T(1, 9, 30), T(1, 11), T(2, 12)});
  std::vector<std::vector<std::string>> want = {
      // 0.5h × 4 = 2 device-hours × 2.00; 4 core-h × 0.04; 32 GiB-h × 0.01.
      {"2026-03-01T09:00:00Z", kA100, "1", "2.000", "4.000", "32.000", "4.00", "0.16", "0.32", "4.48"},
      // 4 + 0.5 device-hours × 2.00; 8 + 2 core-h; 64 + 16 GiB-h.
      {"2026-03-01T10:00:00Z", kA100, "2", "4.500", "10.000", "80.000", "9.00", "0.40", "0.80", "10.20"},
  };
  EXPECT_EQ(t.rows, want);
}

TEST_F(MeteringScenarioTest, WeeksStartOnMondayAndMonthsHoldEverything) {
  Play();
  Table weeks = Usage("week");
  ASSERT_EQ(weeks.rows.size(), 2u);
  EXPECT_EQ(weeks.rows[0][0], "2026-02-23");  // Sunday Mar 1 belongs to the week of Feb 23
  EXPECT_EQ(weeks.rows[0][9 - 1], "102.32");  // 93.64 + 8.68
  EXPECT_EQ(weeks.rows[1][0], "2026-03-02");
  EXPECT_EQ(weeks.rows[1][8], "29.64");       // 25.92 + 3.72
  Table months = Usage("month");
  ASSERT_EQ(months.rows.size(), 1u);
  EXPECT_EQ(months.rows[0], (std::vector<std::string>{"2026-03", "3", "52.000", "128.000", "784.000",
                                                      "119.00", "5.12", "7.84", "131.96"}));
}

TEST_F(MeteringScenarioTest, EachGroupingKey) {
  Play();
  auto column = [](const Table& t, int c) {
    std::vector<std::string> out;
    for (const auto& r : t.rows) out.push_back(r[c]);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(column(Usage("project"), 0), (V{"nlp/main", "vision/main"}));
  EXPECT_EQ(column(Usage("queue"), 0), (V{"nlp-train", "vision-exp", "vision-serve"}));
  EXPECT_EQ(column(Usage("queue"), 2), (V{"40.000", "2.000", "10.000"}));
  EXPECT_EQ(column(Usage("model"), 0), (V{"", "llama"}));
  EXPECT_EQ(column(Usage("model"), 2), (V{"12.000", "40.000"}));
  EXPECT_EQ(column(Usage("cluster"), 2), (V{"52.000"}));
  EXPECT_EQ(column(Usage("kind"), 0), (V{"Experiment", "InferenceService", "TrainingJob"}));
  EXPECT_EQ(column(Usage("kind"), 8), (V{"5.96", "12.40", "113.60"}));
  EXPECT_EQ(column(Usage("reason"), 0), (V{"Cancelled", "Preempted", "ScaledDown", "ServerRestart", "Succeeded"}));
  EXPECT_EQ(column(Usage("reason"), 2), (V{"2.000", "32.000", "7.000", "3.000", "8.000"}));
  Table two = Usage("tenant,flavor");
  EXPECT_EQ(two.rows.size(), 3u);
  EXPECT_EQ(two.rows[1], (V{"vision", kA100, "1", "2.000", "8.000", "64.000", "5.00", "0.32", "0.64", "5.96"}));
}

TEST_F(MeteringScenarioTest, WindowClipsIntervals) {
  Play();
  // Mar 1 12:00–24:00: train-a 12–16 at 3.00 (48.00 + 4h×8×0.04 = 1.28 + 4h×64×0.01 = 2.56).
  Table t = Usage("tenant", ReportWindow{T(1, 12), T(2, 0), T(3, 0)});
  EXPECT_EQ(t.rows[0], (std::vector<std::string>{"nlp", "1", "16.000", "32.000", "256.000", "48.00", "1.28",
                                                 "2.56", "51.84"}));
}

TEST_F(MeteringScenarioTest, OpenIntervalsCountUntilNow) {
  Open();
  clock_.Set(T(1, 8));
  ASSERT_TRUE(ledger_->Open(TrainA(T(1, 8))).ok());
  Table t = Usage("tenant", ReportWindow{T(1, 0), T(2, 0), T(1, 11)});  // now: 11:00
  EXPECT_EQ(t.rows[0][2], "12.000");  // 3h × 4
  EXPECT_EQ(t.rows[0][5], "24.00");   // 3h × 4 × 2.00
}

}  // namespace
}  // namespace abacus::meter
