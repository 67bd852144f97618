// Lifeline: the agent's side of the lifeline watcher (lifeline_watcher.h). At start the agent
// forks one small watcher process that holds the only other end of a socket; the agent tells it
// each task's process group with its fencing signal and grace, and when the task ends. If the
// agent dies without releasing it (SIGKILL, a crash), the watcher stops those groups the way
// fencing does, so a task never outlives its agent long enough to run twice
// (docs/agent-protocol.md, "Fencing").
//
// Why fork without exec: the watcher needs no code the agent process does not already have, it
// works the same from `abacus agent`, from agents inside `abacus up` and from test binaries, and
// it costs no second copy of the binary on disk or a hidden command line mode. The price is
// that the child of a multi-threaded process may only make async-signal-safe calls, which the
// watcher is written for. Every descriptor but its socket is closed in it (stdin/stdout go to
// /dev/null, stderr to the watcher's log file), so it keeps no listening socket, no task log and
// no pipe of the agent's open; the agent's end is O_CLOEXEC, so tasks never inherit it. The
// watcher moves to its own process group (a signal to the agent's group does not reach it),
// ignores SIGINT/SIGTERM/SIGHUP/SIGQUIT (a Ctrl-C or `systemctl stop` is the agent's to handle:
// the agent then stops its tasks and releases the watcher), and is named "abacus-lifeline".
//
// Thread-safe.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <string>

#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"

namespace abacus::agent {

struct LifelineRecord;

class Lifeline {
 public:
  Lifeline() = default;
  // Closes the agent's end without a release: the watcher then stops the groups it still knows,
  // as after a crash (Release first for a clean end).
  ~Lifeline();
  Lifeline(const Lifeline&) = delete;
  Lifeline& operator=(const Lifeline&) = delete;

  // Forks the watcher; it appends what it does to `log_path` (nowhere when it cannot be opened).
  // FailedPrecondition when it is already started, Internal when the socket or the fork fails.
  Status Start(const std::string& log_path);

  // Tells the watcher to fence every task group itself unless told again within `within` (zero:
  // never) — the agent is then stopped or hung. Ignored when the watcher is not running.
  void FenceWithin(Duration within);

  // Tells the watcher that task group `pgid` (leader start time `start_time`, from
  // ProcessStartTime) runs and, should the agent die, is to get `signal`, then SIGKILL after
  // `grace`. For a container task `engine_path` (absolute) and `container` name it, so the
  // watcher can also stop it through the engine. Ignored when the watcher is not running.
  void TaskStarted(int pgid, long long start_time, int signal, Duration grace, const std::string& engine_path = "",
                   const std::string& container = "");
  // Task group `pgid` ended (was reaped): the watcher forgets it.
  void TaskEnded(int pgid);

  // A clean shutdown: tells the watcher to exit without signalling anything and waits for it.
  // Idempotent.
  void Release();

  // The watcher's pid, or -1 when it is not running.
  pid_t watcher_pid() const;

 private:
  void Send(const LifelineRecord& record);

  mutable Mutex mu_;
  int fd_ GUARDED_BY(mu_) = -1;  // the agent's end
  pid_t pid_ GUARDED_BY(mu_) = -1;
  bool warned_ GUARDED_BY(mu_) = false;
};

}  // namespace abacus::agent
