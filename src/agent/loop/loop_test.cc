// The agent loop's parts on their own: backoff, the task table's reconciliation and probe
// outcomes, protocol codecs, log shipping offsets, pid files.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "agent/loop/backoff.h"
#include "agent/loop/log_shipper.h"
#include "agent/loop/pid_file.h"
#include "agent/loop/protocol.h"
#include "agent/loop/task_table.h"
#include "agent/loop/waker.h"
#include "common/process_state.h"

namespace abacus::agent {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

fs::path MakeTempDir(const std::string& tag) {
  static int n = 0;
  fs::path p = fs::temp_directory_path() / ("abacus-loop-" + tag + "-" + std::to_string(::getpid()) + "-" +
                                            std::to_string(++n));
  fs::create_directories(p);
  return p;
}

AssignedTask RunOrder(const std::string& id) {
  AssignedTask t;
  t.task_id = id;
  t.command = {"true"};
  t.grace = seconds(30);
  t.stop_signal = SIGUSR1;
  return t;
}

AssignedTask StopIt(const std::string& id) {
  AssignedTask t = RunOrder(id);
  t.action = TaskAction::kStop;
  return t;
}

TaskStatus Phase(const std::string& id, ReportedPhase phase) {
  TaskStatus s;
  s.task_id = id;
  s.phase = phase;
  if (phase == ReportedPhase::kExited) s.exit_code = 0;
  return s;
}

ProbeOutcome Outcome(std::optional<bool> ready, std::optional<bool> live, std::string message = "") {
  return ProbeOutcome{ready, live, std::move(message)};
}

// ---- backoff ----

TEST(BackoffTest, DoublesFromATenthOfASecondToFiveSecondsWithJitter) {
  Backoff b(milliseconds(100), seconds(5), 42);
  Duration ceiling = milliseconds(100);
  for (int i = 0; i < 12; ++i) {
    Duration d = b.Next();
    EXPECT_GE(d, ceiling / 2) << "failure " << i;
    EXPECT_LE(d, ceiling) << "failure " << i;
    ceiling = std::min<Duration>(ceiling * 2, seconds(5));
  }
  EXPECT_EQ(b.failures(), 12);
  b.Reset();
  EXPECT_LE(b.Next(), milliseconds(100));
}

TEST(BackoffTest, JitterSpreadsAgentsApart) {
  Backoff a(milliseconds(100), seconds(5), 1), b(milliseconds(100), seconds(5), 2);
  int same = 0;
  for (int i = 0; i < 10; ++i) same += a.Next() == b.Next() ? 1 : 0;
  EXPECT_LT(same, 10);
}

// ---- task table ----

TEST(TaskTableTest, RunIsStartedOnceEvenWhenRepublished) {
  ManualClock clock;
  TaskTable table(clock);
  ReconcilePlan first = table.Reconcile({1, {RunOrder("a"), RunOrder("b")}}, seconds(10));
  ASSERT_EQ(first.start.size(), 2u);
  table.Update(Phase("a", ReportedPhase::kRunning));
  table.Update(Phase("b", ReportedPhase::kExited));
  // The same ids again (a new version, or a restarted server): nothing to start.
  ReconcilePlan again = table.Reconcile({2, {RunOrder("a"), RunOrder("b")}}, seconds(10));
  EXPECT_TRUE(again.start.empty());
  EXPECT_TRUE(again.stop.empty());
  EXPECT_TRUE(table.Started("a"));
}

TEST(TaskTableTest, AddressRidesWithEveryStatusOfTheTaskAndTheWire) {
  ManualClock clock;
  TaskTable table(clock);
  table.Reconcile({1, {RunOrder("svc")}}, seconds(10));
  table.SetAddress("svc", "10.0.0.7:20000");
  table.Update(Phase("svc", ReportedPhase::kRunning));
  std::vector<TaskStatus> sent = table.TakeUnsent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].address, "10.0.0.7:20000");
  table.Update(Phase("svc", ReportedPhase::kStopping));  // a later status keeps it
  sent = table.TakeUnsent();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].address, "10.0.0.7:20000");
  auto parsed = ParseTaskStatus(ToJson(sent[0]));
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->address, "10.0.0.7:20000");
}

TEST(TaskTableTest, StopAndVanishedAreOrderedOnceWithTheirSignalAndGrace) {
  ManualClock clock;
  TaskTable table(clock);
  (void)table.Reconcile({1, {RunOrder("a"), RunOrder("b")}}, seconds(10));
  table.Update(Phase("a", ReportedPhase::kRunning));
  table.Update(Phase("b", ReportedPhase::kRunning));
  ReconcilePlan plan = table.Reconcile({2, {StopIt("a")}}, seconds(10));
  ASSERT_EQ(plan.stop.size(), 2u);
  EXPECT_EQ(plan.stop[0].task_id, "a");
  EXPECT_EQ(plan.stop[0].signal, SIGUSR1);
  EXPECT_EQ(plan.stop[0].grace, seconds(30));
  EXPECT_EQ(plan.stop[1].task_id, "b");  // vanished: SIGTERM, 10 s
  EXPECT_EQ(plan.stop[1].signal, SIGTERM);
  EXPECT_EQ(plan.stop[1].grace, seconds(10));
  EXPECT_TRUE(table.Reconcile({3, {StopIt("a")}}, seconds(10)).stop.empty());
}

TEST(TaskTableTest, StopBeforeStartIsAnsweredAsStoppedWithoutRunning) {
  ManualClock clock;
  TaskTable table(clock);
  ReconcilePlan plan = table.Reconcile({1, {StopIt("late")}}, seconds(10));
  EXPECT_TRUE(plan.start.empty());
  EXPECT_TRUE(plan.stop.empty());
  auto unsent = table.TakeUnsent();
  ASSERT_EQ(unsent.size(), 1u);
  EXPECT_EQ(unsent[0].phase, ReportedPhase::kExited);
  EXPECT_TRUE(unsent[0].stopped);
  EXPECT_TRUE(table.Reconcile({2, {RunOrder("late")}}, seconds(10)).start.empty());
}

TEST(TaskTableTest, PhasesOnlyMoveForwardAndStatusesStayUntilDone) {
  ManualClock clock;
  TaskTable table(clock);
  (void)table.Reconcile({1, {RunOrder("a")}}, seconds(10));
  table.Update(Phase("a", ReportedPhase::kExited));
  table.Update(Phase("a", ReportedPhase::kRunning));  // a late start report
  ASSERT_EQ(table.All().size(), 1u);
  EXPECT_EQ(table.All()[0].phase, ReportedPhase::kExited);

  auto batch = table.TakeUnsent();
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_FALSE(table.HasUnsent());
  table.MarkUnsent(batch);  // the POST failed
  EXPECT_TRUE(table.HasUnsent());
  (void)table.TakeUnsent();

  EXPECT_TRUE(table.TakeDone().empty());  // still in the assignment
  (void)table.Reconcile({2, {}}, seconds(10));
  EXPECT_EQ(table.TakeDone(), std::vector<std::string>{"a"});
  EXPECT_TRUE(table.All().empty());
  EXPECT_TRUE(table.Reconcile({3, {RunOrder("a")}}, seconds(10)).start.empty());  // still remembered
  clock.Advance(std::chrono::hours(2));
  (void)table.TakeDone();
  EXPECT_FALSE(table.Started("a"));
}

TEST(TaskTableTest, OrphansAreStartedAlreadyAndDropOnceReported) {
  ManualClock clock;
  TaskTable table(clock);
  TaskStatus lost = Phase("old", ReportedPhase::kLost);
  table.Update(lost);
  EXPECT_TRUE(table.Started("old"));
  table.MarkSent({lost});  // registration carried it
  EXPECT_FALSE(table.HasUnsent());
  EXPECT_EQ(table.TakeDone(), std::vector<std::string>{"old"});
}

// ---- probe outcomes in statuses ----

TEST(TaskTableProbesTest, ReadyAndLiveChangesAreSentAMessageAloneRidesAlong) {
  ManualClock clock;
  TaskTable table(clock);
  (void)table.Reconcile({1, {RunOrder("a")}}, seconds(10));
  table.SetProbes("a", Outcome(false, true));
  table.Update(Phase("a", ReportedPhase::kRunning));
  auto first = table.TakeUnsent();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].ready, false);
  EXPECT_EQ(first[0].live, true);

  table.SetProbes("a", Outcome(false, true, "readiness: GET …: HTTP 503"));
  EXPECT_FALSE(table.HasUnsent());  // the next report (a heartbeat) carries it
  EXPECT_EQ(table.All()[0].probe_message, "readiness: GET …: HTTP 503");

  table.SetProbes("a", Outcome(true, true));
  auto ready = table.TakeUnsent();
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].ready, true);
  EXPECT_EQ(ready[0].probe_message, "");
  // The POST failed while only the message changed: the newest status goes again.
  table.SetProbes("a", Outcome(true, true, "liveness: tcp …: connection refused"));
  table.MarkUnsent(ready);
  auto again = table.TakeUnsent();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].probe_message, "liveness: tcp …: connection refused");

  table.SetProbes("a", Outcome(true, false, "liveness: tcp …: connection refused"));
  EXPECT_TRUE(table.HasUnsent());
  EXPECT_EQ(table.TakeUnsent()[0].live, false);
}

TEST(TaskTableProbesTest, StoppingIsNotReadyAndFinalStatusesCarryOnlyTheMessage) {
  ManualClock clock;
  TaskTable table(clock);
  (void)table.Reconcile({1, {RunOrder("a"), RunOrder("plain")}}, seconds(10));
  table.SetProbes("a", Outcome(true, true, "readiness: GET …: HTTP 503"));
  table.Update(Phase("a", ReportedPhase::kRunning));
  table.Update(Phase("plain", ReportedPhase::kRunning));
  EXPECT_EQ(table.All()[0].ready, true);
  EXPECT_FALSE(table.All()[1].ready.has_value());
  EXPECT_FALSE(table.All()[1].live.has_value());

  table.Update(Phase("a", ReportedPhase::kStopping));
  EXPECT_EQ(table.All()[0].ready, false);
  EXPECT_EQ(table.All()[0].live, true);
  table.Update(Phase("a", ReportedPhase::kExited));
  TaskStatus exited = table.All()[0];
  EXPECT_FALSE(exited.ready.has_value());
  EXPECT_FALSE(exited.live.has_value());
  EXPECT_EQ(exited.probe_message, "readiness: GET …: HTTP 503");
  table.SetProbes("a", Outcome(true, true));  // a late outcome changes nothing
  EXPECT_EQ(table.All()[0], exited);
  table.SetProbes("unknown", Outcome(true, true));
  EXPECT_EQ(table.All().size(), 2u);
}

// ---- protocol ----

TEST(ProtocolTest, ParsesAnAssignment) {
  auto j = nlohmann::json::parse(R"({"version": 17, "tasks": [
    {"taskId": "wl-abc.0.0.1", "workloadId": "wl-abc", "action": "run", "command": ["python", "train.py"],
     "env": {"K": "V"}, "cpuMilli": 16000, "memoryBytes": 1024,
     "devices": [{"index": 2, "milli": 250, "memoryBytes": 10, "uuid": "GPU-2", "vendor": "nvidia"}],
     "graceSeconds": 120, "stopSignal": "SIGUSR1",
     "mounts": [{"path": "/data/corpus", "mountPath": "/corpus", "readOnly": false}, {"path": "/models"}]},
    {"taskId": "wl-x.0.0.1", "action": "stop"}]})");
  auto a = ParseAssignment(j);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->version, 17);
  ASSERT_EQ(a->tasks.size(), 2u);
  const AssignedTask& t = a->tasks[0];
  EXPECT_EQ(t.command, (std::vector<std::string>{"python", "train.py"}));
  EXPECT_EQ(t.env.at("K"), "V");
  EXPECT_EQ(t.devices.at(0).uuid, "GPU-2");
  EXPECT_EQ(t.devices.at(0).milli, 250);
  EXPECT_EQ(t.grace, seconds(120));
  EXPECT_EQ(t.stop_signal, SIGUSR1);
  ASSERT_EQ(t.mounts.size(), 2u);
  EXPECT_EQ(t.mounts[0].host_path, "/data/corpus");
  EXPECT_EQ(t.mounts[0].container_path, "/corpus");
  EXPECT_FALSE(t.mounts[0].read_only);
  EXPECT_EQ(t.mounts[1].container_path, "/models");  // the same path by default, read-only
  EXPECT_TRUE(t.mounts[1].read_only);
  EXPECT_EQ(a->tasks[1].action, TaskAction::kStop);
  EXPECT_EQ(a->tasks[1].stop_signal, SIGTERM);

  EXPECT_FALSE(ParseAssignment(nlohmann::json::parse(R"({"tasks": []})")).ok());
  EXPECT_FALSE(ParseAssignment(nlohmann::json::parse(R"({"version": 1, "tasks": [{"taskId": "a", "action": "x"}]})")).ok());
}

// The tenant's network class (AdmissionPolicy spec.network) reaches the task; none: "".
TEST(ProtocolTest, CarriesTheNetworkClass) {
  auto a = ParseAssignment(nlohmann::json::parse(R"({"version": 2, "tasks": [
    {"taskId": "a.0.0.1", "action": "run", "command": ["true"], "network": "isolated"},
    {"taskId": "b.0.0.1", "action": "run", "command": ["true"]}]})"));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->tasks.at(0).network, "isolated");
  EXPECT_EQ(a->tasks.at(1).network, "");
}

// An Evaluation's results file name (from spec.resultsPath) reaches the agent; none: "".
TEST(ProtocolTest, CarriesTheResultsFile) {
  auto a = ParseAssignment(nlohmann::json::parse(R"({"version": 2, "tasks": [
    {"taskId": "a.0.0.1", "action": "run", "command": ["true"], "resultsFile": "mmlu.json"},
    {"taskId": "b.0.0.1", "action": "run", "command": ["true"]}]})"));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->tasks.at(0).results_file, "mmlu.json");
  EXPECT_EQ(a->tasks.at(1).results_file, "");
}

TEST(ProtocolTest, SignalsByNameOrNumber) {
  EXPECT_EQ(*ParseSignal("SIGTERM"), SIGTERM);
  EXPECT_EQ(*ParseSignal("USR1"), SIGUSR1);
  EXPECT_EQ(*ParseSignal("9"), SIGKILL);
  EXPECT_FALSE(ParseSignal("SIGNOPE").ok());
  EXPECT_FALSE(ParseSignal("").ok());
}

TEST(ProtocolTest, StatusAndLogChunkJson) {
  TaskStatus s = Phase("t", ReportedPhase::kExited);
  s.exit_code = 3;
  s.message = "exited 3";
  s.finished_at = FromMicros(1'767'225'600'000'000);
  nlohmann::json j = ToJson(s);
  EXPECT_EQ(j["phase"], "Exited");
  EXPECT_EQ(j["exitCode"], 3);
  EXPECT_EQ(j["finishedAt"], "2026-01-01T00:00:00.000Z");
  EXPECT_EQ(*ParseTaskStatus(j),
            (TaskStatus{s.task_id, s.phase, 0, {}, s.finished_at, 3, 0, false, false, "exited 3", {}, {}, {}, "", {}, {}, {}, "", ""}));
  EXPECT_FALSE(ToJson(Phase("r", ReportedPhase::kRunning)).contains("exitCode"));
  EXPECT_FALSE(j.contains("results"));
  // The results file rides with the Exited status, or why it was not taken.
  s.results = R"({"metrics": {"accuracy": 0.81}})";
  EXPECT_EQ(ToJson(s)["results"], *s.results);
  EXPECT_EQ(ParseTaskStatus(ToJson(s))->results, s.results);
  s.results.reset();
  s.results_error = "results.json is 300000 bytes, more than the 262144 allowed";
  EXPECT_EQ(ToJson(s)["resultsError"], s.results_error);
  EXPECT_EQ(ParseTaskStatus(ToJson(s))->results_error, s.results_error);

  LogChunk c{"n", "t", LogStream::kStderr, 5, std::string("hi\n\0x", 5)};
  nlohmann::json lj = ToJson(c);
  EXPECT_EQ(lj["stream"], "stderr");
  EXPECT_EQ(lj["offset"], 5);
  EXPECT_EQ(lj["dataBase64"], "aGkKAHg=");
}

TEST(ProbeProtocolTest, ParsesTheProbesOfAnAssignedTask) {
  auto j = nlohmann::json::parse(R"({"version": 3, "tasks": [
    {"taskId": "inf.0.0.1", "kind": "InferenceService", "probes": {
       "readiness": {"http": {"path": "/health", "port": 8000}, "initialDelaySeconds": 30, "periodSeconds": 5,
                     "timeoutSeconds": 2, "failureThreshold": 4, "successThreshold": 2},
       "liveness": {"exec": {"command": ["cat", "/tmp/alive"]}, "initialDelaySeconds": 0, "periodSeconds": 10,
                    "timeoutSeconds": 1, "failureThreshold": 3, "successThreshold": 1}}},
    {"taskId": "inf.1.0.1", "probes": {}},
    {"taskId": "inf.2.0.1", "probes": {"readiness": {"grpc": {"port": 9000}}, "liveness": {"tcp": {"port": 70000}}}},
    {"taskId": "inf.3.0.1", "probes": {"readiness": {"http": {"path": "/ready", "port": 0}}}},
    {"taskId": "train.0.0.1"}]})");
  auto a = ParseAssignment(j);
  ASSERT_TRUE(a.ok()) << a.status().ToString();  // an unreadable probe does not fail the assignment
  ASSERT_EQ(a->tasks.size(), 5u);
  const AssignedTask& t = a->tasks[0];
  ASSERT_TRUE(t.readiness.has_value());
  EXPECT_EQ(t.readiness->invalid, "");
  EXPECT_EQ(t.readiness->spec.kind, ProbeKind::kHttp);
  EXPECT_EQ(t.readiness->spec.Describe(), "http://127.0.0.1:8000/health");
  EXPECT_EQ(t.readiness->spec.initial_delay, seconds(30));
  EXPECT_EQ(t.readiness->spec.period, seconds(5));
  EXPECT_EQ(t.readiness->spec.timeout, seconds(2));
  EXPECT_EQ(t.readiness->spec.failure_threshold, 4);
  EXPECT_EQ(t.readiness->spec.success_threshold, 2);
  ASSERT_TRUE(t.liveness.has_value());
  EXPECT_EQ(t.liveness->spec.kind, ProbeKind::kExec);
  EXPECT_EQ(t.liveness->spec.command, (std::vector<std::string>{"cat", "/tmp/alive"}));
  EXPECT_FALSE(a->tasks[1].readiness || a->tasks[1].liveness);
  EXPECT_EQ(a->tasks[2].readiness->invalid, "unreadable probe: expected exactly one of http, tcp, exec");
  EXPECT_EQ(a->tasks[2].liveness->invalid, "unreadable probe: probe port 70000 outside 1..65535");
  // Port 0 (absent in the spec): the task's ABACUS_PORT, filled in by the agent at start.
  ASSERT_TRUE(a->tasks[3].readiness.has_value());
  EXPECT_EQ(a->tasks[3].readiness->invalid, "");
  EXPECT_EQ(a->tasks[3].readiness->spec.port, 0);
  EXPECT_FALSE(a->tasks[4].readiness || a->tasks[4].liveness);
}

TEST(ProbeProtocolTest, StatusFieldsOnlyWhenSet) {
  TaskStatus s = Phase("t", ReportedPhase::kRunning);
  nlohmann::json plain = ToJson(s);
  EXPECT_FALSE(plain.contains("ready") || plain.contains("live") || plain.contains("probeMessage"));
  s.ready = false;
  s.live = true;
  s.probe_message = "readiness: GET http://127.0.0.1:8000/health: connection refused";
  nlohmann::json j = ToJson(s);
  EXPECT_EQ(j["ready"], false);
  EXPECT_EQ(j["live"], true);
  EXPECT_EQ(j["probeMessage"], "readiness: GET http://127.0.0.1:8000/health: connection refused");
  EXPECT_EQ(*ParseTaskStatus(j), s);
}

// ---- log shipping ----

TEST(LogShipperTest, ShipsNewBytesAtOffsetsAndResendsFromTheServerSizeOn409) {
  fs::path dir = MakeTempDir("logs");
  std::ofstream(dir / "out") << "abc";
  std::vector<LogChunk> sent;
  std::optional<LogAck> next_answer;
  LogShipper shipper("n", [&](const LogChunk& c) -> Result<LogAck> {
    sent.push_back(c);
    if (next_answer) {
      LogAck a = *next_answer;
      next_answer.reset();
      return a;
    }
    return LogAck{};
  }, /*max_chunk=*/4);
  shipper.Track("t", (dir / "out").string(), (dir / "err").string());
  ASSERT_TRUE(shipper.Ship("t").ok());
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].offset, 0);
  EXPECT_EQ(sent[0].data, "abc");
  ASSERT_TRUE(shipper.Ship("t").ok());  // nothing new: no call
  EXPECT_EQ(sent.size(), 1u);

  std::ofstream(dir / "out", std::ios::app) << "defgh";
  next_answer = LogAck{false, 1};  // the server lost bytes: it has only 1
  ASSERT_TRUE(shipper.Ship("t").ok());
  ASSERT_EQ(sent.size(), 4u);
  EXPECT_EQ(sent[1].offset, 3);
  EXPECT_EQ(sent[2].offset, 1);
  EXPECT_EQ(sent[2].data, "bcde");  // at most max_chunk per call
  EXPECT_EQ(sent[3].offset, 5);
  EXPECT_EQ(sent[3].data, "fgh");
  EXPECT_EQ(shipper.shipped("t", LogStream::kStdout), 8);
  fs::remove_all(dir);
}

TEST(LogShipperTest, ATransportErrorKeepsTheOffset) {
  fs::path dir = MakeTempDir("logs");
  std::ofstream(dir / "err") << "boom\n";
  bool down = true;
  int calls = 0;
  LogShipper shipper("n", [&](const LogChunk& c) -> Result<LogAck> {
    ++calls;
    EXPECT_EQ(c.offset, 0);
    if (down) return Unavailable("cannot reach");
    return LogAck{};
  });
  shipper.Track("t", (dir / "out").string(), (dir / "err").string());
  EXPECT_EQ(shipper.ShipAll(), 1);
  EXPECT_EQ(shipper.shipped("t", LogStream::kStderr), 0);
  down = false;
  EXPECT_EQ(shipper.ShipAll(), 0);
  EXPECT_EQ(shipper.shipped("t", LogStream::kStderr), 5);
  EXPECT_EQ(calls, 2);
  fs::remove_all(dir);
}

// ---- pid files ----

// A process group leader that sleeps, as a task of a previous agent life.
int SpawnSleeperGroup(const fs::path& dir) {
  auto pid = RealProcessOs::Get().Spawn({"/bin/sleep", {"sleep", "1000"}, {}, dir.string(), "/dev/null", "/dev/null", {}, {}});
  return pid.ok() ? *pid : -1;
}

TEST(PidFileTest, OrphansAreKilledAndReportedLost) {
  fs::path tasks = MakeTempDir("orphans");
  int pid = SpawnSleeperGroup(tasks);
  ASSERT_GT(pid, 0);
  fs::create_directories(tasks / "old.0.0.1");
  ASSERT_TRUE(WritePidFile((tasks / "old.0.0.1").string(), pid).ok());
  // And one whose process is gone already (the lifeline stopped it with its agent), and one
  // stopped but not reaped (a zombie: the previous agent, its parent, is gone).
  fs::create_directories(tasks / "gone.0.0.1");
  ASSERT_TRUE(WritePidFile((tasks / "gone.0.0.1").string(), 999999999).ok());
  const pid_t zombie = ::fork();
  if (zombie == 0) ::_exit(0);
  ASSERT_GT(zombie, 0);
  for (int i = 0; i < 500 && ProcessState(zombie) != 'Z'; ++i) std::this_thread::sleep_for(milliseconds(10));
  ASSERT_EQ(ProcessState(zombie), 'Z');
  fs::create_directories(tasks / "dead.0.0.1");
  ASSERT_TRUE(WritePidFile((tasks / "dead.0.0.1").string(), zombie).ok());
  const Time now = FromMicros(1'700'000'000'000'000);
  auto lost = KillOrphans(tasks.string(), RealProcessOs::Get(), now);
  ASSERT_EQ(lost.size(), 3u);
  std::sort(lost.begin(), lost.end(), [](const TaskStatus& a, const TaskStatus& b) { return a.task_id > b.task_id; });
  EXPECT_EQ(lost[0].task_id, "old.0.0.1");
  EXPECT_EQ(lost[0].phase, ReportedPhase::kLost);
  EXPECT_EQ(lost[0].finished_at, std::optional<Time>(now));  // it ran until this kill
  EXPECT_EQ(lost[1].task_id, "gone.0.0.1");
  EXPECT_FALSE(lost[1].finished_at.has_value());  // when it died is not known here
  EXPECT_EQ(lost[2].task_id, "dead.0.0.1");
  EXPECT_FALSE(lost[2].finished_at.has_value());  // nor for a zombie
  ASSERT_EQ(::waitpid(zombie, nullptr, 0), zombie);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
  EXPECT_FALSE(fs::exists(tasks / "old.0.0.1/pid"));
  EXPECT_TRUE(KillOrphans(tasks.string(), RealProcessOs::Get(), now).empty());
  fs::remove_all(tasks);
}

TEST(PidFileTest, APidNowHeldByAnotherProcessIsLeftAlone) {
  fs::path tasks = MakeTempDir("orphans");
  fs::create_directories(tasks / "reused");
  // Our own pid with a start time that is not ours: the kernel gave the pid to someone else.
  std::ofstream(tasks / "reused/pid") << ::getpid() << " " << ProcessStartTime(::getpid()) + 1 << "\n";
  auto lost = KillOrphans(tasks.string(), RealProcessOs::Get(), FromMicros(1));
  ASSERT_EQ(lost.size(), 1u);  // we are still alive to read this
  EXPECT_NE(lost[0].message.find("left alone"), std::string::npos);
  EXPECT_FALSE(lost[0].finished_at.has_value());  // not killed here: when it ended is not known
  fs::remove_all(tasks);
}

// ---- waker ----

TEST(WakerTest, WakesOnRequestAndOnSigchld) {
  Waker w;
  EXPECT_FALSE(w.Wait(milliseconds(0)));
  w.Wake();
  EXPECT_TRUE(w.Wait(milliseconds(0)));
  EXPECT_FALSE(w.Wait(milliseconds(0)));  // drained
  ASSERT_TRUE(w.SubscribeSigchld());
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  EXPECT_TRUE(w.Wait(milliseconds(10000)));
  ::waitpid(pid, nullptr, 0);
  w.UnsubscribeSigchld();
}

}  // namespace
}  // namespace abacus::agent
