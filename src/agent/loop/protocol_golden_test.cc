// Recorded bodies of each agent-protocol message (docs/agent-protocol.md), both ways: what an
// agent of this build sends must be byte for byte what earlier builds sent (so an older server
// reads it), and what earlier agents sent must decode to the same message (so a newer server
// reads an older agent). These strings were recorded before the protocol moved to wire/ and are
// never regenerated.
#include <gtest/gtest.h>

#include "agent/loop/protocol.h"

namespace abacus::agent {
namespace {

constexpr const char* kExitedStatus =
    R"({"exitCode":3,"finishedAt":"2026-01-01T00:00:05.000Z","message":"exited 3","oomKilled":false,"phase":"Exited",)"
    R"("pid":42,"results":"{\"acc\": 0.8}","signal":0,"startedAt":"2026-01-01T00:00:00.000Z","stopped":false,)"
    R"("taskId":"wl-a.0.0.1","warnings":["w1"]})";
constexpr const char* kRunningStatus =
    R"({"address":"10.0.0.5:31000","live":true,"livenessRun":{"count":2,"ok":true},"phase":"Running",)"
    R"("probeMessage":"readiness: GET http://127.0.0.1:8000/health: HTTP 503","readinessRun":{"count":1,"ok":false},)"
    R"("ready":false,"startedAt":"2026-01-01T00:00:00.000Z","taskId":"wl-s.0.1.1"})";
constexpr const char* kLostStatus =
    R"({"lostReason":"NodeLost","message":"fenced","oomKilled":false,"phase":"Lost","signal":9,"stopped":true,)"
    R"("taskId":"wl-b.0.0.2"})";
constexpr const char* kRegister =
    R"({"agentVersion":"1.2.3","cluster":"lab","cpuMilli":8000,"credential":"secret-cred","devices":[{"driverVersion":"550.1",)"
    R"("flavor":"gpu/nvidia/a100-80g","health":"Healthy","index":0,"memoryBytes":85899345920,"numa":1,)"
    R"("runtimeVersions":{"cuda":"12.4"},"simulated":true,"uuid":"GPU-0"}],"extended":{"rdma/hca":4},)"
    R"("labels":{"zone":"a"},"memoryBytes":1073741824,"name":"gpu-a","pool":"train","simulated":true,)"
    R"("taints":[{"effect":"NoSchedule","key":"k","value":"v"}],"tasks":[{"message":"agent restarted while the task ran",)"
    R"("oomKilled":false,"phase":"Lost","signal":0,"stopped":false,"taskId":"wl-a.0.0.1"}]})";
constexpr const char* kHeartbeat =
    R"({"devices":[{"health":"Healthy","index":0,"memoryUsedBytes":1024,"utilization":0.5,"uuid":"GPU-0"},)"
    R"({"health":"Unhealthy","healthReason":"xid 79","index":1,"uuid":"GPU-1"}],"node":"gpu-a",)"
    R"("tasks":[{"phase":"Running","taskId":"wl-a.0.0.1"}],"usage":[{"cpuSeconds":1.5,"memoryBytes":2048,"taskId":"wl-a.0.0.1"}]})";
constexpr const char* kStatusReport = R"({"node":"gpu-a","tasks":[{"phase":"Stopping","pid":7,"taskId":"wl-a.0.0.1"}]})";
constexpr const char* kRegisterAnswer =
    R"({"heartbeatSeconds":5,"node":"gpu-a","nodeTimeoutSeconds":30,"nodeToken":"abc"})";

Time At(int seconds) { return FromMicros(1'767'225'600'000'000 + int64_t{seconds} * 1'000'000); }

TaskStatus Exited() {
  TaskStatus s;
  s.task_id = "wl-a.0.0.1";
  s.phase = ReportedPhase::kExited;
  s.pid = 42;
  s.started_at = At(0);
  s.finished_at = At(5);
  s.exit_code = 3;
  s.message = "exited 3";
  s.warnings = {"w1"};
  s.results = R"({"acc": 0.8})";
  return s;
}

TaskStatus Running() {
  TaskStatus s;
  s.task_id = "wl-s.0.1.1";
  s.phase = ReportedPhase::kRunning;
  s.started_at = At(0);
  s.ready = false;
  s.live = true;
  s.probe_message = "readiness: GET http://127.0.0.1:8000/health: HTTP 503";
  s.readiness_run = ProbeRun{false, 1};
  s.liveness_run = ProbeRun{true, 2};
  s.address = "10.0.0.5:31000";
  return s;
}

TaskStatus Lost() {
  TaskStatus s;
  s.task_id = "wl-b.0.0.2";
  s.phase = ReportedPhase::kLost;
  s.signal = 9;
  s.stopped = true;
  s.message = "fenced";
  s.lost_reason = "NodeLost";
  return s;
}

TEST(ProtocolGoldenTest, TaskStatusEncodesAsRecorded) {
  EXPECT_EQ(ToJson(Exited()).dump(), kExitedStatus);
  EXPECT_EQ(ToJson(Running()).dump(), kRunningStatus);
  EXPECT_EQ(ToJson(Lost()).dump(), kLostStatus);
}

TEST(ProtocolGoldenTest, RecordedTaskStatusDecodes) {
  for (const char* body : {kExitedStatus, kRunningStatus, kLostStatus}) {
    auto s = ParseTaskStatus(nlohmann::json::parse(body));
    ASSERT_TRUE(s.ok()) << body << ": " << s.status().ToString();
    EXPECT_EQ(ToJson(*s).dump(), body);
  }
  auto exited = ParseTaskStatus(nlohmann::json::parse(kExitedStatus));
  EXPECT_EQ(exited->phase, ReportedPhase::kExited);
  EXPECT_EQ(exited->exit_code, 3);
  EXPECT_EQ(exited->results, Exited().results);
  auto running = ParseTaskStatus(nlohmann::json::parse(kRunningStatus));
  EXPECT_EQ(running->readiness_run, (ProbeRun{false, 1}));
  EXPECT_EQ(running->address, "10.0.0.5:31000");
}

TEST(ProtocolGoldenTest, RegisterEncodesAsRecorded) {
  RegisterRequest r;
  r.name = "gpu-a";
  r.cluster = "lab";
  r.pool = "train";
  r.labels = {{"zone", "a"}};
  r.taints = {Taint{"k", "v", TaintEffect::kNoSchedule}};
  r.cpu_milli = 8000;
  r.memory_bytes = int64_t{1} << 30;
  r.simulated = true;
  Device d;
  d.index = 0;
  d.uuid = "GPU-0";
  d.flavor = *Flavor::Parse("gpu/nvidia/a100-80g");
  d.memory_bytes = int64_t{80} << 30;
  d.driver_version = "550.1";
  d.runtime_versions = {{"cuda", "12.4"}};
  d.topology.numa_node = 1;
  d.simulated = true;
  r.devices = {d};
  r.extended = {{"rdma/hca", 4}};
  r.agent_version = "1.2.3";
  TaskStatus orphan;
  orphan.task_id = "wl-a.0.0.1";
  orphan.phase = ReportedPhase::kLost;
  orphan.message = "agent restarted while the task ran";
  r.tasks = {orphan};
  r.credential = "secret-cred";
  EXPECT_EQ(ToJson(r).dump(), kRegister);
}

TEST(ProtocolGoldenTest, HeartbeatAndStatusReportEncodeAsRecorded) {
  HeartbeatRequest h;
  h.node = "gpu-a";
  h.devices = {DeviceBeat{0, "GPU-0", DeviceHealth::kHealthy, "", 0.5, int64_t{1024}},
               DeviceBeat{1, "GPU-1", DeviceHealth::kUnhealthy, "xid 79", std::nullopt, std::nullopt}};
  TaskStatus running;
  running.task_id = "wl-a.0.0.1";
  h.tasks = {running};
  h.usage = {TaskUsageBeat{"wl-a.0.0.1", 1.5, 2048}};
  EXPECT_EQ(ToJson(h).dump(), kHeartbeat);

  TaskStatus stopping;
  stopping.task_id = "wl-a.0.0.1";
  stopping.phase = ReportedPhase::kStopping;
  stopping.pid = 7;
  EXPECT_EQ(StatusReportJson("gpu-a", {stopping}).dump(), kStatusReport);
}

TEST(ProtocolGoldenTest, RecordedRegisterAnswerDecodes) {
  auto a = ParseRegisterAnswer(nlohmann::json::parse(kRegisterAnswer));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->node, "gpu-a");
  EXPECT_EQ(a->node_token, "abc");
  EXPECT_EQ(a->heartbeat_seconds, 5);
  EXPECT_EQ(a->node_timeout_seconds, 30);
}

}  // namespace
}  // namespace abacus::agent
