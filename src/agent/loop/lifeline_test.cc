// The lifeline watcher: in-process with a fake OS and a ManualClock (order, grace, release, pid
// reuse, containers), and as a real process forked by a real "agent" that is then SIGKILLed.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "agent/loop/lifeline.h"
#include "agent/loop/lifeline_watcher.h"
#include "agent/loop/pid_file.h"
#include "common/test_eventually.h"
#include "agent/runtime/process_os.h"

namespace abacus::agent {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

// What the watcher did, on a ManualClock that moves only when it pauses.
class FakeWatcherOs final : public WatcherOs {
 public:
  struct Signal {
    Duration at;  // since the test began
    int pgid;
    int sig;
    bool operator==(const Signal&) const = default;
  };
  explicit FakeWatcherOs(ManualClock& clock) : clock_(clock), t0_(clock.Now()) {}

  // A live group whose leader started at `start_time`; it ends on `dies_on` (0: only SIGKILL).
  void AddGroup(int pgid, long long start_time, int dies_on = 0) {
    alive_[pgid] = true;
    start_[pgid] = start_time;
    dies_on_[pgid] = dies_on;
  }
  void SignalGroup(int pgid, int sig) override {
    signals.push_back({clock_.Now() - t0_, pgid, sig});
    if (sig == SIGKILL || sig == dies_on_[pgid]) alive_[pgid] = false;
  }
  bool GroupAlive(int pgid) override { return alive_[pgid]; }
  long long StartTime(int pid) override { return start_.count(pid) > 0 ? start_[pid] : -1; }
  void Pause(milliseconds d) override { clock_.Advance(d); }
  void Run(const char* const* argv) override {
    std::vector<std::string> args;
    for (const char* const* a = argv; *a != nullptr; ++a) args.emplace_back(*a);
    runs.push_back(args);
  }
  void Log(const char* line) override { logs.emplace_back(line); }

  std::vector<Signal> signals;
  std::vector<std::vector<std::string>> runs;
  std::vector<std::string> logs;

 private:
  ManualClock& clock_;
  Time t0_;
  std::map<int, bool> alive_;
  std::map<int, long long> start_;
  std::map<int, int> dies_on_;
};

LifelineRecord Started(int pgid, long long start_time, int sig, Duration grace, const std::string& container = "") {
  LifelineRecord r;
  r.kind = LifelineRecord::kTaskStarted;
  r.pgid = pgid;
  r.start_time = start_time;
  r.signal = sig;
  r.grace_ms = std::chrono::duration_cast<milliseconds>(grace).count();
  if (!container.empty()) {
    std::snprintf(r.engine, sizeof r.engine, "%s", "/usr/bin/podman");
    std::snprintf(r.container, sizeof r.container, "%s", container.c_str());
  }
  return r;
}

LifelineRecord Ended(int pgid) {
  LifelineRecord r;
  r.kind = LifelineRecord::kTaskEnded;
  r.pgid = pgid;
  return r;
}

LifelineRecord Release() {
  LifelineRecord r;
  r.kind = LifelineRecord::kRelease;
  return r;
}

// Feeds `records` to `watcher` over a real socket pair whose agent end is then closed.
LifelineWatcher::End Feed(LifelineWatcher& watcher, const std::vector<LifelineRecord>& records) {
  int sv[2];
  EXPECT_EQ(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
  for (const auto& r : records) EXPECT_EQ(::send(sv[0], &r, sizeof r, MSG_NOSIGNAL), static_cast<ssize_t>(sizeof r));
  ::close(sv[0]);  // the agent is gone (or done)
  LifelineWatcher::End end = watcher.Watch(sv[1]);
  ::close(sv[1]);
  return end;
}

TEST(LifelineWatcherTest, WhenTheAgentIsGoneEachGroupGetsItsSignalInOrderThenSigkillAfterItsGrace) {
  ManualClock clock;
  FakeWatcherOs os(clock);
  os.AddGroup(101, 5001);           // checkpoints on SIGUSR1 but never exits: SIGKILL after 5 s
  os.AddGroup(102, 5002);           // ignores SIGTERM: SIGKILL after 2 s
  os.AddGroup(103, 5003, SIGTERM);  // ends on SIGTERM: no SIGKILL
  os.AddGroup(104, 5004);           // ended before the agent died: left alone
  LifelineWatcher watcher(os, clock);
  auto end = Feed(watcher, {Started(101, 5001, SIGUSR1, seconds(5)), Started(102, 5002, SIGTERM, seconds(2)),
                            Started(104, 5004, SIGTERM, seconds(1)), Started(103, 5003, SIGTERM, seconds(10)),
                            Ended(104)});
  ASSERT_EQ(end, LifelineWatcher::End::kAgentGone);
  EXPECT_EQ(watcher.live(), 3u);
  watcher.StopAll();
  using S = FakeWatcherOs::Signal;
  const std::vector<S> want = {{Duration{}, 101, SIGUSR1}, {Duration{}, 102, SIGTERM}, {Duration{}, 103, SIGTERM},
                               {seconds(2), 102, SIGKILL}, {seconds(5), 101, SIGKILL}};
  EXPECT_EQ(os.signals, want);
  EXPECT_TRUE(os.runs.empty());
}

TEST(LifelineWatcherTest, AReleaseMeansACleanShutdownAndNothingIsSignalled) {
  ManualClock clock;
  FakeWatcherOs os(clock);
  os.AddGroup(101, 5001);
  LifelineWatcher watcher(os, clock);
  // The release comes first; what follows (the close) does not matter any more.
  EXPECT_EQ(Feed(watcher, {Started(101, 5001, SIGTERM, seconds(5)), Release()}), LifelineWatcher::End::kReleased);
  EXPECT_TRUE(os.signals.empty());
}

TEST(LifelineWatcherTest, AGroupWhoseLeadersPidNowBelongsToAnotherProcessIsLeftAlone) {
  ManualClock clock;
  FakeWatcherOs os(clock);
  os.AddGroup(101, 9999);  // pid 101 was reused: another start time
  os.AddGroup(102, 5002, SIGTERM);
  LifelineWatcher watcher(os, clock);
  ASSERT_EQ(Feed(watcher, {Started(101, 5001, SIGTERM, seconds(1)), Started(102, 5002, SIGTERM, seconds(1))}),
            LifelineWatcher::End::kAgentGone);
  watcher.StopAll();
  ASSERT_EQ(os.signals.size(), 1u);
  EXPECT_EQ(os.signals[0].pgid, 102);
  bool logged = false;
  for (const auto& l : os.logs) logged |= l.find("left alone: task group 101") != std::string::npos;
  EXPECT_TRUE(logged);
}

TEST(LifelineWatcherTest, AContainerTaskIsAlsoKilledThroughItsEngine) {
  ManualClock clock;
  FakeWatcherOs os(clock);
  os.AddGroup(101, 5001);  // `podman run` client: SIGKILL after the grace; the container lives on
  LifelineWatcher watcher(os, clock);
  ASSERT_EQ(Feed(watcher, {Started(101, 5001, SIGUSR1, seconds(3), "abacus-wl.1.0.1")}),
            LifelineWatcher::End::kAgentGone);
  watcher.StopAll();
  ASSERT_EQ(os.signals.size(), 2u);
  EXPECT_EQ(os.signals[1], (FakeWatcherOs::Signal{seconds(3), 101, SIGKILL}));
  ASSERT_EQ(os.runs.size(), 1u);
  EXPECT_EQ(os.runs[0], (std::vector<std::string>{"/usr/bin/podman", "kill", "--signal=SIGKILL", "abacus-wl.1.0.1"}));
}

// ---- a real watcher ----

class LifelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int n = 0;
    dir_ = fs::temp_directory_path() / ("abacus-lifeline-" + std::to_string(::getpid()) + "-" + std::to_string(++n));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Waits (real time, generous) for child `pid` to end; returns its wait status, or -1.
int Reap(pid_t pid) {
  int status = -1;
  bool ended = Eventually([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, milliseconds(30000));
  return ended ? status : -1;
}

TEST_F(LifelineTest, AnAgentKilledWithSigkillLeavesNoTaskRunning) {
  // Orphans come to this test, so it sees how they ended (and zombies wait for it to reap them).
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
  int report[2];
  ASSERT_EQ(::pipe(report), 0);  // not O_CLOEXEC: the watcher must close it all the same
  const std::string saves = "trap 'echo saved > " + Path("saved") + "; exit 0' USR1; echo $$ > " + Path("ready") +
                            "; while true; do sleep 0.1; done";
  const std::string stubborn = "trap '' TERM; echo $$ > " + Path("ready2") + "; while true; do sleep 0.1; done";
  pid_t agent = ::fork();
  ASSERT_GE(agent, 0);
  if (agent == 0) {
    // The "agent": starts its watcher and two tasks, tells the test their pids, then waits.
    ::close(report[0]);
    Lifeline lifeline;
    if (!lifeline.Start(Path("lifeline.log")).ok()) ::_exit(2);
    auto& os = RealProcessOs::Get();
    auto t1 = os.Spawn({"/bin/sh", {"sh", "-c", saves}, {"PATH=/usr/bin:/bin"}, dir_.string(), "/dev/null", "/dev/null", {}, {}});
    auto t2 = os.Spawn({"/bin/sh", {"sh", "-c", stubborn}, {"PATH=/usr/bin:/bin"}, dir_.string(), "/dev/null", "/dev/null", {}, {}});
    if (!t1.ok() || !t2.ok()) ::_exit(3);
    lifeline.TaskStarted(*t1, ProcessStartTime(*t1), SIGUSR1, seconds(30));
    lifeline.TaskStarted(*t2, ProcessStartTime(*t2), SIGTERM, milliseconds(300));
    int pids[3] = {lifeline.watcher_pid(), *t1, *t2};
    if (::write(report[1], pids, sizeof pids) != sizeof pids) ::_exit(4);
    for (;;) ::pause();
  }
  ::close(report[1]);
  int pids[3] = {0, 0, 0};
  ASSERT_EQ(::read(report[0], pids, sizeof pids), static_cast<ssize_t>(sizeof pids));
  const pid_t watcher = pids[0], t1 = pids[1], t2 = pids[2];
  ASSERT_TRUE(Eventually([&] { return fs::exists(Path("ready")) && fs::exists(Path("ready2")); }));  // traps set

  // The watcher: its own name and process group, and nothing open but its socket (0 and 1 are
  // /dev/null, 2 its log): not the test's pipe, not the agent's other descriptors.
  const std::string proc = "/proc/" + std::to_string(watcher);
  EXPECT_EQ(ReadAll(proc + "/comm"), "abacus-lifeline\n");
  EXPECT_EQ(::getpgid(watcher), watcher);
  std::set<std::string> fds;
  for (const auto& e : fs::directory_iterator(proc + "/fd")) fds.insert(e.path().filename().string());
  EXPECT_EQ(fds, (std::set<std::string>{"0", "1", "2", "3"}));
  EXPECT_EQ(fs::read_symlink(proc + "/fd/0"), "/dev/null");
  EXPECT_EQ(fs::read_symlink(proc + "/fd/2"), fs::path(Path("lifeline.log")));
  EXPECT_EQ(fs::read_symlink(proc + "/fd/3").string().rfind("socket:", 0), 0u);
  // The tasks did not inherit the agent's end of the socket.
  for (pid_t t : {t1, t2}) {
    for (const auto& e : fs::directory_iterator("/proc/" + std::to_string(t) + "/fd")) {
      std::error_code ec;
      EXPECT_EQ(fs::read_symlink(e.path(), ec).string().rfind("socket:", 0), std::string::npos) << e.path();
    }
  }

  ::kill(agent, SIGKILL);
  ASSERT_EQ(::waitpid(agent, nullptr, 0), agent);
  // Task 1 got its checkpoint signal and saved; task 2 ignored SIGTERM and was SIGKILLed after
  // its grace; the watcher exited once both were gone.
  int s1 = Reap(t1), s2 = Reap(t2), sw = Reap(watcher);
  EXPECT_TRUE(WIFEXITED(s1) && WEXITSTATUS(s1) == 0) << s1;
  EXPECT_EQ(ReadAll(Path("saved")), "saved\n");
  EXPECT_TRUE(WIFSIGNALED(s2) && WTERMSIG(s2) == SIGKILL) << s2;
  EXPECT_TRUE(WIFEXITED(sw) && WEXITSTATUS(sw) == 0) << sw;
  EXPECT_NE(ReadAll(Path("lifeline.log")).find("the agent is gone"), std::string::npos) << ReadAll(Path("lifeline.log"));
  // Nothing of either group is left (their `sleep`s came to this test too).
  EXPECT_TRUE(Eventually([&] {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
    return ::kill(-t1, 0) != 0 && ::kill(-t2, 0) != 0;
  })) << "a task group lives on";
  ::close(report[0]);
  ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
}

TEST_F(LifelineTest, AReleasedWatcherExitsAndLeavesTheTasksAlone) {
  Lifeline lifeline;
  ASSERT_TRUE(lifeline.Start(Path("lifeline.log")).ok());
  auto task = RealProcessOs::Get().Spawn({"/bin/sleep", {"sleep", "1000"}, {}, dir_.string(), "/dev/null", "/dev/null", {}, {}});
  ASSERT_TRUE(task.ok()) << task.status().ToString();
  lifeline.TaskStarted(*task, ProcessStartTime(*task), SIGTERM, seconds(1));
  const pid_t watcher = lifeline.watcher_pid();
  lifeline.Release();  // returns once the watcher has exited (and was reaped)
  EXPECT_EQ(lifeline.watcher_pid(), -1);
  EXPECT_NE(::kill(watcher, 0), 0);
  EXPECT_EQ(::waitpid(*task, nullptr, WNOHANG), 0) << "the task was stopped";
  ::kill(-*task, SIGKILL);
  ::waitpid(*task, nullptr, 0);
}

}  // namespace
}  // namespace abacus::agent
