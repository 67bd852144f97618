// The server's side of the agent protocol against recorded bodies (docs/agent-protocol.md): an
// agent of an earlier build sends exactly these, and the server reads them into the same
// placements; its registration answer keeps the fields an earlier agent reads. The bodies are
// recorded, not generated, so a change of the codec (wire/agent_protocol.h) that breaks an older
// agent fails here.
#include <gtest/gtest.h>

#include "server/agent_api.h"
#include "server/control_plane.h"
#include "server/control_plane_fixture.h"
#include "server/server_test_util.h"

namespace abacus::server {
namespace {

using nlohmann::json;

constexpr const char* kRecordedRegister =
    R"({"agentVersion":"1.2.3","cluster":"","cpuMilli":64000,"devices":[)"
    R"({"flavor":"gpu/nvidia/A100-80G","health":"Healthy","index":0,"memoryBytes":85899345920,"simulated":true,"uuid":"GPU-0"},)"
    R"({"flavor":"gpu/nvidia/A100-80G","health":"Healthy","index":1,"memoryBytes":85899345920,"simulated":true,"uuid":"GPU-1"}],)"
    R"("labels":{},"memoryBytes":274877906944,"name":"gpu-a","simulated":true,"taints":[],"tasks":[]})";

class AgentWireTest : public testing_cp::ControlPlaneFixture {
 protected:
  void SetUp() override {
    ControlPlaneFixture::SetUp();
    Open();
    ApplyOrg(testing_org::AcmeOrg("train", 2));
  }
  json Placement(const std::string& id) { return WorkloadJson(id)["placements"][0]; }
};

TEST_F(AgentWireTest, ReadsRecordedBodiesOfAnEarlierAgent) {
  auto answer = cp_->RegisterAgent(json::parse(kRecordedRegister), nullptr);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  // The answer an earlier agent reads (as the route encodes it): these four fields, nothing else.
  const json body = wire::ToJson(*answer);
  EXPECT_EQ(body["node"], "gpu-a");
  EXPECT_EQ(body["nodeToken"].get<std::string>().size(), 64u);
  EXPECT_EQ(body["heartbeatSeconds"], 5);
  EXPECT_EQ(body["nodeTimeoutSeconds"], 86400);
  EXPECT_EQ(body.size(), 4u) << body.dump();

  std::string id = SubmitYaml(testing_cp::A100Job("ft", 1), "ft.yaml");
  ASSERT_EQ(State(id), "Admitted");
  const std::string task = id + ".0.0.1";
  auto st = cp_->AgentStatus("gpu-a", json::parse(R"({"node":"gpu-a","tasks":[{"phase":"Running","pid":7,)"
                                                  R"("startedAt":"2026-01-01T00:10:00.000Z","taskId":")" +
                                                  task + R"(","warnings":["w"]}]})"));
  ASSERT_TRUE(st.ok()) << st.status().ToString();
  EXPECT_EQ(AgentStatusJson(*st), json::parse(R"({"ok":true,"unknown":[]})"));
  cp_->WaitForCycle();
  EXPECT_EQ(State(id), "Running");
  EXPECT_EQ(Placement(id)["phase"], "Running");
  EXPECT_EQ(Placement(id)["startedUs"], 1'767'226'200'000'000);

  // A heartbeat re-reports it Exited, with the device lines an earlier agent sends.
  auto hb = cp_->AgentHeartbeat(
      "gpu-a", json::parse(R"({"devices":[{"health":"Healthy","index":0,"memoryUsedBytes":1024,"utilization":0.5,)"
                           R"("uuid":"GPU-0"},{"health":"Healthy","index":1,"uuid":"GPU-1"}],"node":"gpu-a",)"
                           R"("tasks":[{"exitCode":0,"finishedAt":"2026-01-01T00:20:00.000Z","oomKilled":false,)"
                           R"("phase":"Exited","signal":0,"startedAt":"2026-01-01T00:10:00.000Z","stopped":false,)"
                           R"("taskId":")" + task + R"("}],"usage":[{"cpuSeconds":1.5,"memoryBytes":2048,"taskId":")" +
                           task + R"("}]})"));
  ASSERT_TRUE(hb.ok()) << hb.ToString();
  EXPECT_EQ(AgentHeartbeatJson(), json::parse(R"({"ok":true})"));
  cp_->WaitForCycle();
  EXPECT_EQ(State(id), "Succeeded");
  EXPECT_EQ(Placement(id)["phase"], "Exited");
  EXPECT_EQ(Placement(id)["finishedUs"], 1'767'226'800'000'000);
  EXPECT_DOUBLE_EQ(cp_->DeviceUtilization()["gpu-a"][0], 0.5);
}

TEST_F(AgentWireTest, RefusesWhatItAlwaysRefused) {
  ASSERT_TRUE(cp_->RegisterAgent(testing_cp::A100Node("gpu-a", 1), nullptr).ok());
  auto bad_phase = cp_->AgentStatus("gpu-a", json::parse(R"({"tasks":[{"taskId":"wl-x.0.0.1","phase":"Zombie"}]})"));
  EXPECT_EQ(bad_phase.status().message(),
            "tasks[wl-x.0.0.1].phase: expected Running, Stopping, Exited or Lost, got 'Zombie'");
  auto no_id = cp_->AgentStatus("gpu-a", json::parse(R"({"tasks":[{"phase":"Running"}]})"));
  EXPECT_EQ(no_id.status().message(), "tasks[]: each needs a string taskId");
  auto not_array = cp_->AgentStatus("gpu-a", json::parse(R"({"tasks":{}})"));
  EXPECT_EQ(not_array.status().message(), "tasks: expected an array");
  auto bad_credential = cp_->RegisterAgent(json::parse(R"({"name":"gpu-b","credential":5})"), nullptr);
  EXPECT_EQ(bad_credential.status().message(), "credential: expected the node credential (a string)");
  // A task id that names no task is answered as unknown, not refused.
  auto unknown = cp_->AgentStatus("gpu-a", json::parse(R"({"tasks":[{"taskId":"nonsense","phase":"Running"}]})"));
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(AgentStatusJson(*unknown)["unknown"], json::parse(R"(["nonsense"])"));
}

}  // namespace
}  // namespace abacus::server
