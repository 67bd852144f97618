// Drain before stop (issue 24): a service replica the server stops is published as draining
// for spec.drainSeconds (default 5) before the agent is told to stop it; the stop is sent on the
// controller tick at the deadline, also after a server restart meanwhile. ControlPlane on a
// manual clock, without HTTP.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/ids.h"
#include "server/agent_api.h"
#include "server/control_plane.h"
#include "server/control_plane_fixture.h"
#include "server/server_test_util.h"
#include "server/service_endpoints.h"
#include "server/read_views_json.h"

namespace abacus::server {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// A CPU service of `replicas` replicas; `extra` goes into its spec.
std::string Service(int replicas, const std::string& extra = "") {
  return "kind: InferenceService\nname: chat\nproject: acme/ml\nqueue: train\nspec:\n  command: [serve]\n"
         "  replicas: " + std::to_string(replicas) + "\n  minReplicas: 1\n  maxReplicas: 4\n" + extra +
         "  taskGroups:\n    - name: server\n      resources: {cpu: 1, memory: 1Gi}\n";
}

class ServiceDrainTest : public testing_cp::ControlPlaneFixture {
 protected:
  void SetUp() override {
    ControlPlaneFixture::SetUp();
    Open();
    ApplyOrg(testing_org::AcmeOrg("train", 2));
    ASSERT_TRUE(cp_->RegisterAgent(json{{"name", "n1"}, {"cpuMilli", 16000}, {"memoryBytes", int64_t{64} << 30}}, nullptr).ok());
  }
  // Submits the service and reports each replica running on its own port.
  std::string Start(const std::string& spec, int replicas) {
    auto r = cp_->Submit(spec, false, "chat.yaml", nullptr, {}, false, nullptr);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return "";
    std::string id = r->answer.submitted[0].id;
    cp_->WaitForCycle();
    for (int i = 0; i < replicas; ++i) {
      json t = {{"taskId", id + ".0." + std::to_string(i) + ".1"},
                {"phase", "Running"},
                {"address", "127.0.0.1:" + std::to_string(20000 + i)}};
      EXPECT_TRUE(cp_->AgentStatus("n1", json{{"tasks", {t}}}).ok());
    }
    Tick();
    return id;
  }
  // One controller tick (they run at most once a second).
  void Tick() {
    clock_.Advance(1s);
    for (int i = 0; i < 2; ++i) cp_->WaitForCycle();
  }
  // The action the agent is told for `task` ("" when it is not told anything).
  std::string Action(const std::string& task) {
    auto answer = cp_->WaitAssignments("n1", 0, 0ms);
    if (!answer.ok()) return "";
    const json assignment = AssignmentJson(*answer, "n1", nullptr);
    for (const json& t : assignment["tasks"]) {
      if (t.value("taskId", "") == task) return t.value("action", "");
    }
    return "";
  }
  // The endpoint state of `replica` ("" when not listed).
  std::string EndpointState(const std::string& id, int replica) {
    auto eps = ServiceEndpoints(WorkloadViewJson(*cp_->GetWorkload(id)));
    if (!eps.ok()) return eps.status().ToString();
    for (const json& e : (*eps)["items"]) {
      if (e["replica"] == replica) return e["state"];
    }
    return "";
  }
};

TEST_F(ServiceDrainTest, ScaleDownDrainsForTheDefaultFiveSecondsThenStops) {
  const std::string id = Start(Service(2), 2);
  ASSERT_EQ(EndpointState(id, 1), "serving");
  ASSERT_TRUE(cp_->Scale(id, 1, {}, nullptr).ok());
  Tick();
  // Published as draining, still running on its agent.
  EXPECT_EQ(EndpointState(id, 1), "draining");
  EXPECT_EQ(Action(id + ".0.1.1"), "run");
  EXPECT_EQ(EndpointState(id, 0), "serving");
  json p = WorkloadViewJson(*cp_->GetWorkload(id))["placements"][1];
  ASSERT_TRUE(p.contains("drainUntilUs")) << p.dump();
  // Until the default grace of 5 s ran out (the ticks between do not send it).
  for (int i = 0; i < 3; ++i) {
    Tick();
    EXPECT_EQ(Action(id + ".0.1.1"), "run") << "after " << i + 2 << " s";
  }
  Tick();
  Tick();
  EXPECT_EQ(Action(id + ".0.1.1"), "stop");
  EXPECT_EQ(EndpointState(id, 1), "draining");
  // Once it exited, the replica is removed.
  ASSERT_TRUE(cp_->AgentStatus("n1", json{{"tasks", {{{"taskId", id + ".0.1.1"}, {"phase", "Exited"}, {"stopped", true}}}}}).ok());
  Tick();
  EXPECT_EQ(WorkloadViewJson(*cp_->GetWorkload(id))["placements"].size(), 1u);
}

TEST_F(ServiceDrainTest, DrainSecondsZeroStopsAtOnce) {
  const std::string id = Start(Service(2, "  drainSeconds: 0\n"), 2);
  ASSERT_TRUE(cp_->Scale(id, 1, {}, nullptr).ok());
  Tick();
  EXPECT_EQ(Action(id + ".0.1.1"), "stop");
  EXPECT_EQ(EndpointState(id, 1), "draining");
}

TEST_F(ServiceDrainTest, AServerRestartDuringTheDrainKeepsTheStop) {
  const std::string id = Start(Service(2, "  drainSeconds: 3\n"), 2);
  ASSERT_TRUE(cp_->Scale(id, 1, {}, nullptr).ok());
  Tick();
  EXPECT_EQ(Action(id + ".0.1.1"), "run");
  cp_.reset();
  clock_.Advance(5s);  // the deadline passes while the server is down
  Open();
  Tick();
  EXPECT_EQ(Action(id + ".0.1.1"), "stop");
}

TEST_F(ServiceDrainTest, ANewVersionDrainsTheOldRunBeforeItStops) {
  const std::string id = Start(Service(1, "  drainSeconds: 2\n"), 1);
  auto patched = cp_->UpdateWorkload(id, json{{"spec", {{"rollout", {{"version", "v2"}, {"canaryReplicas", 1}}}}}}.dump(),
                                     /*json_body=*/true, /*merge_patch=*/true, -1, nullptr, nullptr, false, nullptr);
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  Tick();
  EXPECT_EQ(EndpointState(id, 0), "draining");
  EXPECT_EQ(Action(id + ".0.0.1"), "run");
  Tick();
  Tick();
  EXPECT_EQ(Action(id + ".0.0.1"), "stop");
}

TEST_F(ServiceDrainTest, DrainSecondsIsValidatedAndKept) {
  auto bad = cp_->Submit(Service(1, "  drainSeconds: -1\n"), false, "chat.yaml", nullptr, {}, false, nullptr);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("drainSeconds"), std::string::npos) << bad.status().message();
  const std::string id = Start(Service(1, "  drainSeconds: 12\n"), 1);
  EXPECT_EQ(WorkloadViewJson(*cp_->GetWorkload(id))["spec"]["spec"]["drainSeconds"], 12);
}

}  // namespace
}  // namespace abacus::server
