// The agent protocol's one codec (docs/agent-protocol.md): phase names, what a decoder refuses
// and what it ignores (as the server always did), and an assignment as the server sends it.
#include <gtest/gtest.h>

#include "wire/agent_protocol.h"
#include "wire/assignment.h"
#include "wire/task_phase.h"

namespace abacus::wire {
namespace {

using nlohmann::json;

TEST(TaskPhaseTest, OneNameTable) {
  for (TaskPhase p : {TaskPhase::kRunning, TaskPhase::kStopping, TaskPhase::kExited, TaskPhase::kLost}) {
    EXPECT_EQ(ParseTaskPhase(TaskPhaseName(p)), p);
  }
  EXPECT_EQ(TaskPhaseName(TaskPhase::kStopping), "Stopping");
  EXPECT_FALSE(ParseTaskPhase("").has_value());
  EXPECT_FALSE(ParseTaskPhase("running").has_value());
  EXPECT_TRUE(IsFinal(TaskPhase::kLost));
  EXPECT_FALSE(IsFinal(TaskPhase::kStopping));
}

TEST(TaskStatusCodecTest, RefusesWhatTheServerRefused) {
  EXPECT_EQ(ParseStatusReport(json::array()).status().message(), "expected a JSON object");
  EXPECT_EQ(ParseStatusReport(json{{"tasks", 3}}).status().message(), "tasks: expected an array");
  EXPECT_EQ(ParseTaskStatus(json{{"taskId", 3}, {"phase", "Running"}}).status().message(),
            "tasks[]: each needs a string taskId");
  EXPECT_EQ(ParseTaskStatus(json{{"taskId", "t"}}).status().message(),
            "tasks[t].phase: expected Running, Stopping, Exited or Lost, got ''");
  EXPECT_FALSE(ParseTaskStatus(json{{"taskId", "t"}, {"phase", "Exited"}, {"exitCode", "3"}}).ok());
  EXPECT_TRUE(ParseStatusReport(json::object())->tasks.empty());
}

TEST(TaskStatusCodecTest, IgnoresOptionalFieldsOfAnotherShape) {
  auto s = ParseTaskStatus(json::parse(
      R"({"taskId":"t","phase":"Running","ready":"yes","readinessRun":{"ok":true},"livenessRun":[1],)"
      R"("startedAt":"yesterday","address":5,"results":{"a":1},"warnings":"w","pid":"7"})"));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  TaskStatus want;
  want.task_id = "t";
  EXPECT_EQ(*s, want);
}

TEST(HeartbeatCodecTest, SkipsDeviceLinesWithoutAnIndex) {
  auto h = ParseHeartbeatRequest(json::parse(
      R"({"devices":[{"uuid":"GPU-0"},{"index":1,"health":"Sick"},{"index":2}],"tasks":[{"taskId":"t","phase":"Lost"}]})"));
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  ASSERT_EQ(h->devices.size(), 2u);
  EXPECT_EQ(h->devices[0].health, DeviceHealth::kUnknown);
  EXPECT_FALSE(h->devices[1].health.has_value());  // not reported: no health report
  EXPECT_EQ(h->tasks[0].phase, TaskPhase::kLost);
  EXPECT_FALSE(ParseHeartbeatRequest(json::parse(R"({"tasks":[{"taskId":"t","phase":"Gone"}]})")).ok());
}

TEST(RegisterCodecTest, ReadsTheRegistrationsOwnFields) {
  auto r = ParseRegisterRequest(json::parse(
      R"({"name":"n","agentVersion":"1.0","credential":"c","tasks":[{"taskId":"a","phase":"Running"},)"
      R"({"taskId":"b","phase":"Weird"},{"taskId":"c"},7]})"));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->credential, "c");
  EXPECT_EQ(r->agent_version, "1.0");
  ASSERT_EQ(r->tasks.size(), 3u);
  EXPECT_EQ(r->tasks[0].phase, TaskPhase::kRunning);
  EXPECT_EQ(r->tasks[1].phase, TaskPhase::kLost);  // a phase it cannot name: not run any more
  EXPECT_EQ(r->tasks[2].phase, TaskPhase::kLost);
  EXPECT_EQ(ParseRegisterRequest(json{{"credential", 1}}).status().message(),
            "credential: expected the node credential (a string)");
}

// An assignment task as the server sent it before the codec moved here (recorded; field order
// is the JSON library's).
constexpr const char* kRecordedTask =
    R"({"action":"run","attempt":1,"command":["python","train.py"],"cpuMilli":1000,)"
    R"("devices":[{"deviceMemoryBytes":85899345920,"flavor":"gpu/nvidia/a100-80g","index":0,"memoryBytes":85899345920,)"
    R"("milli":1000,"uuid":"GPU-0","vendor":"nvidia"},{"index":3,"memoryBytes":0,"milli":500}],)"
    R"("env":{"ABACUS_TASK_ID":"wl-a.0.0.1.0"},"fencingGraceSeconds":30,"fencingSignal":"SIGTERM","graceSeconds":10,)"
    R"("group":0,"image":"","kind":"TrainingJob","memoryBytes":1073741824,)"
    R"("mounts":[{"mountPath":"/data","path":"/data","readOnly":true}],"network":"isolated","project":"acme/ml",)"
    R"("readOnlyRoot":true,"replica":0,"run":0,"stopSignal":"SIGUSR1","taskId":"wl-a.0.0.1.0",)"
    R"("workload":"ft","workloadId":"wl-a"})";

TaskAssignment RecordedTask() {
  TaskAssignment t;
  t.task_id = "wl-a.0.0.1.0";
  t.workload_id = "wl-a";
  t.workload = "ft";
  t.kind = "TrainingJob";
  t.project = "acme/ml";
  t.attempt = 1;
  t.command = {"python", "train.py"};
  t.env = {{"ABACUS_TASK_ID", "wl-a.0.0.1.0"}};
  t.cpu_milli = 1000;
  t.memory_bytes = int64_t{1} << 30;
  t.devices = {GrantedDevice{0, 1000, int64_t{80} << 30, GrantedDeviceInfo{"GPU-0", "nvidia", "gpu/nvidia/a100-80g", int64_t{80} << 30}},
               GrantedDevice{3, 500, 0, std::nullopt}};
  t.grace_seconds = 10;
  t.stop_signal = "SIGUSR1";
  t.fencing_signal = "SIGTERM";
  t.fencing_grace_seconds = 30;
  t.mounts = {MountSpec{"/data", "", true}};
  t.read_only_root = true;
  t.network = "isolated";
  return t;
}

TEST(AssignmentCodecTest, EncodesAsRecordedAndReadsItBack) {
  EXPECT_EQ(ToJson(RecordedTask()).dump(), kRecordedTask);
  auto back = ParseTaskAssignment(json::parse(kRecordedTask));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  TaskAssignment want = RecordedTask();
  want.mounts[0].mount_path = "/data";  // the body carries the mount path the server filled in
  EXPECT_EQ(*back, want);
  EXPECT_EQ(ToJson(*back).dump(), kRecordedTask);
}

TEST(AssignmentCodecTest, SecretFieldsAndActions) {
  TaskAssignment t = RecordedTask();
  t.action = TaskAction::kStop;
  t.mounts[0].mount_path = "/data";
  t.probes = json::object();
  t.secret_files = {SecretFileData{"db/password", "aGk="}};
  t.secret_env = {"DB_PASSWORD"};
  json j = ToJson(t);
  EXPECT_EQ(j["action"], "stop");
  EXPECT_EQ(j["probes"], json::object());
  EXPECT_EQ(j["secretFiles"], json::parse(R"([{"data":"aGk=","path":"db/password"}])"));
  EXPECT_EQ(j["secretEnv"], json::parse(R"(["DB_PASSWORD"])"));
  EXPECT_FALSE(j.contains("secretError"));
  EXPECT_EQ(*ParseTaskAssignment(j), t);
  j["action"] = "pause";
  EXPECT_EQ(ParseTaskAssignment(j).status().message(), "task wl-a.0.0.1.0: unknown action 'pause'");
  EXPECT_FALSE(ParseAssignment(json{{"tasks", json::array()}}).ok());  // no version
}

}  // namespace
}  // namespace abacus::wire
