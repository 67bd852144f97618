// Issue 23: reports group by the submitter (`--by user`), name workloads by their label (the
// name, "name (id)" where ambiguous) and keep the submitter through an interval's store document.
#include <gtest/gtest.h>

#include "meter/grouping.h"
#include "meter/meter_test_util.h"
#include "meter/reports.h"

namespace abacus::meter {
namespace {

using namespace scenario;  // NOLINT: the scenario helpers
using Row = std::vector<std::string>;

TEST(ByUserTest, UsageGroupsBySubmitterAndShowsWorkloadLabels) {
  UsageInterval a = Closed(Task("wl-1", "wl-1.0.0.1", "nlp", "q", "TrainingJob", "n1", kA100, 1000, 1, 1, T(1, 0)),
                           T(1, 2), EndReason::kSucceeded);
  a.user = "alice";
  a.workload_label = "ft (wl-1)";
  UsageInterval b = Closed(Task("wl-2", "wl-2.0.0.1", "nlp", "q", "TrainingJob", "n1", kA100, 2000, 1, 1, T(1, 0)),
                           T(1, 1), EndReason::kSucceeded);
  b.user = "bob";
  UsageInterval c = a;
  c.id = "other";
  c.task_id = "wl-1.0.1.1";
  std::vector<UsageInterval> ivs = {a, b, c};
  ReportWindow w{T(1, 0), T(2, 0), T(2, 0)};
  auto by_user = UsageReport(ivs, {w, ParseGrouping("user").value()});
  ASSERT_TRUE(by_user.ok()) << by_user.status().ToString();
  ASSERT_EQ(by_user->rows.size(), 2u);
  // user, workloads, deviceHours, …
  EXPECT_EQ(by_user->rows[0][0], "alice");
  EXPECT_EQ(by_user->rows[0][1], "1");
  EXPECT_EQ(by_user->rows[0][2], "4.000");  // two tasks of one device for 2 h
  EXPECT_EQ(by_user->rows[1][0], "bob");
  EXPECT_EQ(by_user->rows[1][2], "2.000");
  auto by_workload = UsageReport(ivs, {w, ParseGrouping("workload").value()});
  ASSERT_TRUE(by_workload.ok());
  EXPECT_EQ(by_workload->rows[0][0], "ft (wl-1)");  // the label
  EXPECT_EQ(by_workload->rows[1][0], "wl-2");       // no label: the id
}

TEST(ByUserTest, WaitAndFailuresGroupByUserAndTheIntervalKeepsIt) {
  WorkloadSummary s;
  s.id = "wl-1";
  s.name = "ft";
  s.tenant = "nlp";
  s.user = "alice";
  s.submitted = T(1, 0);
  s.admitted = T(1, 1);
  s.state = "Running";
  auto wait = WaitReport(std::vector<WorkloadSummary>{s}, {ReportWindow{T(1, 0), T(2, 0), T(2, 0)},
                                                           ParseGrouping("user").value()});
  ASSERT_TRUE(wait.ok()) << wait.status().ToString();
  EXPECT_EQ(wait->rows[0][0], "alice");
  EXPECT_TRUE(ParseGrouping("tenant,user").ok());
  UsageInterval iv = Task("wl-1", "wl-1.0.0.1", "nlp", "q", "TrainingJob", "n1", kA100, 1000, 1, 1, T(1, 0));
  iv.user = "alice";
  auto back = UsageFromJson(UsageToJson(iv));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->user, "alice");
  nlohmann::json old = UsageToJson(iv);
  old.erase("user");  // stored before issue 23
  EXPECT_EQ(UsageFromJson(old)->user, "");
}

}  // namespace
}  // namespace abacus::meter
