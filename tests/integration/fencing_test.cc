// Fencing of cut-off nodes and the truth about heartbeats (issue 20, points 9 and 20), with real
// `abacus server` and `abacus agent` processes: an agent that reaches no server for the node
// timeout stops its tasks itself with their checkpoint signal; the server places the work
// elsewhere only after node timeout + fencing grace; `describe node` shows the last heartbeat
// and since when a node is NotReady; an agent killed with SIGKILL leaves no task running (its
// lifeline watcher stops them).
#include <gtest/gtest.h>
#include <signal.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;

// A TrainingJob whose task, once its trap is set, writes its pid to DIR/pid and, on SIGUSR1 (its
// checkpoint signal), writes DIR/checkpoint and exits.
std::string CheckpointingJob(const std::string& name, const std::string& dir) {
  return "kind: TrainingJob\nname: " + name +
         "\nproject: acme/ml\nqueue: train\nspec:\n"
         "  command: [\"sh\", \"-c\", \"trap 'echo saved > " + dir + "/checkpoint; exit 0' USR1; echo $$ > " + dir +
         "/pid; while true; do sleep 0.1; done\"]\n"
         "  checkpoint: {signal: SIGUSR1, graceSeconds: 5}\n"
         "  taskGroups:\n    - name: worker\n      replicas: 1\n      resources:\n"
         "        cpu: 1\n        memory: 1Gi\n        accelerators: {flavor: \"gpu/nvidia/A100-80G\", count: 1}\n";
}

bool Alive(pid_t pid) { return ::kill(pid, 0) == 0; }

// True while a process that is not a zombie belongs to process group `pgid` (the orphans of a
// killed agent are adopted by whoever reaps them, maybe late: kill(-pgid, 0) would count zombies).
bool GroupRuns(pid_t pgid) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), {});
    size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 1));
    std::string state;
    long long ppid = 0, pgrp = 0;
    if (!(fields >> state >> ppid >> pgrp)) continue;
    if (pgrp == pgid && state != "Z" && state != "X") return true;
  }
  return false;
}

// A TrainingJob whose task appends "start PID" to DIR/runs and writes its pid to DIR/pid, and on
// SIGUSR1 (its checkpoint signal, 5 s grace) appends "checkpointed PID" and exits.
std::string LoggingCheckpointJob(const std::string& name, const std::string& dir) {
  return "kind: TrainingJob\nname: " + name +
         "\nproject: acme/ml\nqueue: train\nspec:\n"
         // umask 0: the run on another node (another task user) appends to the same files.
         "  command: [\"sh\", \"-c\", \"umask 0; trap 'echo checkpointed $$ >> " + dir + "/runs; exit 0' USR1; echo start $$ >> " +
         dir + "/runs; echo $$ > " + dir + "/pid; while true; do sleep 0.1; done\"]\n"
         "  checkpoint: {signal: SIGUSR1, graceSeconds: 5}\n"
         "  taskGroups:\n    - name: worker\n      replicas: 1\n      resources:\n"
         "        cpu: 1\n        memory: 1Gi\n        accelerators: {flavor: \"gpu/nvidia/A100-80G\", count: 1}\n";
}

std::vector<std::string> Lines(const std::string& path) {
  std::istringstream in(ReadFile(path));
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

// The set-up of the tests that lose an agent: a server (node timeout 2 s, heartbeat 1 s), agent
// gpu-a with two A100 and a LoggingCheckpointJob running on it as process group `pid`.
struct AgentRunningATask {
  TempDir data, marks;
  std::unique_ptr<ServerProcess> server;
  std::unique_ptr<AgentProcess> agent;
  std::string id, runs;
  pid_t pid = 0;

  // Starts all that, the job named `name`; its steps assert (ASSERT_NO_FATAL_FAILURE around it).
  void Start(const std::string& name) {
    marks.OpenToTasks();
    server = std::make_unique<ServerProcess>(data.path(), std::vector<std::string>{"--node-timeout", "2", "--heartbeat", "1"});
    ASSERT_EQ(server->Client().Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);
    agent = std::make_unique<AgentProcess>(*server, "gpu-a", "gpu:nvidia:A100-80G:2:80Gi@cuda=12.4");
    auto sub = server->Client().Post("/api/v1/workloads", LoggingCheckpointJob(name, marks.path()), "application/yaml");
    ASSERT_EQ(sub.status, 201) << sub.text;
    id = sub.body["items"][0]["id"];
    runs = marks.path() + "/runs";
    ASSERT_TRUE(WaitFor([&] { return (pid = std::atoi(ReadFile(marks.path() + "/pid").c_str())) > 0; }));
    ASSERT_TRUE(GroupRuns(pid));
  }
};

TEST(FencingTest, AnAgentCutOffFromEveryServerStopsItsTasksWithTheirCheckpointSignal) {
  TempDir data, marks;
  marks.OpenToTasks();
  ServerProcess server(data.path(), {"--node-timeout", "3", "--heartbeat", "1"});
  ASSERT_EQ(server.Client().Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);
  AgentProcess agent(server, "gpu-a", "gpu:nvidia:A100-80G:2:80Gi@cuda=12.4");
  auto sub = server.Client().Post("/api/v1/workloads", CheckpointingJob("fenced", marks.path()), "application/yaml");
  ASSERT_EQ(sub.status, 201) << sub.text;
  std::string id = sub.body["items"][0]["id"];
  // The assignment told the agent how to fence this task: its checkpoint signal and grace.
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(marks.path() + "/pid"); }));
  pid_t pid = 0;
  ASSERT_TRUE(WaitFor([&] { return (pid = std::atoi(ReadFile(marks.path() + "/pid").c_str())) > 0; }));
  ASSERT_TRUE(Alive(pid));
  // The server disappears: nothing answers the agent any more.
  server.Kill9();
  // After the node timeout the agent fences: the task gets SIGUSR1, saves, and is gone.
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(marks.path() + "/checkpoint"); }))
      << "the task was not fenced";
  EXPECT_TRUE(WaitFor([&] { return !Alive(pid); })) << "task " << pid << " still runs";
}

TEST(FencingTest, TheServerRequeuesACutOffNodesWorkOnlyAfterTimeoutPlusGrace) {
  TempDir data, marks;
  marks.OpenToTasks();
  ServerProcess server(data.path(), {"--node-timeout", "2", "--heartbeat", "1", "--fencing-grace", "TrainingJob=3s"});
  ASSERT_EQ(server.Client().Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);
  auto agent = std::make_unique<AgentProcess>(server, "gpu-a", "gpu:nvidia:A100-80G:2:80Gi@cuda=12.4");
  // No checkpoint: the kind's fencing grace (3 s) applies.
  std::string job = CheckpointingJob("requeued", marks.path());
  job.erase(job.find("  checkpoint:"), job.find("  taskGroups:") - job.find("  checkpoint:"));
  auto sub = server.Client().Post("/api/v1/workloads", job, "application/yaml");
  ASSERT_EQ(sub.status, 201) << sub.text;
  std::string id = sub.body["items"][0]["id"];
  auto state = [&] { return server.Client().Get("/api/v1/workloads/" + id).body.value("state", ""); };
  ASSERT_TRUE(WaitFor([&] { return state() == "Running"; }));
  agent->Kill9();  // silent from now on
  json node;
  ASSERT_TRUE(WaitFor([&] {
    node = server.Client().Get("/api/v1/nodes/gpu-a").body;
    return node.value("state", "") == "NotReady";
  }));
  ASSERT_TRUE(node.contains("notReadySinceUs")) << node.dump();
  const int64_t not_ready_us = node["notReadySinceUs"];
  EXPECT_GE(not_ready_us, node.value("lastHeartbeatUs", int64_t{0}) + 2'000'000) << node.dump();
  // The workload is requeued (NodeLost), and not before NotReady + the 3 s grace.
  json requeued;
  ASSERT_TRUE(WaitFor([&] {
    const json events = server.Client().Get("/api/v1/workloads/" + id + "/events").body;  // kept: the loop reads it
    for (const auto& e : events["items"]) {
      if (e.value("type", "") == "Requeued") requeued = e;
    }
    return !requeued.is_null();
  })) << server.Client().Get("/api/v1/workloads/" + id + "/events").text;
  EXPECT_EQ(requeued["details"]["reason"], "NodeLost");
  EXPECT_GE(requeued.value("timeUs", int64_t{0}), not_ready_us + 3'000'000) << requeued.dump();
  if (std::filesystem::exists(marks.path() + "/pid")) {
    pid_t pid = std::atoi(ReadFile(marks.path() + "/pid").c_str());
    if (pid > 0) ::kill(-pid, SIGKILL);  // the killed agent's task, should its watcher have missed it
  }
}

// Issue 20.9, the part fencing alone cannot do: an agent killed with SIGKILL (outside systemd, no
// cgroup kill) cannot fence, but its lifeline watcher sees it die and stops its tasks with their
// checkpoint signal and grace at once, so by the time the server requeues the work (node timeout
// + grace) nothing of it runs; the work runs again once, elsewhere, never twice at a time.
TEST(FencingTest, AnAgentKilledWithSigkillLeavesNoTaskRunningAndItsWorkRunsAgainOnce) {
  AgentRunningATask t;
  ASSERT_NO_FATAL_FAILURE(t.Start("lifeline"));
  ServerProcess& server = *t.server;
  const std::string& id = t.id;
  const std::string& runs = t.runs;
  const pid_t pid = t.pid;
  t.agent->Kill9();
  // The task got its checkpoint signal (it saved) and its process group is gone, within its
  // grace, with no agent and no server involved.
  ASSERT_TRUE(WaitFor([&] { return ReadFile(runs).find("checkpointed " + std::to_string(pid)) != std::string::npos; }))
      << "the task of the killed agent got no checkpoint signal: " << ReadFile(runs);
  EXPECT_TRUE(WaitFor([&] { return !GroupRuns(pid); })) << "task group " << pid << " outlived its agent";
  // The server requeues the work once (NodeLost) and a node that joins runs it again.
  AgentProcess spare(server, "gpu-b", "gpu:nvidia:A100-80G:2:80Gi@cuda=12.4");
  ASSERT_TRUE(WaitFor([&] { return Lines(runs).size() >= 3; }, std::chrono::seconds(40))) << ReadFile(runs);
  const std::vector<std::string> lines = Lines(runs);
  ASSERT_EQ(lines.size(), 3u) << ReadFile(runs);
  EXPECT_EQ(lines[0], "start " + std::to_string(pid));
  EXPECT_EQ(lines[1], "checkpointed " + std::to_string(pid));  // the first run ended before the second began
  EXPECT_EQ(lines[2].rfind("start ", 0), 0u);
  EXPECT_NE(lines[2], lines[0]);
  const nlohmann::json events = server.Client().Get("/api/v1/workloads/" + id + "/events").body;
  int requeued = 0;
  for (const auto& e : events["items"]) {
    if (e.value("type", "") != "Requeued") continue;
    ++requeued;
    EXPECT_EQ(e["details"]["reason"], "NodeLost") << e.dump();
  }
  EXPECT_EQ(requeued, 1) << events.dump();
}

// An agent stopped (SIGSTOP; a frozen process) while its task runs: its fence thread cannot run,
// its lifeline watcher saw no death, and the task ran on while the server placed the work again
// after node timeout + grace — twice at once (the probe of 2026-12-07). The agent now renews a
// deadline with its watcher; unrenewed, the watcher fences the task itself, so the first run has
// ended before the second begins.
TEST(FencingTest, AStoppedAgentsTaskIsFencedByItsWatcherBeforeTheWorkRunsAgain) {
  AgentRunningATask t;
  ASSERT_NO_FATAL_FAILURE(t.Start("frozen"));
  ServerProcess& server = *t.server;
  auto& agent = t.agent;
  const std::string& runs = t.runs;
  const pid_t pid = t.pid;
  const int64_t stopped_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  ASSERT_EQ(agent->Signal(SIGSTOP, /*wait=*/false), 0);
  // New work for the still-Ready node answers the assignments poll the agent sent before it froze.
  // That answer is no sign of life (the probe of 2026-12-07: it kept a frozen agent's node Ready
  // 23 s longer, its lastHeartbeat after the freeze).
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  auto extra = server.Client().Post(
      "/api/v1/workloads",
      "kind: TrainingJob\nname: extra\nproject: acme/ml\nqueue: train\nspec:\n  command: [\"sleep\", \"600\"]\n"
      "  taskGroups:\n    - name: main\n      resources:\n        cpu: 1\n        memory: 1Gi\n"
      "        accelerators: {flavor: gpu/nvidia/A100-80G, count: 1}\n",
      "application/yaml");
  ASSERT_EQ(extra.status, 201) << extra.text;
  // The watcher fences it: checkpoint signal, the group gone, while the agent stays stopped.
  ASSERT_TRUE(WaitFor([&] { return ReadFile(runs).find("checkpointed " + std::to_string(pid)) != std::string::npos; }))
      << "the task of the stopped agent got no checkpoint signal: " << ReadFile(runs);
  EXPECT_TRUE(WaitFor([&] { return !GroupRuns(pid); })) << "task group " << pid << " outlived its stopped agent";
  json node;
  ASSERT_TRUE(WaitFor([&] {
    node = server.Client().Get("/api/v1/nodes/gpu-a").body;
    return node.value("state", "") == "NotReady";
  }, std::chrono::seconds(40))) << node.dump();
  EXPECT_LT(node.value("lastHeartbeatUs", int64_t{0}), stopped_us + 1'000'000) << node.dump();
  // The work runs again once, on another node, after the first run ended.
  AgentProcess spare(server, "gpu-b", "gpu:nvidia:A100-80G:2:80Gi@cuda=12.4");
  ASSERT_TRUE(WaitFor([&] { return Lines(runs).size() >= 3; }, std::chrono::seconds(40))) << ReadFile(runs);
  const std::vector<std::string> lines = Lines(runs);
  ASSERT_EQ(lines.size(), 3u) << ReadFile(runs);
  EXPECT_EQ(lines[1], "checkpointed " + std::to_string(pid));  // before the second start
  EXPECT_EQ(lines[2].rfind("start ", 0), 0u);
  ASSERT_EQ(agent->Signal(SIGCONT, /*wait=*/false), 0);  // it wakes up: nothing of the first run is left to run
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(Lines(runs).size(), 3u) << ReadFile(runs);
}

TEST(FencingTest, DescribeNodeShowsTheLastHeartbeatAndSinceWhenItIsNotReady) {
  TempDir data;
  ServerProcess server(data.path(), {"--node-timeout", "4", "--heartbeat", "1"});
  AgentProcess agent(server, "gpu-a", "gpu:nvidia:A100-80G:1:80Gi");
  auto get = [&] { return server.Client().Get("/api/v1/nodes/gpu-a").body; };
  const int64_t registered = get().value("lastHeartbeatUs", int64_t{0});
  ASSERT_GT(registered, 0);
  // Heartbeats move it on (it stayed at the registration).
  ASSERT_TRUE(WaitFor([&] { return get().value("lastHeartbeatUs", int64_t{0}) > registered + 1'500'000; }))
      << get().dump();
  agent.Kill9();
  // Still Ready, but the API says heartbeats stopped…
  json late;
  ASSERT_TRUE(WaitFor([&] {
    late = get();
    return late.value("heartbeatLate", false);
  })) << late.dump();
  EXPECT_GE(late.value("heartbeatAgeSeconds", 0), 2);
  // … then NotReady, since when.
  json down;
  ASSERT_TRUE(WaitFor([&] {
    down = get();
    return down.value("state", "") == "NotReady";
  }));
  ASSERT_TRUE(down.contains("notReadySince")) << down.dump();
  EXPECT_GT(down.value("notReadySinceUs", int64_t{0}), down.value("lastHeartbeatUs", int64_t{0}));
  // The CLI shows both.
  auto r = RunCli({"describe", "node", "gpu-a", "--server", server.url(), "--token", server.token()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("NotReady since:"), std::string::npos) << r.out;  // describe for people (docs/cli.md)
  EXPECT_NE(r.out.find("Last heartbeat:"), std::string::npos) << r.out;
  auto raw = RunCli({"describe", "node", "gpu-a", "-o", "yaml", "--server", server.url(), "--token", server.token()});
  ASSERT_EQ(raw.code, 0) << raw.err;
  EXPECT_NE(raw.out.find("notReadySince:"), std::string::npos) << raw.out;
  EXPECT_NE(raw.out.find("lastHeartbeat:"), std::string::npos) << raw.out;
  auto table = RunCli({"get", "nodes", "--server", server.url(), "--token", server.token()});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_NE(table.out.find("HEARTBEAT"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("NotReady ("), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("s ago"), std::string::npos) << table.out;
}

}  // namespace
}  // namespace abacus::testing
