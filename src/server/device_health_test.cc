// The device health rules (device_health.h): faults, probation, the health cordon and its end.
#include "server/device_health.h"

#include <gtest/gtest.h>

namespace abacus::server {
namespace {

using namespace std::chrono_literals;

NodeRecord Node4() {
  NodeRecord n;
  n.node.name = "gpu-1";
  for (int i = 0; i < 4; ++i) {
    Device d;
    d.index = i;
    d.flavor = *Flavor::Parse("gpu/nvidia/A100-80G");
    n.node.devices.push_back(d);
  }
  return n;
}

std::map<int32_t, DeviceHealthReport> Says(int32_t index, DeviceHealth h, std::string reason = "") {
  return {{index, DeviceHealthReport{h, std::move(reason)}}};
}

Time At(int64_t seconds) { return Time{} + std::chrono::seconds(1'000'000 + seconds); }

TEST(DeviceHealthTest, AHealthyDeviceReportedUnhealthyIsAFaultWithTheAgentsReason) {
  NodeRecord n = Node4();
  HealthOutcome o = ApplyHealthReports(n, Says(1, DeviceHealth::kUnhealthy, "XID 79"), At(0), HealthPolicy{});
  ASSERT_EQ(o.faults.size(), 1u);
  EXPECT_EQ(o.faults[0].reason, "XID 79");
  EXPECT_EQ(n.node.devices[1].health, DeviceHealth::kUnhealthy);
  EXPECT_FALSE(o.cordoned);
  // Reported again: no second fault, nothing changed.
  EXPECT_FALSE(ApplyHealthReports(n, Says(1, DeviceHealth::kUnhealthy, "XID 79"), At(5), HealthPolicy{}).changed());
  EXPECT_EQ(n.health.faults.size(), 1u);
}

TEST(DeviceHealthTest, ARecoveredDeviceWaitsOutTheCleanWindowBeforeWorkGoesThere) {
  NodeRecord n = Node4();
  HealthPolicy p;
  p.clean_window = 60s;
  ApplyHealthReports(n, Says(2, DeviceHealth::kUnhealthy), At(0), p);
  HealthOutcome o = ApplyHealthReports(n, Says(2, DeviceHealth::kHealthy), At(10), p);
  EXPECT_EQ(o.recovering, std::vector<int32_t>{2});
  EXPECT_EQ(n.node.devices[2].health, DeviceHealth::kUnhealthy);  // still out of service
  // Further healthy heartbeats change nothing (no commit per heartbeat).
  EXPECT_FALSE(ApplyHealthReports(n, Says(2, DeviceHealth::kHealthy), At(20), p).changed());
  EXPECT_EQ(NextHealthDeadline(n, p), At(70));
  EXPECT_FALSE(SettleHealth(n, At(69), p).changed());
  HealthOutcome settled = SettleHealth(n, At(70), p);
  EXPECT_EQ(settled.recovered, std::vector<int32_t>{2});
  EXPECT_EQ(n.node.devices[2].health, DeviceHealth::kHealthy);
  EXPECT_EQ(ToMicros(NextHealthDeadline(n, p)), 0);
}

TEST(DeviceHealthTest, FailingAgainOnProbationIsANewFault) {
  NodeRecord n = Node4();
  HealthPolicy p;
  ApplyHealthReports(n, Says(0, DeviceHealth::kUnhealthy), At(0), p);
  ApplyHealthReports(n, Says(0, DeviceHealth::kHealthy), At(10), p);
  HealthOutcome o = ApplyHealthReports(n, Says(0, DeviceHealth::kUnhealthy, "ECC"), At(20), p);
  EXPECT_EQ(o.faults.size(), 1u);
  EXPECT_TRUE(n.health.probation.empty());
  EXPECT_EQ(n.health.faults.size(), 2u);
}

TEST(DeviceHealthTest, ZeroCleanWindowReturnsADeviceAtOnce) {
  NodeRecord n = Node4();
  HealthPolicy p;
  p.clean_window = Duration::zero();
  ApplyHealthReports(n, Says(3, DeviceHealth::kUnhealthy), At(0), p);
  HealthOutcome o = ApplyHealthReports(n, Says(3, DeviceHealth::kHealthy), At(1), p);
  EXPECT_EQ(o.recovered, std::vector<int32_t>{3});
  EXPECT_EQ(n.node.devices[3].health, DeviceHealth::kHealthy);
}

TEST(DeviceHealthTest, FaultsThatKeepComingCordonTheNodeAndOldOnesAreForgotten) {
  NodeRecord n = Node4();
  HealthPolicy p;
  p.cordon_after = 3;
  p.window = 1h;
  p.clean_window = 0s;
  // Two faults, then the first is older than the window when the third comes: no cordon.
  ApplyHealthReports(n, Says(0, DeviceHealth::kUnhealthy), At(0), p);
  ApplyHealthReports(n, Says(0, DeviceHealth::kHealthy), At(1), p);
  ApplyHealthReports(n, Says(1, DeviceHealth::kUnhealthy), At(1000), p);
  ApplyHealthReports(n, Says(1, DeviceHealth::kHealthy), At(1001), p);
  HealthOutcome o = ApplyHealthReports(n, Says(2, DeviceHealth::kUnhealthy), At(3700), p);
  EXPECT_FALSE(o.cordoned);
  EXPECT_EQ(n.health.faults.size(), 2u);
  // A third within the hour cordons, by the rule, saying why.
  ApplyHealthReports(n, Says(2, DeviceHealth::kHealthy), At(3701), p);
  o = ApplyHealthReports(n, Says(3, DeviceHealth::kUnhealthy, "XID 48"), At(3702), p);
  EXPECT_TRUE(o.cordoned);
  EXPECT_EQ(n.cordon.state, NodeState::kCordoned);
  EXPECT_EQ(n.cordon.by, kHealthRule);
  EXPECT_NE(n.cordon.reason.find("3 device fault(s) within 1h"), std::string::npos) << n.cordon.reason;
  EXPECT_NE(n.cordon.reason.find("XID 48"), std::string::npos) << n.cordon.reason;
}

TEST(DeviceHealthTest, TheHealthCordonEndsAfterACleanWindowWithEveryDeviceHealthy) {
  NodeRecord n = Node4();
  HealthPolicy p;
  p.cordon_after = 1;
  p.clean_window = 600s;
  ApplyHealthReports(n, Says(1, DeviceHealth::kUnhealthy), At(0), p);
  ASSERT_EQ(n.cordon.by, kHealthRule);
  // Still unhealthy at the end of the window: stays cordoned.
  EXPECT_FALSE(SettleHealth(n, At(700), p).uncordoned);
  ApplyHealthReports(n, Says(1, DeviceHealth::kHealthy), At(700), p);  // probation from 700
  EXPECT_FALSE(SettleHealth(n, At(1299), p).changed());
  HealthOutcome o = SettleHealth(n, At(1300), p);
  EXPECT_EQ(o.recovered, std::vector<int32_t>{1});
  EXPECT_TRUE(o.uncordoned);
  EXPECT_EQ(n.cordon.state, NodeState::kReady);
}

TEST(DeviceHealthTest, AnOperatorsCordonIsNeverEndedByTheRule) {
  NodeRecord n = Node4();
  HealthPolicy p;
  p.cordon_after = 1;
  p.clean_window = 1s;
  n.cordon = NodeCordonRecord{NodeState::kCordoned, At(0), Time{}, false, "alice", "maintenance"};
  HealthOutcome o = ApplyHealthReports(n, Says(1, DeviceHealth::kUnhealthy), At(1), p);
  EXPECT_FALSE(o.cordoned);
  ApplyHealthReports(n, Says(1, DeviceHealth::kHealthy), At(2), p);
  SettleHealth(n, At(100), p);
  EXPECT_EQ(n.cordon.by, "alice");
  EXPECT_EQ(n.cordon.state, NodeState::kCordoned);
}

TEST(DeviceHealthTest, AnOperatorsUncordonEndsProbationAndForgetsFaults) {
  NodeRecord n = Node4();
  HealthPolicy p;
  ApplyHealthReports(n, Says(1, DeviceHealth::kUnhealthy), At(0), p);
  ApplyHealthReports(n, Says(1, DeviceHealth::kHealthy), At(1), p);
  ClearHealthOnUncordon(n);
  EXPECT_EQ(n.node.devices[1].health, DeviceHealth::kHealthy);
  EXPECT_TRUE(n.health.empty());
}

TEST(DeviceHealthTest, TheHistorySurvivesTheStoreDocument) {
  NodeRecord n = Node4();
  n.node.cpu_milli = 1000;
  n.node.memory_bytes = 1 << 30;
  HealthPolicy p;
  ApplyHealthReports(n, Says(1, DeviceHealth::kUnhealthy, "XID 79"), At(0), p);
  ApplyHealthReports(n, Says(1, DeviceHealth::kHealthy), At(1), p);
  auto back = NodeRecordFromJson(ToJson(n));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->health, n.health);
}

}  // namespace
}  // namespace abacus::server
