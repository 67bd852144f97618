#include "control/experiment.h"

#include <gtest/gtest.h>

#include "control/control_test_util.h"

namespace abacus::control {
namespace {

using namespace testing;  // NOLINT

Workload Experiment(bool idle = true, bool quota = false) {
  ExperimentSpec s;
  s.ttl = std::chrono::hours(8);
  if (idle) s.idle = IdlePolicy{5, 1800, 600};
  if (quota) {
    s.temporary_quota = TemporaryQuota{*QuotaResource::Parse("gpu/nvidia/A100-80G"), Quantity::FromMilli(2000),
                                       std::chrono::hours(4)};
  }
  return MakeSpec(s);
}

WorkloadView Notebook(const Workload& spec) {
  WorkloadView w = View(spec, WorkloadState::kRunning, {Task(0, TaskPhase::kRunning, T(0))});
  w.started_at = T(0);
  return w;
}

// One sample of `percent` on each of two devices, every 60s in [from, to].
std::vector<UtilizationSample> Util(double percent, int64_t from, int64_t to) {
  std::vector<UtilizationSample> out;
  for (int64_t t = from; t <= to; t += 60) {
    for (int32_t d : {0, 1}) out.push_back({"n0", d, percent, T(t)});
  }
  return out;
}

Decisions Step(WorkloadView& w, ExperimentState& s, const Signals& sig, Time now) {
  return StepWith(w, s, [&](const WorkloadView& v, const ExperimentState& st) { return ReconcileExperiment(v, st, sig, now); });
}

void StopAll(WorkloadView& w, Time t) {
  for (TaskView& task : w.tasks) {
    task.phase = TaskPhase::kExited;
    task.stopped = true;
    task.finished_at = t;
  }
}

TEST(ExperimentTest, TtlExpiryStopsTheTasksThenCancels) {
  Workload spec = Experiment(false);
  WorkloadView w = Notebook(spec);
  ExperimentState s;
  EXPECT_TRUE(Step(w, s, {}, T(8 * 3600 - 1)).empty());
  Decisions ds = Step(w, s, {}, T(8 * 3600));
  EXPECT_EQ(Types(ds), "StopTasks,Event:TTLExpired");
  EXPECT_TRUE(Step(w, s, {}, T(8 * 3600 + 5)).empty());
  StopAll(w, T(8 * 3600 + 10));
  ds = Step(w, s, {}, T(8 * 3600 + 10));
  ASSERT_NE(Find<SetState>(ds), nullptr) << Types(ds);
  EXPECT_EQ(Find<SetState>(ds)->to, WorkloadState::kCancelled);
  EXPECT_EQ(Find<SetState>(ds)->reason, "TTLExpired");
}

TEST(ExperimentTest, TtlExpiredWhileWaitingCancelsAtOnce) {
  Workload spec = Experiment(false);
  WorkloadView w = View(spec, WorkloadState::kRequeued);
  w.started_at = T(0);
  ExperimentState s;
  Decisions ds = Step(w, s, {}, T(9 * 3600));
  ASSERT_NE(Find<SetState>(ds), nullptr);
  EXPECT_EQ(Find<SetState>(ds)->reason, "TTLExpired");
}

// Devices under 5% from T(60) on: notice at T(1800), reclaim due at T(2400).
Decisions IdleUntilNotice(WorkloadView& w, ExperimentState& s, Signals& sig) {
  auto low = Util(2, 60, 1800);
  sig.utilization.insert(sig.utilization.end(), low.begin(), low.end());
  EXPECT_TRUE(Step(w, s, sig, T(1799)).empty());  // the 1800 sample is not in yet
  Decisions ds = Step(w, s, sig, T(1800));
  EXPECT_NE(FindEvent(ds, "IdleNotice"), nullptr) << Types(ds);
  return ds;
}

TEST(ExperimentTest, IdleGivesNoticeThenReclaims) {
  Workload spec = Experiment();
  WorkloadView w = Notebook(spec);
  ExperimentState s;
  Signals sig;
  sig.utilization = Util(50, 0, 0);
  Decisions ds = IdleUntilNotice(w, s, sig);
  const Event* notice = FindEvent(ds, "IdleNotice");
  ASSERT_NE(notice, nullptr) << Types(ds);
  EXPECT_EQ(notice->details["reclaimAt"], FormatTime(T(2400)));
  EXPECT_EQ(notice->details["reason"], "Idle");
  auto more = Util(2, 1860, 2400);
  sig.utilization.insert(sig.utilization.end(), more.begin(), more.end());
  EXPECT_TRUE(Step(w, s, sig, T(2399)).empty());
  ds = Step(w, s, sig, T(2400));
  EXPECT_EQ(Types(ds), "StopTasks,Event:IdleReclaimed");
  StopAll(w, T(2410));
  ds = Step(w, s, sig, T(2410));
  ASSERT_NE(Find<SetState>(ds), nullptr);
  EXPECT_EQ(Find<SetState>(ds)->to, WorkloadState::kCancelled);
  EXPECT_EQ(Find<SetState>(ds)->reason, "IdleReclaimed");
}

TEST(ExperimentTest, ActivityDuringTheNoticeCancelsTheReclaim) {
  Workload spec = Experiment();
  WorkloadView w = Notebook(spec);
  ExperimentState s;
  Signals sig;
  IdleUntilNotice(w, s, sig);
  sig.utilization.push_back({"n0", 1, 40, T(2000)});  // one device busy again
  EXPECT_NE(FindEvent(Step(w, s, sig, T(2000)), "IdleNoticeCancelled"), nullptr);
  auto low = Util(1, 2060, 2400);
  sig.utilization.insert(sig.utilization.end(), low.begin(), low.end());
  EXPECT_TRUE(Step(w, s, sig, T(2400)).empty());  // no reclaim; a new window starts at 2000
  EXPECT_EQ(w.state, WorkloadState::kRunning);
}

TEST(ExperimentTest, NoUtilizationReportsNeverCountAsIdle) {
  Workload spec = Experiment();
  WorkloadView w = Notebook(spec);
  ExperimentState s;
  EXPECT_TRUE(Step(w, s, {}, T(7 * 3600)).empty());
}

TEST(ExperimentTest, TemporaryQuotaUnderTheThresholdIsApprovedAutomaticallyAndExpires) {
  Workload spec = Experiment(false, true);
  WorkloadView w = View(spec, WorkloadState::kPending);
  w.admitted_at = Time{};
  ExperimentState s;
  Signals sig;
  sig.quota_auto_approve = Quantity::FromMilli(4000);
  Decisions ds = Step(w, s, sig, T(0));
  const GrantQuota* g = Find<GrantQuota>(ds);
  ASSERT_NE(g, nullptr) << Types(ds);
  EXPECT_EQ(g->amount, Quantity::FromMilli(2000));
  EXPECT_FALSE(g->until.has_value());
  EXPECT_EQ(FindEvent(ds, "TemporaryQuotaApproved")->details["by"], "auto");
  EXPECT_TRUE(Step(w, s, sig, T(1)).empty());
  // Admitted at T(100): the grant runs until T(100) + 4h.
  w.state = WorkloadState::kAdmitted;
  w.admitted_at = T(100);
  w.tasks = {Task(0, TaskPhase::kRunning, T(110))};
  ds = Step(w, s, sig, T(110));
  ASSERT_NE(Find<GrantQuota>(ds), nullptr) << Types(ds);
  EXPECT_EQ(Find<GrantQuota>(ds)->until, T(100 + 4 * 3600));
  ds = Step(w, s, sig, T(100 + 4 * 3600));
  EXPECT_EQ(Types(ds), "RevokeQuota,Event:TemporaryQuotaExpired,StopTasks,Event:TemporaryQuotaExpired");
  StopAll(w, T(100 + 4 * 3600 + 5));
  ds = Step(w, s, sig, T(100 + 4 * 3600 + 5));
  ASSERT_NE(Find<SetState>(ds), nullptr);
  EXPECT_EQ(Find<SetState>(ds)->reason, "TemporaryQuotaExpired");
  EXPECT_EQ(Find<RevokeQuota>(ds), nullptr);  // already revoked
}

TEST(ExperimentTest, TemporaryQuotaAboveTheThresholdWaitsForApproval) {
  Workload spec = Experiment(false, true);
  WorkloadView w = View(spec, WorkloadState::kPending);
  w.admitted_at = Time{};
  ExperimentState s;
  Signals sig;
  sig.quota_auto_approve = Quantity::FromMilli(1000);
  Decisions ds = Step(w, s, sig, T(0));
  EXPECT_EQ(Types(ds), "Event:TemporaryQuotaRequested");
  EXPECT_EQ(FindEvent(ds, "TemporaryQuotaRequested")->details["reason"], "ApprovalRequired");
  EXPECT_EQ(s.quota.status, QuotaGrantStatus::kPending);
  EXPECT_TRUE(Step(w, s, sig, T(60)).empty());
  sig.quota_decision = QuotaDecision{true, "carol", T(90)};
  ds = Step(w, s, sig, T(90));
  ASSERT_NE(Find<GrantQuota>(ds), nullptr) << Types(ds);
  EXPECT_EQ(FindEvent(ds, "TemporaryQuotaApproved")->details["by"], "carol");
  EXPECT_EQ(s.quota.status, QuotaGrantStatus::kApproved);
}

TEST(ExperimentTest, ARejectedTemporaryQuotaIsNotGranted) {
  Workload spec = Experiment(false, true);
  WorkloadView w = View(spec, WorkloadState::kPending);
  ExperimentState s;
  Signals sig;  // no auto-approve limit: every request needs an admin
  Step(w, s, sig, T(0));
  sig.quota_decision = QuotaDecision{false, "carol", T(5)};
  Decisions ds = Step(w, s, sig, T(5));
  EXPECT_EQ(Types(ds), "Event:TemporaryQuotaRejected");
  EXPECT_EQ(s.quota.status, QuotaGrantStatus::kRejected);
}

TEST(ExperimentTest, AnEndedExperimentReleasesItsTemporaryQuota) {
  Workload spec = Experiment(false, true);
  WorkloadView w = Notebook(spec);
  ExperimentState s;
  s.quota = {QuotaGrantStatus::kApproved, T(0), "auto", T(0), T(4 * 3600)};
  w.tasks[0] = Exited(0, 0, T(50));
  Decisions ds = Step(w, s, {}, T(50));
  EXPECT_EQ(Types(ds), "SetState,Event:Succeeded,RevokeQuota");
  EXPECT_EQ(std::get<RevokeQuota>(ds[2]).reason, "WorkloadEnded");
}

TEST(ExperimentTest, StateRoundTripsThroughJson) {
  ExperimentState s;
  s.idle = {T(1), T(2), T(3)};
  s.quota = {QuotaGrantStatus::kApproved, T(4), "carol", T(5), T(6)};
  s.ending = "IdleReclaimed";
  s.ending_since = T(7);
  auto back = ExperimentStateFromJson(ToJson(s));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, s);
  EXPECT_FALSE(ExperimentStateFromJson({{"quota", {{"status", "Maybe"}}}}).ok());
  EXPECT_FALSE(ExperimentStateFromJson({{"idle", {{"noticeAt", "soon"}}}}).ok());
}

}  // namespace
}  // namespace abacus::control
