#include "agent/loop/lifeline.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "agent/loop/lifeline_watcher.h"
#include "common/log.h"
#include "common/mutex.h"

namespace abacus::agent {

namespace {

// Descriptor 3 is the watcher's socket; 0 and 1 are /dev/null, 2 its log.
constexpr int kWatcherSocket = 3;

// The forked child: async-signal-safe calls only (the agent has other threads).
[[noreturn]] void RunWatcher(int sock, int log, LifelineWatcher& watcher) {
  ::setpgid(0, 0);  // out of the agent's process group: a signal to that group does not reach it
  ::prctl(PR_SET_NAME, "abacus-lifeline", 0, 0, 0);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2}) ::sigaction(sig, &ignore, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(SIGCHLD, &dfl, nullptr);  // the agent's SIGCHLD handler wakes its threads; none here
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);

  // Keep the socket and the log; everything else the agent had open is closed.
  int s = ::fcntl(sock, F_DUPFD, kWatcherSocket);
  int l = log >= 0 ? ::fcntl(log, F_DUPFD, kWatcherSocket) : -1;
  int null = ::open("/dev/null", O_RDWR);
  for (int fd : {0, 1}) {
    if (null >= 0) {
      ::dup2(null, fd);
    } else {
      ::close(fd);
    }
  }
  if (l >= 0) {
    ::dup2(l, 2);
  } else if (null >= 0) {
    ::dup2(null, 2);
  } else {
    ::close(2);
  }
  if (s != kWatcherSocket) ::dup2(s, kWatcherSocket);
  ::fcntl(kWatcherSocket, F_SETFD, FD_CLOEXEC);  // not into the engine commands it runs
  if (::syscall(SYS_close_range, kWatcherSocket + 1, ~0U, 0) != 0) {
    rlimit lim{};
    int max = ::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY ? static_cast<int>(lim.rlim_cur)
                                                                                     : 65536;
    for (int fd = kWatcherSocket + 1; fd < max; ++fd) ::close(fd);
  }
  if (::chdir("/") != 0) {
    // Only so that it pins no directory; staying where the agent was is harmless.
  }
  if (watcher.Watch(kWatcherSocket) == LifelineWatcher::End::kAgentGone) watcher.StopAll();
  ::_exit(0);
}

}  // namespace

Lifeline::~Lifeline() {
  MutexLock lock(mu_);
  if (fd_ >= 0) ::close(fd_);
}

Status Lifeline::Start(const std::string& log_path) {
  MutexLock lock(mu_);
  if (pid_ > 0) return FailedPrecondition("lifeline watcher already started (pid " + std::to_string(pid_) + ")");
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    return Internal(std::string("lifeline: socketpair: ") + std::strerror(errno));
  }
  int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (log < 0) ABACUS_LOG_WARN("agent: lifeline: cannot open {}: {}; the watcher logs nowhere", log_path, std::strerror(errno));
  // Everything the child uses exists before the fork: it must not allocate.
  RealWatcherOs os(2);
  LifelineWatcher watcher(os, SystemClock::Get());
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(sv[0]);
    ::close(sv[1]);
    if (log >= 0) ::close(log);
    return Internal(std::string("lifeline: fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    ::close(sv[0]);
    RunWatcher(sv[1], log, watcher);
  }
  ::setpgid(pid, pid);  // also from here, so it is out of our group before Start returns
  ::close(sv[1]);
  if (log >= 0) ::close(log);
  fd_ = sv[0];
  pid_ = pid;
  warned_ = false;
  return Status::OK();
}

void Lifeline::Send(const LifelineRecord& record) {
  MutexLock lock(mu_);
  if (fd_ < 0) return;
  ssize_t n;
  do {
    n = ::send(fd_, &record, sizeof record, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n == static_cast<ssize_t>(sizeof record) || warned_) return;
  warned_ = true;
  ABACUS_LOG_WARN("agent: the lifeline watcher (pid {}) is gone ({}): if this agent is killed, its tasks run on "
                  "until it starts again; restart the agent to get a new watcher",
                  pid_, n < 0 ? std::strerror(errno) : "short write");
}

void Lifeline::TaskStarted(int pgid, long long start_time, int signal, Duration grace, const std::string& engine_path,
                           const std::string& container) {
  LifelineRecord r;
  r.kind = LifelineRecord::kTaskStarted;
  r.pgid = pgid;
  r.start_time = start_time;
  r.signal = signal;
  r.grace_ms = std::chrono::duration_cast<std::chrono::milliseconds>(grace).count();
  if (!engine_path.empty() && !container.empty()) {
    if (engine_path.size() < sizeof r.engine && container.size() < sizeof r.container) {
      std::memcpy(r.engine, engine_path.data(), engine_path.size());
      std::memcpy(r.container, container.data(), container.size());
    } else {
      ABACUS_LOG_WARN("agent: lifeline: container {} or engine path {} too long to pass on; if this agent is "
                      "killed, only the engine's client process is stopped",
                      container, engine_path);
    }
  }
  Send(r);
}

void Lifeline::FenceWithin(Duration within) {
  LifelineRecord r;
  r.kind = LifelineRecord::kFenceBy;
  r.grace_ms = std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(within).count());
  Send(r);
}

void Lifeline::TaskEnded(int pgid) {
  LifelineRecord r;
  r.kind = LifelineRecord::kTaskEnded;
  r.pgid = pgid;
  Send(r);
}

void Lifeline::Release() {
  LifelineRecord r;
  r.kind = LifelineRecord::kRelease;
  Send(r);
  pid_t pid;
  {
    MutexLock lock(mu_);
    if (fd_ < 0) return;
    ::close(fd_);
    fd_ = -1;
    pid = pid_;
    pid_ = -1;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

pid_t Lifeline::watcher_pid() const {
  MutexLock lock(mu_);
  return pid_;
}

}  // namespace abacus::agent
