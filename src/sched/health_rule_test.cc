// The shared device health rule (health_rule.h) over its own NodeHealth; the server's adapter is
// tested in server/device_health_test.cc, scenarios in tests/scenarios/device_health.scn.
#include "sched/health_rule.h"

#include <gtest/gtest.h>

namespace abacus::sched {
namespace {

using namespace std::chrono_literals;

NodeHealth Four() {
  NodeHealth n;
  for (int i = 0; i < 4; ++i) n.devices[i] = DeviceHealth::kHealthy;
  return n;
}

std::map<int32_t, DeviceHealthReport> Says(int32_t index, DeviceHealth h, std::string reason = "") {
  return {{index, DeviceHealthReport{h, std::move(reason)}}};
}

Time At(int64_t seconds) { return Time{} + std::chrono::seconds(1'000'000 + seconds); }

TEST(HealthRuleTest, ThirdFaultCordonsByTheRuleAndACleanWindowEndsIt) {
  NodeHealth n = Four();
  HealthPolicy p;  // cordon after 3 within 24h, clean window 10m: the server's defaults
  ApplyHealthReports(n, Says(0, DeviceHealth::kUnhealthy, "XID 48"), At(0), p);
  ApplyHealthReports(n, Says(1, DeviceHealth::kUnhealthy, "XID 94"), At(10), p);
  HealthOutcome o = ApplyHealthReports(n, Says(2, DeviceHealth::kUnhealthy, "XID 79: GPU has fallen off the bus"), At(20), p);
  ASSERT_TRUE(o.cordoned);
  EXPECT_EQ(n.cordon, CordonHolder::kRule);
  EXPECT_EQ(n.cordon_since, At(20));
  EXPECT_EQ(o.cordon_reason, "3 device fault(s) within 24h (the last: device 2, XID 79: GPU has fallen off the bus)");
  for (int i = 0; i < 3; ++i) ApplyHealthReports(n, Says(i, DeviceHealth::kHealthy), At(30), p);
  EXPECT_EQ(NextHealthDeadline(n, p), At(620));  // the first deadline: the faults' cordon end
  HealthOutcome early = SettleHealth(n, At(620), p);
  EXPECT_FALSE(early.uncordoned);  // devices still on probation until 630
  HealthOutcome done = SettleHealth(n, At(630), p);
  EXPECT_EQ(done.recovered.size(), 3u);
  EXPECT_TRUE(done.uncordoned);
  EXPECT_EQ(n.cordon, CordonHolder::kNone);
  EXPECT_EQ(n.devices[2], DeviceHealth::kHealthy);
}

TEST(HealthRuleTest, AnOperatorsCordonIsLeftAlone) {
  NodeHealth n = Four();
  n.cordon = CordonHolder::kOther;
  HealthPolicy p;
  p.cordon_after = 1;
  p.clean_window = 0s;
  HealthOutcome o = ApplyHealthReports(n, Says(3, DeviceHealth::kUnhealthy), At(0), p);
  EXPECT_FALSE(o.cordoned);
  EXPECT_EQ(o.faults.size(), 1u);
  EXPECT_EQ(o.faults[0].reason, "reported unhealthy by its agent");
  ApplyHealthReports(n, Says(3, DeviceHealth::kHealthy), At(1), p);
  EXPECT_FALSE(SettleHealth(n, At(100), p).uncordoned);
  EXPECT_EQ(n.cordon, CordonHolder::kOther);
}

TEST(HealthRuleTest, UncordonEndsProbationAndForgetsFaults) {
  NodeHealth n = Four();
  HealthPolicy p;
  ApplyHealthReports(n, Says(1, DeviceHealth::kUnhealthy), At(0), p);
  ApplyHealthReports(n, Says(1, DeviceHealth::kHealthy), At(5), p);
  EXPECT_EQ(n.devices[1], DeviceHealth::kUnhealthy);
  ClearHealthOnUncordon(n);
  EXPECT_EQ(n.devices[1], DeviceHealth::kHealthy);
  EXPECT_TRUE(n.history.empty());
  // Unknown device indexes are ignored.
  EXPECT_FALSE(ApplyHealthReports(n, Says(9, DeviceHealth::kUnhealthy), At(6), p).changed());
}

}  // namespace
}  // namespace abacus::sched
