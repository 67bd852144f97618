// Runtime tests: environment, cgroups (fake trees and, where writable, this machine), real
// processes under ProcessRuntime, a fake OS for stop escalation, container command lines.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent/command.h"
#include "agent/discover/fake.h"
#include "agent/runtime/cgroup.h"
#include "agent/runtime/container.h"
#include "agent/runtime/env.h"
#include "agent/runtime/process_runtime.h"

namespace abacus::agent {
namespace {

namespace fs = std::filesystem;
constexpr int64_t kGi = int64_t{1} << 30;
constexpr int64_t kMi = int64_t{1} << 20;

std::vector<Device> Fake(const std::string& spec) { return MakeFakeDevices(*ParseFakeDeviceSpecs(spec), "n"); }

DeviceGrant Whole(const Device& d) { return DeviceGrant{d, Device::kWholeMilli, 0}; }

// A temporary directory removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    static int n = 0;
    path = fs::temp_directory_path() / ("abacus-rt-" + std::to_string(::getpid()) + "-" + std::to_string(++n));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string str() const { return path.string(); }
};

void WriteText(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

std::string ReadText(const fs::path& p) { return ReadFileToString(p.string()).value_or("<missing>"); }

// Polls until `id` ends (real time, at most 5 s).
TaskRecord WaitForExit(ProcessRuntime& rt, const std::string& id) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    rt.Poll();
    auto rec = rt.Get(id);
    if (rec.ok() && rec->phase == TaskPhase::kExited) return *rec;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ADD_FAILURE() << "task " << id << " did not end";
  return rt.Get(id).value_or(TaskRecord{});
}

// Waits until the task's stdout contains `text`.
void WaitForOutput(ProcessRuntime& rt, const std::string& id, const std::string& text) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    if (rt.ReadLog(id, LogStream::kStdout).value_or("").find(text) != std::string::npos) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ADD_FAILURE() << "task " << id << " never printed " << text;
}

// Counts the processes of group `pgid` that are not zombies, waiting up to 1 s for them to go.
int LiveProcessesInGroup(int pgid) {
  int live = 0;
  for (int attempt = 0; attempt < 200; ++attempt) {
    live = 0;
    for (const auto& entry : fs::directory_iterator("/proc")) {
      auto stat = ReadFileToString((entry.path() / "stat").string());
      if (!stat.ok()) continue;
      size_t close = stat->rfind(')');
      if (close == std::string::npos || close + 4 >= stat->size()) continue;
      char state = (*stat)[close + 2];
      // Fields after ')': state ppid pgrp …
      std::istringstream rest(stat->substr(close + 2));
      std::string st;
      long ppid = 0, pgrp = 0;
      rest >> st >> ppid >> pgrp;
      if (pgrp == pgid && state != 'Z') ++live;
    }
    if (live == 0) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return live;
}

// ---- environment ----

TEST(EnvTest, WholeDevicesPerVendor) {
  auto gpus = Fake("gpu:nvidia:A100-80G:4");
  auto npus = Fake("npu:huawei:Ascend910B3:8");
  auto env = DeviceEnvironment({Whole(gpus[1]), Whole(gpus[3])}, {"nvidia", "huawei"});
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "1,3");
  EXPECT_EQ(env["ASCEND_RT_VISIBLE_DEVICES"], "");  // present on the node, not granted
  EXPECT_EQ(env["ABACUS_DEVICES"], gpus[1].uuid + "," + gpus[3].uuid);
  EXPECT_EQ(env.count("ABACUS_DEVICE_SHARE_MILLI"), 0u);
  auto npu_env = DeviceEnvironment({Whole(npus[6])}, {"huawei"});
  EXPECT_EQ(npu_env["ASCEND_RT_VISIBLE_DEVICES"], "6");
  EXPECT_EQ(DeviceEnvironment({Whole(Fake("gpu:amd:MI210:1")[0])}, {})["HIP_VISIBLE_DEVICES"], "0");
  EXPECT_EQ(DeviceEnvironment({Whole(Fake("gpu:hygon:DCU-Z100:2")[1])}, {})["HIP_VISIBLE_DEVICES"], "1");
  EXPECT_EQ(DeviceEnvironment({Whole(Fake("npu:cambricon:MLU370-X8:1")[0])}, {})["MLU_VISIBLE_DEVICES"], "0");
}

TEST(EnvTest, SharesAndCpuOnly) {
  auto gpus = Fake("gpu:nvidia:A100-80G:2");
  auto env = DeviceEnvironment({DeviceGrant{gpus[0], 250, 10 * kGi}}, {"nvidia"});
  EXPECT_EQ(env["CUDA_VISIBLE_DEVICES"], "0");
  EXPECT_EQ(env["ABACUS_DEVICE_SHARE_MILLI"], "250");
  EXPECT_EQ(env["ABACUS_DEVICE_MEMORY_BYTES"], std::to_string(10 * kGi));
  auto cpu_only = DeviceEnvironment({}, {"nvidia", "huawei", "amd"});
  EXPECT_EQ(cpu_only.at("CUDA_VISIBLE_DEVICES"), "");
  EXPECT_EQ(cpu_only.at("ASCEND_RT_VISIBLE_DEVICES"), "");
  EXPECT_EQ(cpu_only.at("HIP_VISIBLE_DEVICES"), "");
  EXPECT_EQ(cpu_only.count("ABACUS_DEVICES"), 0u);
}

// ---- cgroups on fake trees ----

TEST(CgroupTest, FakeV2Tree) {
  TempDir root;
  WriteText(root.path / "cgroup.controllers", "cpuset cpu io memory pids\n");
  WriteText(root.path / "agent.slice/cgroup.controllers", "cpu memory pids\n");
  WriteText(root.path / "self", "0::/agent.slice\n");
  auto m = CgroupManager::Detect({root.str(), "abacus", (root.path / "self").string(), 100000});
  ASSERT_EQ(m->mode(), CgroupMode::kV2) << m->warning();
  EXPECT_EQ(ReadText(root.path / "agent.slice/cgroup.subtree_control"), "+cpu +memory");
  auto cg = m->Create("t1", {2500, 512 * kMi});
  ASSERT_TRUE(cg.ok()) << cg.status().ToString();
  fs::path dir = root.path / "agent.slice/abacus/t1";
  EXPECT_EQ(ReadText(dir / "cpu.max"), "250000 100000");
  EXPECT_EQ(ReadText(dir / "memory.max"), std::to_string(512 * kMi));
  EXPECT_EQ((*cg)->ProcsFiles(), std::vector<std::string>{(dir / "cgroup.procs").string()});
  WriteText(dir / "memory.events", "low 0\nhigh 0\nmax 4\noom 1\noom_kill 1\n");
  WriteText(dir / "cpu.stat", "usage_usec 1500000\nuser_usec 1000000\n");
  WriteText(dir / "memory.current", "1048576\n");
  EXPECT_TRUE((*cg)->OomKilled(false));
  auto usage = (*cg)->ReadUsage();
  ASSERT_TRUE(usage.ok());
  EXPECT_EQ(usage->cpu_usage_usec, 1500000);
  EXPECT_EQ(usage->memory_bytes, 1048576);
}

TEST(CgroupTest, FakeHybridWithEmptyV2FallsBackToV1) {
  // This machine's shape: an empty unified mount, v1 cpu, cpuacct and memory hierarchies.
  TempDir root;
  WriteText(root.path / "unified/cgroup.controllers", "\n");
  for (const char* c : {"cpu", "cpuacct", "memory"}) WriteText(root.path / c / "cgroup.procs", "");
  WriteText(root.path / "self", "4:memory:/job/42\n2:cpuacct:/\n1:cpu:/\n0::/\n");
  auto m = CgroupManager::Detect({root.str(), "abacus", (root.path / "self").string(), 100000});
  ASSERT_EQ(m->mode(), CgroupMode::kV1) << m->warning();
  EXPECT_TRUE(m->warning().empty()) << m->warning();
  auto cg = m->Create("t2", {500, 64 * kMi});
  ASSERT_TRUE(cg.ok()) << cg.status().ToString();
  EXPECT_EQ(ReadText(root.path / "cpu/abacus/t2/cpu.cfs_quota_us"), "50000");
  EXPECT_EQ(ReadText(root.path / "cpu/abacus/t2/cpu.cfs_period_us"), "100000");
  EXPECT_EQ(ReadText(root.path / "memory/job/42/abacus/t2/memory.limit_in_bytes"), std::to_string(64 * kMi));
  EXPECT_EQ((*cg)->ProcsFiles().size(), 3u);
  WriteText(root.path / "memory/job/42/abacus/t2/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n");
  EXPECT_FALSE((*cg)->OomKilled(true));
  WriteText(root.path / "memory/job/42/abacus/t2/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n");
  EXPECT_TRUE((*cg)->OomKilled(false));
  // Old kernels: no oom_kill counter, so failcnt plus a SIGKILL ending.
  WriteText(root.path / "memory/job/42/abacus/t2/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\n");
  WriteText(root.path / "memory/job/42/abacus/t2/memory.failcnt", "17\n");
  EXPECT_TRUE((*cg)->OomKilled(true));
  EXPECT_FALSE((*cg)->OomKilled(false));
  WriteText(root.path / "cpuacct/abacus/t2/cpuacct.usage", "2000000000\n");
  auto usage = (*cg)->ReadUsage();
  ASSERT_TRUE(usage.ok());
  EXPECT_EQ(usage->cpu_usage_usec, 2000000);
}

TEST(CgroupTest, NothingWritableIsAWarningNotAFailure) {
  TempDir root;
  auto m = CgroupManager::Detect({root.str(), "abacus", (root.path / "missing").string(), 100000});
  EXPECT_EQ(m->mode(), CgroupMode::kNone);
  EXPECT_NE(m->warning().find("not enforced"), std::string::npos);
  EXPECT_EQ(m->Create("t", {}).status().code(), StatusCode::kFailedPrecondition);

  ManualClock clock;
  TempDir work;
  ProcessRuntime rt({work.str(), m.get(), {}, true}, clock);
  TaskSpec spec;
  spec.task_id = "limited";
  spec.command = {"true"};
  spec.memory_bytes = 64 * kMi;
  auto rec = rt.Start(spec);
  ASSERT_TRUE(rec.ok()) << rec.status().ToString();
  ASSERT_EQ(rec->warnings.size(), 1u);
  EXPECT_NE(rec->warnings[0].find("not enforced"), std::string::npos);
  EXPECT_TRUE(WaitForExit(rt, "limited").exit->Succeeded());
}

// ---- cgroups on this machine (skipped where none is writable) ----

TEST(CgroupTest, RealLimitsOomKillAndCpuUsage) {
  std::string parent = "abacus-test-" + std::to_string(::getpid());
  auto m = CgroupManager::Detect({"/sys/fs/cgroup", parent, "/proc/self/cgroup", 100000});
  if (m->mode() == CgroupMode::kNone) GTEST_SKIP() << m->warning();
  ManualClock clock;
  TempDir work;
  {
    ProcessRuntime rt({work.str(), m.get(), {}, true}, clock);
    TaskSpec hog;
    hog.task_id = "hog";
    hog.command = {"dd", "if=/dev/zero", "of=/dev/null", "bs=256M", "count=1"};
    hog.memory_bytes = 32 * kMi;
    hog.cpu_milli = 1000;
    auto rec = rt.Start(hog);
    ASSERT_TRUE(rec.ok()) << rec.status().ToString();
    EXPECT_EQ(rec->cgroup, m->mode());
    TaskRecord done = WaitForExit(rt, "hog");
    ASSERT_TRUE(done.exit.has_value());
    EXPECT_TRUE(done.exit->oom_killed) << done.exit->Describe();
    EXPECT_EQ(done.exit->signal, SIGKILL);
    EXPECT_EQ(done.exit->Describe(), "OOM-killed");

    TaskSpec busy;
    busy.task_id = "busy";
    busy.command = {"sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"};
    busy.cpu_milli = 2000;
    ASSERT_TRUE(rt.Start(busy).ok());
    TaskRecord b = WaitForExit(rt, "busy");
    EXPECT_TRUE(b.exit->Succeeded()) << b.exit->Describe();
    EXPECT_FALSE(b.exit->oom_killed);
    EXPECT_GT(b.final_usage.cpu_usage_usec, 0);
  }
  m->RemoveParents();
}

// ---- real processes ----

class ProcessRuntimeTest : public ::testing::Test {
 protected:
  ManualClock clock_;
  TempDir dir_;
  std::unique_ptr<ProcessRuntime> rt_ =
      std::make_unique<ProcessRuntime>(RuntimeOptions{dir_.str(), nullptr, {"nvidia", "huawei"}, true}, clock_);
};

TEST_F(ProcessRuntimeTest, RunsTrueAndRecordsSuccess) {
  auto rec = rt_->Start({"t-true", {"true"}, {}, "", {}, 0, 0});
  ASSERT_TRUE(rec.ok()) << rec.status().ToString();
  EXPECT_GT(rec->pid, 0);
  EXPECT_EQ(rec->phase, TaskPhase::kRunning);
  TaskRecord done = WaitForExit(*rt_, "t-true");
  ASSERT_TRUE(done.exit.has_value());
  EXPECT_TRUE(done.exit->Succeeded());
  EXPECT_EQ(done.exit->Describe(), "exited 0");
  EXPECT_FALSE(done.exit->stopped);
}

TEST_F(ProcessRuntimeTest, RecordsExitCodeAndSeparatesStdoutFromStderr) {
  ASSERT_TRUE(rt_->Start({"t-exit", {"sh", "-c", "echo out; echo err >&2; exit 3"}, {}, "", {}, 0, 0}).ok());
  TaskRecord done = WaitForExit(*rt_, "t-exit");
  EXPECT_EQ(done.exit->exit_code, 3);
  EXPECT_EQ(done.exit->Describe(), "exited 3");
  EXPECT_EQ(*rt_->ReadLog("t-exit", LogStream::kStdout), "out\n");
  EXPECT_EQ(*rt_->ReadLog("t-exit", LogStream::kStderr), "err\n");
}

TEST_F(ProcessRuntimeTest, WorkingDirectoryAndDeviceEnvironment) {
  auto gpus = Fake("gpu:nvidia:A100-80G:4");
  TaskSpec spec;
  spec.task_id = "t-env";
  spec.command = {"sh", "-c", "pwd; echo cuda=$CUDA_VISIBLE_DEVICES ascend=[$ASCEND_RT_VISIBLE_DEVICES] id=$ABACUS_TASK_ID foo=$FOO"};
  spec.env = {{"FOO", "bar"}, {"CUDA_VISIBLE_DEVICES", "0,1,2,3"}};  // device grant wins
  spec.devices = {Whole(gpus[2])};
  ASSERT_TRUE(rt_->Start(spec).ok());
  TaskRecord done = WaitForExit(*rt_, "t-env");
  EXPECT_TRUE(done.exit->Succeeded());
  std::string out = *rt_->ReadLog("t-env", LogStream::kStdout);
  EXPECT_EQ(out, fs::canonical(dir_.path / "t-env/work").string() + "\ncuda=2 ascend=[] id=t-env foo=bar\n");
}

TEST_F(ProcessRuntimeTest, BadRequests) {
  EXPECT_EQ(rt_->Start({"bad id", {"true"}, {}, "", {}, 0, 0}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(rt_->Start({"empty", {}, {}, "", {}, 0, 0}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(rt_->Start({"missing", {"no-such-command-abacus"}, {}, "", {}, 0, 0}).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(rt_->Start({"dup", {"sleep", "5"}, {}, "", {}, 0, 0}).ok());
  EXPECT_EQ(rt_->Start({"dup", {"true"}, {}, "", {}, 0, 0}).status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(rt_->Remove("dup").code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(rt_->Stop("nobody", SIGTERM, Duration(0)).code(), StatusCode::kNotFound);
  auto file = dir_.path / "not-a-dir";
  WriteText(file, "x");
  auto bad_dir = rt_->Start({"baddir", {"true"}, {}, (file / "sub").string(), {}, 0, 0});
  EXPECT_FALSE(bad_dir.ok());
}

TEST_F(ProcessRuntimeTest, GracefulStopEndsOnTheCheckpointSignal) {
  ASSERT_TRUE(rt_->Start({"t-stop", {"sleep", "5"}, {}, "", {}, 0, 0}).ok());
  ASSERT_TRUE(rt_->Stop("t-stop", SIGTERM, std::chrono::seconds(30)).ok());
  EXPECT_EQ(rt_->Get("t-stop")->phase, TaskPhase::kStopping);
  TaskRecord done = WaitForExit(*rt_, "t-stop");
  EXPECT_EQ(done.exit->signal, SIGTERM);
  EXPECT_TRUE(done.exit->stopped);
  EXPECT_FALSE(done.exit->killed_after_grace);
  EXPECT_EQ(done.exit->Describe(), "killed by SIGTERM");
  EXPECT_TRUE(rt_->Stop("t-stop", SIGTERM, Duration(0)).ok());  // already ended: no-op
  EXPECT_TRUE(rt_->Remove("t-stop").ok());
  EXPECT_EQ(rt_->Get("t-stop").status().code(), StatusCode::kNotFound);
}

TEST_F(ProcessRuntimeTest, StopEscalatesToSigkillAfterGraceOnTheClock) {
  // The task ignores the checkpoint signal (and so does the sleep it execs).
  ASSERT_TRUE(rt_->Start({"t-stubborn", {"sh", "-c", "trap '' USR1; echo ready; exec sleep 5"}, {}, "", {}, 0, 0}).ok());
  WaitForOutput(*rt_, "t-stubborn", "ready");
  ASSERT_TRUE(rt_->Stop("t-stubborn", SIGUSR1, std::chrono::seconds(120)).ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(rt_->Poll().empty());
  EXPECT_EQ(rt_->Get("t-stubborn")->phase, TaskPhase::kStopping);
  clock_.Advance(std::chrono::seconds(121));
  TaskRecord done = WaitForExit(*rt_, "t-stubborn");
  EXPECT_EQ(done.exit->signal, SIGKILL);
  EXPECT_TRUE(done.exit->killed_after_grace);
  EXPECT_EQ(done.exit->Describe(), "killed by SIGKILL after grace");
}

TEST_F(ProcessRuntimeTest, StopReachesTheWholeProcessGroup) {
  ASSERT_TRUE(rt_->Start({"t-group", {"sh", "-c", "sleep 5 & sleep 5 & echo ready; wait"}, {}, "", {}, 0, 0}).ok());
  WaitForOutput(*rt_, "t-group", "ready");
  int pgid = rt_->Get("t-group")->pid;
  ASSERT_TRUE(rt_->Stop("t-group", SIGTERM, std::chrono::seconds(10)).ok());
  TaskRecord done = WaitForExit(*rt_, "t-group");
  EXPECT_TRUE(done.exit->stopped);
  EXPECT_EQ(LiveProcessesInGroup(pgid), 0);  // zombies awaiting their new parent do not count
}

TEST_F(ProcessRuntimeTest, LogTailAndUsageWithoutCgroup) {
  ASSERT_TRUE(rt_->Start({"t-log", {"sh", "-c", "i=0; while [ $i -lt 100 ]; do echo line$i; i=$((i+1)); done"}, {}, "", {}, 0, 0}).ok());
  WaitForExit(*rt_, "t-log");
  std::string tail = *rt_->ReadLog("t-log", LogStream::kStdout, 30);
  EXPECT_EQ(tail.substr(tail.size() - 7), "line99\n");
  EXPECT_EQ(tail.find("line9\n"), std::string::npos);
  EXPECT_NE(tail.front(), 'i');  // starts at a line boundary
  ASSERT_TRUE(rt_->Start({"t-sleep", {"sleep", "5"}, {}, "", {}, 0, 0}).ok());
  auto usage = rt_->Usage("t-sleep");
  ASSERT_TRUE(usage.ok()) << usage.status().ToString();
  EXPECT_GE(usage->memory_bytes, 0);
}

// ---- stop escalation over a fake OS ----

class FakeOs final : public ProcessOs {
 public:
  std::vector<std::pair<int, int>> signals;  // (pgid, signal)
  bool ignore_term = true;
  std::optional<ProcessExit> pending;
  Result<int> Spawn(const SpawnRequest& r) override {
    last = r;
    return 4242;
  }
  Status SignalGroup(int pgid, int sig) override {
    signals.emplace_back(pgid, sig);
    if (sig == SIGKILL || !ignore_term) pending = ProcessExit{0, sig};
    return Status::OK();
  }
  std::optional<ProcessExit> TryWait(int) override { return std::exchange(pending, std::nullopt); }
  SpawnRequest last;
};

TEST(ProcessRuntimeFakeOsTest, CheckpointThenSigkillExactlyAtTheDeadline) {
  ManualClock clock;
  FakeOs os;
  TempDir dir;
  ProcessRuntime rt({dir.str(), nullptr, {}, false}, clock, os);
  auto rec = rt.Start({"job-1", {"sh", "-c", "train"}, {{"A", "1"}}, "", {}, 0, 0});
  ASSERT_TRUE(rec.ok()) << rec.status().ToString();
  EXPECT_EQ(os.last.argv, (std::vector<std::string>{"sh", "-c", "train"}));
  EXPECT_NE(std::find(os.last.env.begin(), os.last.env.end(), "A=1"), os.last.env.end());
  EXPECT_NE(std::find(os.last.env.begin(), os.last.env.end(), "ABACUS_TASK_ID=job-1"), os.last.env.end());
  ASSERT_TRUE(rt.Stop("job-1", SIGUSR1, std::chrono::seconds(30)).ok());
  EXPECT_EQ(os.signals, (std::vector<std::pair<int, int>>{{4242, SIGUSR1}}));
  clock.Advance(std::chrono::seconds(29));
  EXPECT_TRUE(rt.Poll().empty());
  EXPECT_EQ(os.signals.size(), 1u);
  clock.Advance(std::chrono::seconds(1));
  auto ended = rt.Poll();
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(os.signals.back(), std::make_pair(4242, SIGKILL));
  EXPECT_TRUE(ended[0].exit->killed_after_grace);
  EXPECT_EQ(ended[0].finished_at, clock.Now());
}

// ---- containers ----

TEST(ContainerTest, DockerWithNvidiaGpusLimitsAndMounts) {
  auto gpus = Fake("gpu:nvidia:A100-80G:4");
  ContainerSpec spec;
  spec.task_id = "train-0";
  spec.image = "registry.local/nlp/llama-ft:1.4";
  spec.command = {"python3", "train.py"};
  spec.env = {{"EPOCHS", "3"}};
  spec.devices = {Whole(gpus[0]), Whole(gpus[1])};
  spec.node_vendors = {"nvidia"};
  spec.cpu_milli = 2500;
  spec.memory_bytes = 64 * kGi;
  spec.work_dir = "/var/lib/abacus/tasks/train-0/work";
  spec.mounts = {{"/data", "/data", true}};
  spec.stop_signal = SIGUSR1;
  auto argv = BuildContainerRunCommand(ContainerEngine::kDocker, spec);
  ASSERT_TRUE(argv.ok());
  std::vector<std::string> want = {
      "docker", "run", "--rm", "--init", "--name", "abacus-train-0", "--label", "abacus.task=train-0",
      "--security-opt", "no-new-privileges", "--cpus=2.5", "--memory=68719476736b", "--memory-swap=68719476736b", "--stop-signal=SIGUSR1",
      "--gpus", "\"device=" + gpus[0].uuid + "," + gpus[1].uuid + "\"",
      "-e", "ABACUS_DEVICES=" + gpus[0].uuid + "," + gpus[1].uuid, "-e", "ABACUS_TASK_ID=train-0",
      "-e", "CUDA_VISIBLE_DEVICES=0,1", "-e", "EPOCHS=3",
      "-v", "/var/lib/abacus/tasks/train-0/work:/workspace", "-w", "/workspace", "-v", "/data:/data:ro",
      "registry.local/nlp/llama-ft:1.4", "python3", "train.py"};
  EXPECT_EQ(*argv, want);
  EXPECT_EQ(BuildContainerSignalCommand(ContainerEngine::kDocker, "train-0", SIGUSR1),
            (std::vector<std::string>{"docker", "kill", "--signal=SIGUSR1", "abacus-train-0"}));
  EXPECT_EQ(BuildContainerExecCommand(ContainerEngine::kPodman, "infer-0", {"cat", "/tmp/ready"}),
            (std::vector<std::string>{"podman", "exec", "abacus-infer-0", "cat", "/tmp/ready"}));
}

// A secret's value is never on the engine's command line (the process list shows it to every
// user of the node): the argv names the variable, the engine's environment holds the value.
TEST(ContainerTest, SecretVariablesGoByNameAndTheirValuesOnlyInTheEnginesEnvironment) {
  const std::string value = "s3cret-sentinel-4b1e";
  auto gpus = Fake("gpu:nvidia:A100-80G:2");
  ContainerSpec spec;
  spec.task_id = "train-0";
  spec.image = "busybox";
  spec.env = {{"MODE", "train"}};
  spec.secret_env = {{"DB_PASSWORD", value}, {"HF_TOKEN", value + "-2"}, {"CUDA_VISIBLE_DEVICES", value}};
  spec.devices = {Whole(gpus[0])};
  spec.node_vendors = {"nvidia"};
  for (ContainerEngine engine : {ContainerEngine::kPodman, ContainerEngine::kDocker}) {
    auto argv = BuildContainerRunCommand(engine, spec);
    ASSERT_TRUE(argv.ok()) << argv.status().ToString();
    for (const std::string& a : *argv) EXPECT_EQ(a.find(value), std::string::npos) << a;
    auto has = [&](const std::string& a, const std::string& b) {
      for (size_t i = 0; i + 1 < argv->size(); ++i) {
        if ((*argv)[i] == a && (*argv)[i + 1] == b) return true;
      }
      return false;
    };
    EXPECT_TRUE(has("--env", "DB_PASSWORD"));
    EXPECT_TRUE(has("--env", "HF_TOKEN"));
    EXPECT_TRUE(has("-e", "MODE=train"));
    // Device visibility overrides a secret of its name, as it overrides a task variable.
    EXPECT_TRUE(has("-e", "CUDA_VISIBLE_DEVICES=0"));
    EXPECT_FALSE(has("--env", "CUDA_VISIBLE_DEVICES"));
  }
  const std::map<std::string, std::string> engine_env = ContainerEngineEnvironment(spec);
  EXPECT_EQ(engine_env, (std::map<std::string, std::string>{{"DB_PASSWORD", value}, {"HF_TOKEN", value + "-2"}}));

  // A secret under a name the engine reads itself would steer it: refused, naming the variable.
  for (const std::string name : {"LD_PRELOAD", "PATH", "CONTAINERS_CONF", "https_proxy", "XDG_RUNTIME_DIR", "TMPDIR"}) {
    ContainerSpec bad = spec;
    bad.secret_env = {{name, value}};
    auto argv = BuildContainerRunCommand(ContainerEngine::kPodman, bad);
    ASSERT_FALSE(argv.ok()) << name;
    EXPECT_NE(argv.status().message().find("secret variable " + name), std::string::npos) << argv.status().ToString();
    EXPECT_EQ(argv.status().message().find(value), std::string::npos);
  }
  for (const std::string name : {"DB_PASSWORD", "GOOGLE_API_KEY", "STORAGE_ACCOUNT_KEY", "AWS_SECRET_ACCESS_KEY"}) {
    EXPECT_TRUE(CheckSecretVariableName(name).ok()) << name;
  }
}

TEST(ContainerTest, PodmanWithAscendAndCdiAndNoImageIsAnError) {
  auto npus = Fake("npu:huawei:Ascend910B3:8");
  ContainerSpec spec;
  spec.task_id = "infer-1";
  spec.image = "ascend/infer:8.0";
  spec.devices = {Whole(npus[5])};
  auto argv = BuildContainerRunCommand(ContainerEngine::kPodman, spec);
  ASSERT_TRUE(argv.ok());
  auto has = [&](const std::string& a, const std::string& b) {
    for (size_t i = 0; i + 1 < argv->size(); ++i) {
      if ((*argv)[i] == a && (*argv)[i + 1] == b) return true;
    }
    return false;
  };
  EXPECT_EQ(argv->front(), "podman");
  EXPECT_TRUE(has("--device", "/dev/davinci5"));
  EXPECT_TRUE(has("--device", "/dev/davinci_manager"));
  EXPECT_TRUE(has("-v", "/usr/local/Ascend/driver:/usr/local/Ascend/driver:ro"));
  EXPECT_TRUE(has("-e", "ASCEND_RT_VISIBLE_DEVICES=5"));
  EXPECT_EQ(argv->back(), "ascend/infer:8.0");

  ContainerSpec gpu;
  gpu.task_id = "g";
  gpu.image = "cuda:12.4";
  gpu.devices = {Whole(Fake("gpu:nvidia:H200:2")[1])};
  auto cdi = BuildContainerRunCommand(ContainerEngine::kPodman, gpu);
  ASSERT_TRUE(cdi.ok());
  EXPECT_NE(std::find(cdi->begin(), cdi->end(), "nvidia.com/gpu=1"), cdi->end());

  gpu.image.clear();
  EXPECT_EQ(BuildContainerRunCommand(ContainerEngine::kDocker, gpu).status().code(), StatusCode::kInvalidArgument);
}

// Issue 24: every container keeps the engine's default seccomp profile (ROCm too, which used to
// get seccomp=unconfined) and cannot gain privileges; the root is read-only when the spec asks.
TEST(ContainerTest, DefaultSeccompNoNewPrivilegesAndReadOnlyRootOnRequest) {
  ContainerSpec spec;
  spec.task_id = "r";
  spec.image = "rocm/pytorch:6.1";
  spec.devices = {Whole(Fake("gpu:amd:MI300X:2")[0])};
  auto argv = BuildContainerRunCommand(ContainerEngine::kPodman, spec);
  ASSERT_TRUE(argv.ok());
  auto count = [&](const std::string& a) { return std::count(argv->begin(), argv->end(), a); };
  EXPECT_EQ(count("seccomp=unconfined"), 0);
  EXPECT_EQ(count("--privileged"), 0);
  EXPECT_EQ(count("no-new-privileges"), 1);
  EXPECT_EQ(count("--read-only"), 0);
  EXPECT_EQ(count("/dev/kfd"), 1);
  spec.read_only_root = true;
  argv = BuildContainerRunCommand(ContainerEngine::kPodman, spec);
  ASSERT_TRUE(argv.ok());
  EXPECT_EQ(count("--read-only"), 1);
}

TEST(ContainerTest, FindsPodmanBeforeDocker) {
  TempDir bin;
  auto make_exe = [&](const std::string& name) {
    WriteText(bin.path / name, "#!/bin/sh\nexit 0\n");
    ::chmod((bin.path / name).c_str(), 0755);
  };
  EXPECT_EQ(FindContainerEngine(bin.str()).status().code(), StatusCode::kNotFound);
  make_exe("docker");
  EXPECT_EQ(*FindContainerEngine(bin.str()), ContainerEngine::kDocker);
  make_exe("podman");
  EXPECT_EQ(*FindContainerEngine(bin.str()), ContainerEngine::kPodman);
}

// Task users (docs/agent.md, "Task users"): two tasks under uids of their own. Each owns its work
// directory (0700) and reads its own files and environment; the other is refused its files, its
// environment and its log, and the task directory lets it pass but not list.
TEST_F(ProcessRuntimeTest, TasksOfDifferentUsersCannotReadEachOthersFilesEnvironmentOrLogs) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: only root runs tasks as other uids";
  const TaskUser a_user{1900070001, 1900070001}, b_user{1900070002, 1900070002};
  TaskSpec a;
  a.task_id = "t-a";
  a.env = {{"TOKEN", "tok-a-51c0"}};
  a.user = a_user;
  a.command = {"sh", "-c",
               "echo tok-a-51c0 > mine && chmod 400 mine && cat mine && "
               "tr '\\0' '\\n' < /proc/$$/environ | grep -x TOKEN=tok-a-51c0 && id -u && echo HOME=$HOME && "
               "touch ready && exec sleep 30"};
  auto started = rt_->Start(a);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  const fs::path a_work = dir_.path / "t-a" / "work";
  for (int i = 0; i < 500 && !fs::exists(a_work / "ready"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(fs::exists(a_work / "ready")) << ReadText(dir_.path / "t-a" / "stderr.log");
  EXPECT_EQ(*rt_->ReadLog("t-a", LogStream::kStdout),
            "tok-a-51c0\nTOKEN=tok-a-51c0\n1900070001\nHOME=" + fs::canonical(a_work).string() + "\n");
  struct stat st {};
  ASSERT_EQ(::stat(a_work.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, a_user.uid);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat((dir_.path / "t-a").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_mode & 0777, 0711u);
  ASSERT_EQ(::stat((dir_.path / "t-a" / "stdout.log").c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  TaskSpec b;
  b.task_id = "t-b";
  b.user = b_user;
  const std::string a_dir = (dir_.path / "t-a").string();
  b.command = {"sh", "-c",
               "for f in " + a_dir + "/work/mine /proc/" + std::to_string(started->pid) + "/environ " + a_dir +
                   "/stdout.log; do cat $f >/dev/null 2>&1 && echo read $f || echo denied; done; "
                   "ls " + a_dir + " >/dev/null 2>&1 && echo listed || echo denied"};
  ASSERT_TRUE(rt_->Start(b).ok());
  TaskRecord done = WaitForExit(*rt_, "t-b");
  EXPECT_TRUE(done.exit->Succeeded()) << ReadText(dir_.path / "t-b" / "stderr.log");
  EXPECT_EQ(*rt_->ReadLog("t-b", LogStream::kStdout), "denied\ndenied\ndenied\ndenied\n");
  ASSERT_TRUE(rt_->Stop("t-a", SIGKILL, Duration(0)).ok());
  WaitForExit(*rt_, "t-a");
}

// A root agent resolves a task user's command on PATH to a file that user may run: a copy under a
// directory closed to others (python3 under /root) is skipped for one that is open.
TEST_F(ProcessRuntimeTest, ATaskUsersCommandIsOneItMayRun) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: only root runs tasks as other uids";
  for (const char* side : {"private", "public"}) {
    WriteText(dir_.path / side / "hello", std::string("#!/bin/sh\necho ") + side + "\n");
    fs::permissions(dir_.path / side / "hello", fs::perms::all);
  }
  fs::permissions(dir_.path / "private", fs::perms::owner_all);
  fs::permissions(dir_.path / "public", fs::perms::all);
  EXPECT_FALSE(UserMayExecute((dir_.path / "private" / "hello").string(), TaskUser{1900070003, 1900070003}));
  EXPECT_TRUE(UserMayExecute((dir_.path / "public" / "hello").string(), TaskUser{1900070003, 1900070003}));
  TaskSpec spec;
  spec.task_id = "t-path";
  spec.command = {"hello"};
  spec.env = {{"PATH", (dir_.path / "private").string() + ":" + (dir_.path / "public").string() + ":/usr/bin:/bin"}};
  spec.user = TaskUser{1900070003, 1900070003};
  ASSERT_TRUE(rt_->Start(spec).ok());
  TaskRecord done = WaitForExit(*rt_, "t-path");
  EXPECT_TRUE(done.exit->Succeeded());
  EXPECT_EQ(*rt_->ReadLog("t-path", LogStream::kStdout), "public\n");
}

}  // namespace
}  // namespace abacus::agent
