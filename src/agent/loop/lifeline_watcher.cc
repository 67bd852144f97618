#include "agent/loop/lifeline_watcher.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

extern char** environ;

namespace abacus::agent {

namespace {

// A log line built in a fixed buffer (no heap after the fork).
class Line {
 public:
  Line& Add(const char* s) {
    while (*s != '\0' && n_ < sizeof buf_ - 1) buf_[n_++] = *s++;
    buf_[n_] = '\0';
    return *this;
  }
  Line& Add(long long v) {
    char tmp[24];
    size_t k = 0;
    bool negative = v < 0;
    unsigned long long u = negative ? 0ULL - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
    do {
      tmp[k++] = static_cast<char>('0' + u % 10);
      u /= 10;
    } while (u > 0 && k < sizeof tmp);
    if (negative) Add("-");
    while (k > 0 && n_ < sizeof buf_ - 1) buf_[n_++] = tmp[--k];
    buf_[n_] = '\0';
    return *this;
  }
  const char* c_str() const { return buf_; }

 private:
  char buf_[512] = {};
  size_t n_ = 0;
};

// Reads /proc/<pid>/stat into `buf`; returns its length, 0 when there is no such process.
size_t ReadStat(int pid, char* buf, size_t size) {
  Line path;
  path.Add("/proc/").Add(static_cast<long long>(pid)).Add("/stat");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  size_t got = 0;
  for (;;) {
    ssize_t n = ::read(fd, buf + got, size - 1 - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
    if (got == size - 1) break;
  }
  ::close(fd);
  buf[got] = '\0';
  return got;
}

// The fields of a stat line after "(comm)": state (field 3), pgrp (5), start time (22).
struct Stat {
  char state = '?';
  long long pgrp = -1;
  long long start_time = -1;
};

bool ParseStat(const char* buf, size_t n, Stat* out) {
  const char* close = nullptr;
  for (size_t i = 0; i < n; ++i) {
    if (buf[i] == ')') close = buf + i;
  }
  if (close == nullptr) return false;
  const char* p = close + 1;
  const char* end = buf + n;
  for (int field = 3; field <= 22; ++field) {
    while (p < end && *p == ' ') ++p;
    if (p >= end) return false;
    const char* start = p;
    while (p < end && *p != ' ' && *p != '\n') ++p;
    if (field == 3) out->state = *start;
    if (field == 5 || field == 22) {
      long long v = 0;
      for (const char* q = start; q < p; ++q) {
        if (*q < '0' || *q > '9') return false;
        v = v * 10 + (*q - '0');
      }
      (field == 5 ? out->pgrp : out->start_time) = v;
    }
  }
  return true;
}

bool IsPid(const char* name, int* pid) {
  if (*name == '\0') return false;
  long long v = 0;
  for (const char* c = name; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9') return false;
    v = v * 10 + (*c - '0');
    if (v > 0x7fffffff) return false;
  }
  *pid = static_cast<int>(v);
  return true;
}

struct LinuxDirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

}  // namespace

// ---- the real OS ----

void RealWatcherOs::SignalGroup(int pgid, int sig) {
  if (pgid > 1) (void)::kill(-pgid, sig);
}

bool RealWatcherOs::GroupAlive(int pgid) {
  if (pgid <= 1) return false;
  if (::kill(-pgid, 0) != 0 && errno == ESRCH) return false;
  // kill() also reaches zombies, which stay until whoever adopted them reaps them: look for a
  // member that is not one.
  int dir = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return true;
  alignas(8) char entries[4096];
  char stat[1024];
  bool alive = false;
  for (;;) {
    long n = ::syscall(SYS_getdents64, dir, entries, sizeof entries);
    if (n <= 0) break;
    for (long off = 0; off < n && !alive;) {
      auto* d = reinterpret_cast<LinuxDirent64*>(entries + off);
      off += d->d_reclen;
      int pid = 0;
      if (!IsPid(d->d_name, &pid)) continue;
      size_t len = ReadStat(pid, stat, sizeof stat);
      Stat s;
      if (len == 0 || !ParseStat(stat, len, &s)) continue;
      if (s.pgrp == pgid && s.state != 'Z' && s.state != 'X') alive = true;
    }
    if (alive) break;
  }
  ::close(dir);
  return alive;
}

long long RealWatcherOs::StartTime(int pid) {
  char stat[1024];
  size_t len = ReadStat(pid, stat, sizeof stat);
  Stat s;
  if (len == 0 || !ParseStat(stat, len, &s)) return -1;
  return s.start_time;
}

void RealWatcherOs::Pause(std::chrono::milliseconds d) {
  timespec left{static_cast<time_t>(d.count() / 1000), static_cast<long>(d.count() % 1000) * 1000000L};
  while (::nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

void RealWatcherOs::Run(const char* const* argv) {
  pid_t pid = ::fork();
  if (pid < 0) return;
  if (pid == 0) {
    int null = ::open("/dev/null", O_RDWR);
    if (null >= 0) {
      ::dup2(null, 0);
      ::dup2(null, 1);
    }
    ::execve(argv[0], const_cast<char* const*>(argv), environ);
    ::_exit(127);
  }
  int status = 0;
  for (int waited_ms = 0;; waited_ms += 50) {
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return;
    if (waited_ms >= 30000) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return;
    }
    Pause(std::chrono::milliseconds(50));
  }
}

void RealWatcherOs::Log(const char* line) {
  if (log_fd_ < 0) return;
  Line l;
  l.Add("abacus-lifeline[").Add(static_cast<long long>(::getpid())).Add("]: ").Add(line).Add("\n");
  const char* p = l.c_str();
  size_t n = std::strlen(p);
  while (n > 0) {
    ssize_t w = ::write(log_fd_, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

// ---- the watcher ----

LifelineWatcher::LifelineWatcher(WatcherOs& os, const Clock& clock, size_t capacity)
    : os_(os), clock_(clock), capacity_(capacity) {
  entries_.reserve(capacity_);
}

void LifelineWatcher::Log(const char* what, long long a, const char* more, long long b) {
  Line l;
  l.Add(what).Add(a).Add(more);
  if (b >= 0) l.Add(b);
  os_.Log(l.c_str());
}

bool LifelineWatcher::Apply(const LifelineRecord& r) {
  switch (r.kind) {
    case LifelineRecord::kTaskStarted:
      if (entries_.size() >= capacity_) {
        Log("table full: task group ", r.pgid, " is not watched; tasks watched: ", static_cast<long long>(capacity_));
        return true;
      }
      entries_.push_back(Entry{r, Time{}, false});
      entries_.back().task.engine[sizeof r.engine - 1] = '\0';
      entries_.back().task.container[sizeof r.container - 1] = '\0';
      return true;
    case LifelineRecord::kTaskEnded:
      for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (it->task.pgid == r.pgid) {
          entries_.erase(it);  // shifts in place: no allocation
          break;
        }
      }
      return true;
    case LifelineRecord::kRelease:
      return false;
    case LifelineRecord::kFenceBy:
      fence_by_us_ = r.grace_ms > 0 ? ToMicros(clock_.Now()) + r.grace_ms * 1000 : 0;
      return true;
    default:
      return true;
  }
}

void LifelineWatcher::StopContainer(const LifelineRecord& task) {
  // A container lives under its engine's monitor (conmon, containerd-shim), outside the task's
  // process group, so killing the `<engine> run` client leaves it running: the engine stops
  // what is left of it (nothing, when it ended with the client; the command then just fails).
  if (task.engine[0] == '\0' || task.container[0] == '\0') return;
  const char* argv[] = {task.engine, "kill", "--signal=SIGKILL", task.container, nullptr};
  os_.Run(argv);
}

LifelineWatcher::End LifelineWatcher::Watch(int fd) {
  for (;;) {
    if (fence_by_us_ > 0) {
      const int64_t now = ToMicros(clock_.Now());
      if (now >= fence_by_us_) {
        fence_by_us_ = 0;
        FenceSilent();
        continue;
      }
      pollfd p{fd, POLLIN, 0};
      const int64_t wait_ms = std::min<int64_t>((fence_by_us_ - now) / 1000 + 1, 60'000);
      const int rc = ::poll(&p, 1, static_cast<int>(wait_ms));
      if (rc == 0 || (rc < 0 && errno == EINTR)) continue;  // the deadline is checked above
    }
    LifelineRecord r;
    ssize_t n = ::recv(fd, &r, sizeof r, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return End::kAgentGone;  // end-of-file: the agent's end is closed
    if (static_cast<size_t>(n) != sizeof r) continue;
    if (!Apply(r)) return End::kReleased;
  }
}

void LifelineWatcher::StopAll() {
  Log("the agent is gone (its end of the lifeline closed without a release); task groups to stop: ",
      static_cast<long long>(entries_.size()));
  StopGroups();
}

void LifelineWatcher::FenceSilent() {
  Log("the agent did not renew its fencing deadline (stopped or hung while its tasks run); task groups to stop: ",
      static_cast<long long>(entries_.size()));
  StopGroups();
}

void LifelineWatcher::StopGroups() {
  Time now = clock_.Now();
  long long signalled = 0;
  for (Entry& e : entries_) {
    if (e.done) continue;  // stopped by an earlier fence
    const int pgid = e.task.pgid;
    const long long leader = os_.StartTime(pgid);
    // The leader's pid given to another process: not ours. Leader gone: its group's id cannot be
    // reused while members live, so what is left of it is still the task.
    if (pgid <= 1 || e.task.start_time < 0 || (leader >= 0 && leader != e.task.start_time)) {
      e.done = true;
      Log("left alone: task group ", pgid, " (its leader's pid now belongs to another process)");
      continue;
    }
    os_.SignalGroup(pgid, e.task.signal);
    e.deadline = now + std::chrono::milliseconds(e.task.grace_ms);
    ++signalled;
  }
  Log("sent the fencing signal to ", signalled, " task group(s); SIGKILL to each still alive after its grace");
  for (;;) {
    now = clock_.Now();
    bool waiting = false;
    for (Entry& e : entries_) {
      if (e.done) continue;
      if (os_.GroupAlive(e.task.pgid)) {
        if (now < e.deadline) {
          waiting = true;
          continue;
        }
        os_.SignalGroup(e.task.pgid, SIGKILL);
        Log("task group ", e.task.pgid, " outlived its grace: SIGKILL; grace ms: ", e.task.grace_ms);
      }
      e.done = true;
      StopContainer(e.task);
    }
    if (!waiting) break;
    os_.Pause(std::chrono::milliseconds(20));
  }
  os_.Log("done");
}

}  // namespace abacus::agent
