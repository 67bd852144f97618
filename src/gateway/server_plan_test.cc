#include "gateway/server_plan.h"

#include <gtest/gtest.h>

namespace abacus::gateway {
namespace {

using nlohmann::json;

json Endpoint(int replica, const std::string& version, bool ready, const std::string& state) {
  return {{"replica", replica},
          {"taskId", "w.0." + std::to_string(replica) + ".1"},
          {"address", "127.0.0.1:" + std::to_string(20000 + replica)},
          {"version", version},
          {"ready", ready},
          {"state", state}};
}

TEST(WantedServersTest, CanaryReplicasTogetherGetCanaryPercentOfTheWeight) {
  json eps = {{"rollout", {{"phase", "Canary"}, {"canaryPercent", 20}}},
              {"items", json::array({Endpoint(0, "canary", true, "serving"), Endpoint(1, "stable", true, "serving"),
                                     Endpoint(2, "stable", true, "serving"), Endpoint(3, "stable", true, "serving")})}};
  ServerSet s = WantedServers(eps);
  ASSERT_EQ(s.size(), 4u);
  double canary = s.at("t-w.0.0.1").weight, total = 0;
  for (const auto& [_, w] : s) total += w.weight;
  EXPECT_NEAR(canary / total, 0.20, 1e-9);
  for (const auto& [_, w] : s) EXPECT_LE(w.weight, 256);
}

TEST(WantedServersTest, WeightsStayWithinHaproxyRangeAndEqualWithoutCanary) {
  json items = json::array();
  for (int i = 0; i < 40; ++i) items.push_back(Endpoint(i, i < 3 ? "canary" : "stable", true, "serving"));
  ServerSet s = WantedServers({{"rollout", {{"canaryPercent", 7}}}, {"items", items}});
  double canary = 0, total = 0;
  for (const auto& [name, w] : s) {
    EXPECT_GE(w.weight, 1);
    EXPECT_LE(w.weight, 256);
    total += w.weight;
    if (name == "t-w.0.0.1" || name == "t-w.0.1.1" || name == "t-w.0.2.1") canary += w.weight;
  }
  EXPECT_NEAR(canary / total, 0.07, 0.01);
  ServerSet plain = WantedServers({{"items", json::array({Endpoint(0, "stable", true, "serving"),
                                                          Endpoint(1, "stable", true, "serving")})}});
  EXPECT_EQ(plain.at("t-w.0.0.1").weight, plain.at("t-w.0.1.1").weight);
}

TEST(WantedServersTest, DrainingAndNotReadyReplicasGetNoNewRequests) {
  ServerSet s = WantedServers({{"items", json::array({Endpoint(0, "stable", false, "draining"),
                                                      Endpoint(1, "stable", false, "serving")})}});
  EXPECT_EQ(s.at("t-w.0.0.1").admin, ServerAdmin::kDrain);
  EXPECT_EQ(s.at("t-w.0.1.1").admin, ServerAdmin::kMaint);
}

TEST(PlanCommandsTest, AddsChangesAndRemovesServersThroughTheRuntimeApi) {
  ServerSet have = {{"t-a", {"127.0.0.1:1", 1, ServerAdmin::kReady}}, {"t-b", {"127.0.0.1:2", 1, ServerAdmin::kReady}}};
  ServerSet want = {{"t-a", {"127.0.0.1:1", 4, ServerAdmin::kDrain}}, {"t-c", {"127.0.0.1:3", 1, ServerAdmin::kReady}}};
  std::vector<std::string> cmds = PlanCommands("svc", have, want, true);
  std::vector<std::string> expected = {
      "set server svc/t-a weight 4",
      "set server svc/t-a state drain",
      "add server svc/t-c 127.0.0.1:3 weight 1 check",
      "enable health svc/t-c",
      "set server svc/t-c state ready",
      "set server svc/t-b state maint",
      "shutdown sessions server svc/t-b",
      "del server svc/t-b",
  };
  EXPECT_EQ(cmds, expected);
  EXPECT_TRUE(PlanCommands("svc", want, want, true).empty());
}

}  // namespace
}  // namespace abacus::gateway
