#include "server/service_endpoints.h"

#include <gtest/gtest.h>

namespace abacus::server {
namespace {

using nlohmann::json;

json Service() {
  return json{{"id", "w-1"},
              {"name", "chat"},
              {"kind", "InferenceService"},
              {"project", "p"},
              {"state", "Running"},
              {"requeues", 0},
              {"spec", {{"spec", {{"probes", {{"readiness", {{"http", {{"path", "/ready"}, {"port", 0}}}}}}},
                                  {"rollout", {{"version", "v2"}, {"canaryPercent", 20}}}}}}},
              {"controllerState", {{"rollout", {{"phase", "Canary"}, {"stableVersion", "v1"}, {"canaryVersion", "v2"}}}}},
              {"placements",
               json::array({
                   {{"group", 0}, {"replica", 1}, {"phase", "Running"}, {"address", "127.0.0.1:20001"}, {"version", "v1"},
                    {"routed", true}, {"node", "n1"}},
                   {{"group", 0}, {"replica", 0}, {"phase", "Running"}, {"address", "127.0.0.1:20000"}, {"version", "v2"},
                    {"routed", true}, {"node", "n1"}, {"run", 2}},
                   {{"group", 0}, {"replica", 2}, {"phase", "Running"}, {"address", "127.0.0.1:20002"}, {"version", "v1"},
                    {"routed", true}, {"stopRequested", true}},
                   {{"group", 0}, {"replica", 3}, {"phase", "Exited"}, {"address", "127.0.0.1:20003"}, {"version", "v1"}},
                   {{"group", 0}, {"replica", 4}, {"phase", "Running"}, {"version", "v1"}},  // no address yet
               })}};
}

TEST(ServiceEndpointsTest, OneEndpointPerRunningReplicaWithVersionReadinessAndState) {
  auto out = ServiceEndpoints(Service());
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const json& items = (*out)["items"];
  ASSERT_EQ(items.size(), 3u) << items.dump();
  EXPECT_EQ(items[0]["replica"], 0);
  EXPECT_EQ(items[0]["taskId"], "w-1.0.0.1.2");
  EXPECT_EQ(items[0]["address"], "127.0.0.1:20000");
  EXPECT_EQ(items[0]["version"], "canary");
  EXPECT_EQ(items[0]["release"], "v2");
  EXPECT_EQ(items[0]["ready"], true);
  EXPECT_EQ(items[0]["state"], "serving");
  EXPECT_EQ(items[1]["version"], "stable");
  EXPECT_EQ(items[2]["state"], "draining");  // the server is stopping it
  EXPECT_EQ(items[2]["ready"], false);
  EXPECT_EQ((*out)["rollout"]["canaryPercent"], 20);
  EXPECT_EQ((*out)["rollout"]["canaryVersion"], "v2");
  EXPECT_EQ((*out)["healthCheck"]["path"], "/ready");
}

TEST(ServiceEndpointsTest, StableRolloutHasNoCanary) {
  json v = Service();
  v["controllerState"]["rollout"] = {{"phase", "Stable"}, {"stableVersion", "v1"}};
  v["placements"][1]["version"] = "v1";
  auto out = ServiceEndpoints(v);
  ASSERT_TRUE(out.ok());
  for (const json& e : (*out)["items"]) EXPECT_EQ(e["version"], "stable") << e.dump();
  EXPECT_FALSE((*out)["rollout"].contains("canaryPercent"));
}

// The fourth probe: right after a rollback the failed canary's replica still runs v2 while it
// drains; it was listed as `stable (v2)`, the version the rollback just refused.
TEST(ServiceEndpointsTest, ARolledBackCanaryStillDrainingIsOutgoingNotStable) {
  json v = Service();
  v["controllerState"]["rollout"]["phase"] = "RolledBack";
  v["placements"][1]["stopRequested"] = true;  // replica 0, on v2, told to stop
  auto out = ServiceEndpoints(v);
  ASSERT_TRUE(out.ok());
  const json& items = (*out)["items"];
  ASSERT_EQ(items.size(), 3u) << items.dump();
  EXPECT_EQ(items[0]["release"], "v2");
  EXPECT_EQ(items[0]["version"], "outgoing");
  EXPECT_EQ(items[0]["state"], "draining");
  EXPECT_EQ(items[1]["version"], "stable");  // replica 1 runs v1, the stable version
  EXPECT_FALSE((*out)["rollout"].contains("canaryVersion"));
}

TEST(ServiceEndpointsTest, OnlyAnInferenceServiceHasEndpoints) {
  json v = Service();
  v["kind"] = "TrainingJob";
  auto out = ServiceEndpoints(v);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(out.status().message().find("only an InferenceService"), std::string::npos);
}

}  // namespace
}  // namespace abacus::server
