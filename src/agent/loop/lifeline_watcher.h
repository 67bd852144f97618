// The lifeline watcher: the small process that outlives an agent killed with SIGKILL just long
// enough to stop its tasks (docs/agent-protocol.md, "Fencing"). The agent tells it, over a
// socket only the two of them hold, each task's process group with its fencing signal and grace
// when the task starts, and when it ends. When the socket reaches end-of-file without a release
// message (the agent died, whatever killed it), the watcher sends every live group its signal,
// waits its grace, SIGKILLs what is left, stops container tasks through their engine, and exits.
//
// It runs in a child forked from a multi-threaded agent without exec, so everything it does
// after the fork is async-signal-safe: a table preallocated before the fork, plain system calls,
// no heap, no locks, no stdio. The OS and the clock are seams, so tests drive it in-process.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "common/clock.h"

namespace abacus::agent {

// One message from the agent to its watcher (one SOCK_SEQPACKET record, well under PIPE_BUF).
struct LifelineRecord {
  // kFenceBy: `grace_ms` is how long from its receipt the watcher waits for the next one (0:
  // forever). Past it with no renewal the agent is stopped or hung (SIGSTOP, a frozen process)
  // while its tasks run on: the watcher fences them as for a dead agent. Relative, so that the
  // two processes need not share a clock.
  enum Kind : int32_t { kTaskStarted = 1, kTaskEnded = 2, kRelease = 3, kFenceBy = 4 };
  int32_t kind = 0;
  int32_t pgid = 0;           // the task's process group (its leader's pid)
  int64_t start_time = -1;    // the leader's start time (/proc/<pid>/stat field 22): pid reuse guard
  int32_t signal = 15;        // the task's fencing signal
  int32_t reserved = 0;
  int64_t grace_ms = 0;       // the task's fencing grace; SIGKILL after it
  char engine[256] = {};      // container task: absolute path of podman/docker; empty otherwise
  char container[192] = {};   // container task: its container name
};

// The system calls the watcher makes; RealWatcherOs makes them for real.
class WatcherOs {
 public:
  virtual ~WatcherOs() = default;
  // Sends `sig` to process group `pgid`.
  virtual void SignalGroup(int pgid, int sig) = 0;
  // True while a process other than a zombie belongs to group `pgid`.
  virtual bool GroupAlive(int pgid) = 0;
  // The start time of process `pid`, or -1 when there is none (or it is a zombie).
  virtual long long StartTime(int pid) = 0;
  // Sleeps about `d`.
  virtual void Pause(std::chrono::milliseconds d) = 0;
  // Runs `argv` (argv[0] an absolute path, nullptr-terminated) and waits for it (killed after
  // 30 s).
  virtual void Run(const char* const* argv) = 0;
  // Writes one line to the watcher's log.
  virtual void Log(const char* line) = 0;
};

// Real system calls, async-signal-safe (kill, getdents64 over /proc, read, nanosleep,
// fork/execve, waitpid, write).
class RealWatcherOs final : public WatcherOs {
 public:
  // `log_fd`: where Log writes (-1: nowhere).
  explicit RealWatcherOs(int log_fd) : log_fd_(log_fd) {}
  void SignalGroup(int pgid, int sig) override;
  bool GroupAlive(int pgid) override;
  long long StartTime(int pid) override;
  void Pause(std::chrono::milliseconds d) override;
  void Run(const char* const* argv) override;
  void Log(const char* line) override;

 private:
  int log_fd_;
};

class LifelineWatcher {
 public:
  // Holds at most `capacity` task groups (allocated now, before any fork).
  LifelineWatcher(WatcherOs& os, const Clock& clock, size_t capacity = 2048);

  enum class End { kReleased, kAgentGone };
  // Reads records from `fd` until a release message (kReleased) or end-of-file/an error
  // (kAgentGone), keeping the table of live task groups; fences them (FenceSilent) when a
  // kFenceBy deadline passes unrenewed, and goes on watching.
  End Watch(int fd);

  // The agent is gone: sends each live group (in the order they started) its signal, then
  // SIGKILLs each one still alive when its grace has run out; once a container task's group is
  // gone or killed, runs `<engine> kill --signal=SIGKILL <container>`. A group whose leader's pid now belongs to
  // another process is left alone. Returns once every group is gone or killed.
  void StopAll();
  // The agent did not renew its fencing deadline: the same stop as StopAll, logged as such.
  void FenceSilent();

  // Applies one record (Watch calls it; tests too). False for a release message.
  bool Apply(const LifelineRecord& record);
  // The task groups it would stop (tests).
  size_t live() const { return entries_.size(); }

 private:
  struct Entry {
    LifelineRecord task;
    Time deadline{};
    bool done = false;
  };
  void Log(const char* what, long long a, const char* more = "", long long b = -1);
  void StopContainer(const LifelineRecord& task);
  // Sends each live group its signal, then SIGKILL after its grace (StopAll's work).
  void StopGroups();

  WatcherOs& os_;
  const Clock& clock_;
  size_t capacity_;
  std::vector<Entry> entries_;  // reserved at construction: never reallocated, so no heap after the fork
  int64_t fence_by_us_ = 0;     // kFenceBy's deadline; 0: none
};

}  // namespace abacus::agent
