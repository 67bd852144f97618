// Hand-computed checks of the wait, failure, idle, shortage and borrowing reports, and of
// grouping errors.
#include <gtest/gtest.h>

#include "meter/borrowing.h"
#include "meter/meter_test_util.h"
#include "meter/reports.h"
#include "meter/table.h"

namespace abacus::meter {
namespace {

using namespace scenario;  // NOLINT: the scenario helpers
using Row = std::vector<std::string>;
using std::chrono::seconds;

Grouping By(const std::string& text) { return ParseGrouping(text).value(); }

WorkloadSummary Wl(std::string id, std::string queue, std::string flavor, Time submitted) {
  WorkloadSummary w;
  w.id = std::move(id);
  w.tenant = "nlp";
  w.queue = std::move(queue);
  w.flavor = std::move(flavor);
  w.kind = "TrainingJob";
  w.submitted = submitted;
  w.state = "Running";
  return w;
}

// The fourth probe: `report usage -o json` gave a one-second job on one device 0 device-hours,
// the 3-decimal cell of the printed table. JSON carries the hours with 9 decimals; the text and
// CSV print 3.
TEST(UsageReportTest, JsonCarriesHoursExactlyWhereTheTablePrintsThreeDecimals) {
  UsageInterval one_second = Closed(Task("blip", "blip-0", "nlp", "nlp-train", "TrainingJob", "gpu-1", kA100, 1000,
                                         1, 1, T(1, 8)),
                                    T(1, 8) + seconds(1), EndReason::kSucceeded);
  std::vector<UsageInterval> intervals{one_second};
  auto t = UsageReport(intervals, {ReportWindow{T(1, 0), T(2, 0), T(1, 10)}, By("tenant"), nullptr});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->rows.size(), 1u);
  const int device = t->ColumnIndex("deviceHours"), memory = t->ColumnIndex("memoryGiBHours");
  EXPECT_EQ(t->rows[0][device], "0.000");
  EXPECT_EQ(RenderCsv(*t).find("0.000277778"), std::string::npos);
  nlohmann::ordered_json j = TableToJson(*t);
  EXPECT_DOUBLE_EQ(j["rows"][0]["deviceHours"].get<double>(), 0.000277778) << j.dump();
  EXPECT_DOUBLE_EQ(j["rows"][0]["cpuCoreHours"].get<double>(), 0.000277778) << j.dump();
  EXPECT_DOUBLE_EQ(j["rows"][0][t->columns[memory].name].get<double>(), 0.000277778) << j.dump();
  EXPECT_EQ(j["rows"][0]["workloads"], 1);
  EXPECT_EQ(j["rows"][0]["tenant"], "nlp");
}

TEST(WaitReportTest, NearestRankPercentilesAndPendingWorkloads) {
  std::vector<WorkloadSummary> ws;
  for (int i = 1; i <= 100; ++i) {  // waits of 1..100 s, admitted in the window
    WorkloadSummary w = Wl("w" + std::to_string(i), "q", kA100, T(1, 1));
    w.admitted = T(1, 1) + seconds(i);
    ws.push_back(w);
  }
  WorkloadSummary before = Wl("early", "q", kA100, T(0, 1));  // admitted before the window
  before.admitted = T(0, 2);
  ws.push_back(before);
  WorkloadSummary pending = Wl("pending", "q", kA100, T(1, 0));
  ws.push_back(pending);
  WorkloadSummary gave_up = Wl("gave-up", "q", kA100, T(1, 0));  // cancelled while waiting
  gave_up.finished = T(1, 5);
  ws.push_back(gave_up);
  WorkloadSummary t4 = Wl("t4", "r", kT4, T(1, 3));
  t4.admitted = T(1, 3) + seconds(30);
  ws.push_back(t4);

  auto t = WaitReport(ws, {ReportWindow{T(1, 0), T(2, 0), T(1, 10)}, By("queue,flavor")});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->rows, (std::vector<Row>{{"q", kA100, "100", "50.0", "95.0", "99.0", "100.0", "1", "36000.0"},
                                       {"r", kT4, "1", "30.0", "30.0", "30.0", "30.0", "0", ""}}));
}

TEST(FailureReportTest, ByReasonAndKindWithShareOfFinished) {
  auto finished = [](std::string id, std::string kind, std::string state, std::string reason, Time at) {
    WorkloadSummary w = Wl(std::move(id), "q", kA100, T(1, 0));
    w.kind = std::move(kind);
    w.state = std::move(state);
    w.failure_reason = std::move(reason);
    w.finished = at;
    return w;
  };
  std::vector<WorkloadSummary> ws = {
      finished("a", "TrainingJob", "Failed", "OOMKilled", T(1, 5)),
      finished("b", "TrainingJob", "Failed", "OOMKilled", T(1, 6)),
      finished("c", "TrainingJob", "Failed", "NodeLost", T(2, 6)),
      finished("d", "TrainingJob", "Succeeded", "", T(1, 7)),
      finished("e", "Experiment", "Failed", "", T(1, 8)),
      finished("f", "Experiment", "Cancelled", "", T(1, 9)),
      finished("old", "Experiment", "Failed", "OOMKilled", T(0, 9)),  // before the window
  };
  auto t = FailureReport(ws, {ScenarioWindow(), By("kind")});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->rows, (std::vector<Row>{{"NodeLost", "TrainingJob", "1", "25.0"},
                                       {"OOMKilled", "TrainingJob", "2", "50.0"},
                                       {"Unknown", "Experiment", "1", "50.0"}}));
  EXPECT_EQ(t->notes[0], "4 of 6 workloads finished in the window failed");
  auto daily = FailureReport(ws, {ScenarioWindow(), By("reason,day")});
  ASSERT_TRUE(daily.ok());
  EXPECT_EQ(daily->rows, (std::vector<Row>{{"NodeLost", "2026-03-02", "1", "100.0"},
                                           {"OOMKilled", "2026-03-01", "2", "40.0"},
                                           {"Unknown", "2026-03-01", "1", "20.0"}}));
}

TEST(IdleReportTest, IdleDeviceHoursAndTheirCostByTenantAndWorkload) {
  std::vector<UtilizationSample> samples;
  for (int d = 0; d < 4; ++d) {  // train-a's four devices, hourly 08:00–15:00
    for (int h = 8; h < 16; ++h) samples.push_back({"gpu-1", d, T(1, h), d < 2 && h >= 12 ? 0.01 : 0.9});
  }
  for (int h = 10; h < 14; ++h) samples.push_back({"gpu-2", 0, T(1, h), 0.0});  // the notebook's share
  PriceList prices = ScenarioPrices();
  IdleReportOptions options{ScenarioWindow(), By("tenant,workload"), 0.05, std::chrono::hours(1), &prices};
  auto t = IdleReport(ScenarioIntervals(), samples, options);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  // train-a: 40 allocated, 8h × 4 measured, 2 devices × 12:00–16:00 idle at 3.00/h = 24.00.
  // notebook: 500 milli idle for 4h = 2 device-hours; 2h × 0.5 × 2.00 + 2h × 0.5 × 3.00 = 5.00.
  EXPECT_EQ(t->rows, (std::vector<Row>{{"nlp", "train-a", "40.000", "32.000", "8.000", "25.0", "24.00"},
                                       {"vision", "notebook", "2.000", "2.000", "2.000", "100.0", "5.00"},
                                       {"vision", "infer", "10.000", "0.000", "0.000", "", "0.00"}}));
}

TEST(ShortageReportTest, EpisodesHoursAndMissingReplicas) {
  std::vector<ShortageInterval> s = {
      {"svc-1", "chat", "vision", "vision-serve", kT4, 3, 1, T(1, 10), T(1, 12)},
      {"svc-1", "chat", "vision", "vision-serve", kT4, 2, 1, T(1, 13), std::nullopt},  // still short
      {"svc-2", "old", "nlp", "nlp-serve", kT4, 2, 0, T(0, 1), T(0, 2)},               // before
  };
  auto t = ShortageReport(s, {ReportWindow{T(1, 0), T(2, 0), T(1, 14)}, By("tenant,workload")});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->rows, (std::vector<Row>{{"vision", "chat", "2", "3.000", "5.000", "7200.0"}}));
}

TEST(BorrowingTest, BorrowedHoursAreAttributedToIdleLendersInProportion) {
  // Cohort "research", A100: q1 nominal 4; q2 nominal 4, lends at most 1; q3 nominal 2.
  std::vector<QueueQuota> quotas = {{"q1", "a", "research", kA100, 4000, std::nullopt},
                                    {"q2", "b", "research", kA100, 4000, 1000},
                                    {"q3", "c", "research", kA100, 2000, std::nullopt},
                                    {"solo", "d", "", kA100, 1000, std::nullopt}};
  auto run = [](std::string queue, int64_t milli, int from_h, int to_h) {
    UsageInterval iv = Task("w-" + queue, queue + "-0", "t", queue, "TrainingJob", "n", kA100, milli, 1, 1, T(1, from_h));
    return Closed(iv, T(1, to_h), EndReason::kSucceeded);
  };
  std::vector<UsageInterval> intervals = {run("q1", 6000, 0, 5), run("q2", 4000, 2, 5), run("q3", 2000, 4, 5),
                                          run("solo", 3000, 0, 5)};
  // 0–2h: q1 borrows 2; lendable q2 1 + q3 2 = 3 → q2 2×1/3×2h = 1.333, q3 2×2/3×2h = 2.667.
  // 2–4h: q2 uses its nominal; q3 lends 2 × 2h = 4. 4–5h: nobody can lend → (cohort) 2.
  Table t = BorrowingReport(intervals, quotas, ReportWindow{T(1, 0), T(1, 10), T(1, 10)});
  EXPECT_EQ(t.rows, (std::vector<Row>{{"research", kA100, "q1", "(cohort)", "2.000"},
                                      {"research", kA100, "q1", "q2", "1.333"},
                                      {"research", kA100, "q1", "q3", "6.667"}}));
  BorrowingResult r = ComputeBorrowing(intervals, quotas, ReportWindow{T(1, 0), T(1, 10), T(1, 10)});
  ASSERT_EQ(r.queues.size(), 3u);
  EXPECT_EQ(FormatMilliHours(r.queues[0].used), "30.000");
  EXPECT_EQ(FormatMilliHours(r.queues[0].borrowed), "10.000");
  EXPECT_EQ(FormatMilliHours(r.queues[1].lent), "1.333");
  EXPECT_EQ(FormatMilliHours(r.queues[2].lent), "6.667");
}

// The queue view's numbers (issue 19.6): the same rule at one instant, in the resource's unit.
TEST(BorrowingTest, NowSaysWhoBorrowsFromWhomInTheResourcesUnit) {
  // Cohort shared: qb nominal 8 uses 24 (borrows 16); qc nominal 16 uses nothing; qa nominal 2
  // lends nothing (limit 0). CPU: qb borrows 4 cores from qc.
  std::vector<QueueQuota> quotas = {{"qa", "a", "shared", kA100, 2000, 0},
                                    {"qb", "b", "shared", kA100, 8000, std::nullopt},
                                    {"qc", "c", "shared", kA100, 16000, std::nullopt},
                                    {"qb", "b", "shared", "cpu", 8000, std::nullopt},
                                    {"qc", "c", "shared", "cpu", 16000, std::nullopt}};
  std::vector<UseNow> use = {{"qb", kA100, 24000}, {"qb", "cpu", 12000}};
  BorrowingResult r = BorrowingNow(quotas, use);
  ASSERT_EQ(r.flows.size(), 2u);
  EXPECT_EQ(r.flows[0].flavor, "cpu");
  EXPECT_EQ(static_cast<int64_t>(r.flows[0].amount), 4000);
  EXPECT_EQ(r.flows[1].borrower, "qb");
  EXPECT_EQ(r.flows[1].lender, "qc");
  EXPECT_EQ(static_cast<int64_t>(r.flows[1].amount), 16000);
  for (const QueueUse& q : r.queues) {
    if (q.flavor != kA100) continue;
    EXPECT_EQ(static_cast<int64_t>(q.borrowed), q.queue == "qb" ? 16000 : 0) << q.queue;
    EXPECT_EQ(static_cast<int64_t>(q.lent), q.queue == "qc" ? 16000 : 0) << q.queue;
  }
}

TEST(GroupingTest, ParsesKeysAndOneBucketAndRejectsTheRest) {
  Grouping g = By("tenant,flavor,week");
  EXPECT_EQ(g.keys, (std::vector<GroupKey>{GroupKey::kTenant, GroupKey::kFlavor}));
  EXPECT_EQ(g.bucket, TimeBucket::kWeek);
  EXPECT_TRUE(By("").keys.empty());
  EXPECT_FALSE(ParseGrouping("tenant,bogus").ok());
  EXPECT_FALSE(ParseGrouping("day,month").ok());
  EXPECT_EQ(By("flavor,hour").bucket, TimeBucket::kHour);
  EXPECT_FALSE(ParseGrouping("hour,day").ok());
  EXPECT_FALSE(ParseGrouping("queue,queue").ok());
  auto wait = WaitReport({}, {ScenarioWindow(), By("node")});
  EXPECT_EQ(wait.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(wait.status().message(),
            "the wait report cannot group by 'node'; it groups by tenant, project, queue, flavor, kind, "
            "model, priorityClass, user");
  EXPECT_FALSE(IdleReport({}, {}, {ScenarioWindow(), By("day")}).ok());
  EXPECT_FALSE(ShortageReport({}, {ScenarioWindow(), By("project")}).ok());
}

}  // namespace
}  // namespace abacus::meter

namespace abacus::meter {
namespace {

// sreport's cluster utilization: capacity over device lifetimes, split into allocated, idle,
// down and drained, per flavor and per pool.
TEST(UtilizationReportTest, ReportedHoursSplitIntoAllocatedIdleDownAndDrained) {
  using scenario::T;
  const std::string f = scenario::kA100;
  std::vector<CapacitySpan> capacity = {
      {"n1", f, 4, T(1, 0), T(1, 10), NodeCondition::kUp},
      {"n2", f, 2, T(1, 0), T(1, 5), NodeCondition::kDown},
      {"n2", f, 2, T(1, 5), std::nullopt, NodeCondition::kDrained},
  };
  std::vector<UsageInterval> intervals = {scenario::Closed(
      scenario::Task("w", "t", "nlp", "q", "TrainingJob", "n1", f, 2000, 1, 1, T(1, 1)), T(1, 4), EndReason::kSucceeded)};
  UtilizationReportOptions o;
  o.window = {T(1, 0), T(1, 10), T(1, 10)};
  o.node_places = {{"n1", {"east", "p1"}}, {"n2", {"east", "p2"}}};
  const ResourceTime hour = 1000LL * 3'600'000'000LL;  // one device for an hour
  auto t = UtilizationReport(capacity, intervals, o);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->rows.size(), 1u);
  const auto& row = t->rows[0];
  auto cell = [&](const char* c) { return row[static_cast<size_t>(t->ColumnIndex(c))]; };
  EXPECT_EQ(cell("flavor"), f);
  EXPECT_EQ(cell("reportedDeviceHours"), FormatMilliHours(60 * hour));
  EXPECT_EQ(cell("allocatedDeviceHours"), FormatMilliHours(6 * hour));
  EXPECT_EQ(cell("downDeviceHours"), FormatMilliHours(10 * hour));
  EXPECT_EQ(cell("drainedDeviceHours"), FormatMilliHours(10 * hour));
  EXPECT_EQ(cell("idleDeviceHours"), FormatMilliHours(34 * hour));
  EXPECT_EQ(cell("allocatedPercent"), FormatPercent(0.1));

  auto by = ParseGrouping("pool");
  ASSERT_TRUE(by.ok());
  o.by = *by;
  auto pools = UtilizationReport(capacity, intervals, o);
  ASSERT_TRUE(pools.ok());
  ASSERT_EQ(pools->rows.size(), 2u);
  EXPECT_EQ(pools->rows[0][1], "p1");
  EXPECT_EQ(pools->rows[0][static_cast<size_t>(pools->ColumnIndex("idleDeviceHours"))], FormatMilliHours(34 * hour));
  EXPECT_EQ(pools->rows[1][1], "p2");
  EXPECT_EQ(pools->rows[1][static_cast<size_t>(pools->ColumnIndex("idleDeviceHours"))], FormatMilliHours(0));
  // Tenants are not a property of capacity.
  auto tenant = ParseGrouping("tenant");
  ASSERT_TRUE(tenant.ok());
  o.by = *tenant;
  EXPECT_FALSE(UtilizationReport(capacity, intervals, o).ok());
}

TEST(UtilizationReportTest, ReservedIdleIsCountedApartFromIdle) {
  const std::string f = kA100;
  // n1: 4 devices for 10 h. A reservation holds them for team nlp from 2:00 to 6:00; nlp's work
  // uses 2 of them 3:00–5:00 (4 device-hours), other work 1 device 7:00–9:00 (2 device-hours).
  std::vector<CapacitySpan> capacity = {{"n1", f, 4, T(1, 0), T(1, 10), NodeCondition::kUp}};
  std::vector<UsageInterval> intervals = {
      scenario::Closed(scenario::Task("w", "t", "nlp", "q", "TrainingJob", "n1", f, 2000, 1, 1, T(1, 3)), T(1, 5),
                       EndReason::kSucceeded),
      scenario::Closed(scenario::Task("o", "t", "cv", "q2", "TrainingJob", "n1", f, 1000, 1, 1, T(1, 7)), T(1, 9),
                       EndReason::kSucceeded)};
  UtilizationReportOptions o;
  o.window = {T(1, 0), T(1, 10), T(1, 10)};
  o.reserved = {{"r1", "n1", f, 4, T(1, 2), T(1, 6), "nlp", "", ""}};
  const ResourceTime hour = 1000LL * 3'600'000'000LL;
  auto t = UtilizationReport(capacity, intervals, o);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->rows.size(), 1u);
  auto cell = [&](const char* c) { return t->rows[0][static_cast<size_t>(t->ColumnIndex(c))]; };
  EXPECT_EQ(cell("reportedDeviceHours"), FormatMilliHours(40 * hour));
  EXPECT_EQ(cell("allocatedDeviceHours"), FormatMilliHours(6 * hour));
  EXPECT_EQ(cell("reservedIdleDeviceHours"), FormatMilliHours(12 * hour));  // 16 reserved, 4 used by nlp
  EXPECT_EQ(cell("idleDeviceHours"), FormatMilliHours(22 * hour));          // 40 - 6 - 12
  EXPECT_EQ(cell("reservedIdlePercent"), FormatPercent(0.3));
  // Without reservations the column is zero and idle is all that was unused.
  o.reserved.clear();
  auto plain = UtilizationReport(capacity, intervals, o);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->rows[0][static_cast<size_t>(plain->ColumnIndex("reservedIdleDeviceHours"))], FormatMilliHours(0));
  EXPECT_EQ(plain->rows[0][static_cast<size_t>(plain->ColumnIndex("idleDeviceHours"))], FormatMilliHours(34 * hour));
}

}  // namespace
}  // namespace abacus::meter
