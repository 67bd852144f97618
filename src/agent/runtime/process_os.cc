#include "agent/runtime/process_os.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace abacus::agent {

namespace {

// Async-signal-safe helpers for the child between fork and exec.
void WriteAll(int fd, const char* s, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

size_t FormatInt(long v, char* buf) {
  char tmp[24];
  size_t n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v > 0);
  for (size_t i = 0; i < n; ++i) buf[i] = tmp[n - 1 - i];
  return n;
}

// Reports "<step>: <errno>" to the parent and exits.
[[noreturn]] void ChildFail(int report_fd, const char* step) {
  int err = errno;
  WriteAll(report_fd, reinterpret_cast<const char*>(&err), sizeof err);
  WriteAll(report_fd, step, std::strlen(step));
  ::_exit(127);
}

}  // namespace

RealProcessOs& RealProcessOs::Get() {
  static RealProcessOs os;
  return os;
}

Result<int> RealProcessOs::Spawn(const SpawnRequest& r) {
  std::vector<char*> argv, envp;
  for (const auto& a : r.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : r.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + std::strerror(errno));
  // vfork: the agent is a large multi-threaded process, and copying its page tables for every
  // task (fork) was most of the cost of starting one. The child shares our memory until execve,
  // so it only makes system calls on data prepared above (it has its own signal dispositions).
  pid_t pid = ::vfork();
  if (pid < 0) {
    int err = errno;
    ::close(report[0]);
    ::close(report[1]);
    return Internal(std::string("vfork: ") + std::strerror(err));
  }
  if (pid == 0) {
    // 1) Own process group, so a stop reaches every process the task starts.
    ::setpgid(0, 0);
    // 2) Into the task's cgroups before anything else runs.
    char pidbuf[24];
    size_t pidlen = FormatInt(static_cast<long>(::getpid()), pidbuf);
    for (const auto& procs : r.cgroup_procs) {
      int fd = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0) ChildFail(report[1], "cgroup");
      if (::write(fd, pidbuf, pidlen) != static_cast<ssize_t>(pidlen)) ChildFail(report[1], "cgroup");
      ::close(fd);
    }
    // 3) stdin from /dev/null, stdout/stderr to the log files.
    int in = ::open("/dev/null", O_RDONLY);
    // The logs are the agent's (mode 0600): the task writes them through these descriptors only.
    int out = ::open(r.stdout_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0600);
    int err = ::open(r.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0600);
    if (in < 0 || out < 0 || err < 0) ChildFail(report[1], "log files");
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    if (in > 2) ::close(in);
    if (out > 2) ::close(out);
    if (err > 2) ::close(err);
    // 4) The task's own user, never root by accident: any failure ends the start here.
    if (r.user) {
      if (const char* step = BecomeTaskUser(*r.user); step != nullptr) ChildFail(report[1], "task user");
    }
    // 5) Working directory, default signal handling, then exec.
    if (::chdir(r.work_dir.c_str()) != 0) ChildFail(report[1], "working directory");
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2, SIGHUP, SIGCHLD}) ::signal(sig, SIG_DFL);
    ::execve(r.executable.c_str(), argv.data(), envp.data());
    ChildFail(report[1], "exec");
  }
  ::setpgid(pid, pid);  // also from the parent, so the group exists before Spawn returns
  ::close(report[1]);
  char buf[256];
  ssize_t n;
  size_t got = 0;
  while ((n = ::read(report[0], buf + got, sizeof buf - got)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0) got += static_cast<size_t>(n);
    if (got == sizeof buf) break;
  }
  ::close(report[0]);
  if (got >= sizeof(int)) {
    int child_errno = 0;
    std::memcpy(&child_errno, buf, sizeof child_errno);
    std::string step(buf + sizeof(int), got - sizeof(int));
    int status = 0;
    ::waitpid(pid, &status, 0);
    std::string what = step == "exec"                ? r.executable
                       : step == "working directory" ? r.work_dir
                       : step == "task user" && r.user
                           ? "uid " + std::to_string(r.user->uid) + " gid " + std::to_string(r.user->gid)
                           : step;
    return FailedPrecondition("cannot start " + r.argv.front() + ": " + step + " (" + what + "): " +
                              std::strerror(child_errno));
  }
  return static_cast<int>(pid);
}

Status RealProcessOs::SignalGroup(int pgid, int sig) {
  if (pgid <= 0) return InvalidArgument("bad process group " + std::to_string(pgid));
  if (::kill(-pgid, sig) != 0 && errno != ESRCH) {
    return Internal("kill(-" + std::to_string(pgid) + ", " + std::to_string(sig) + "): " + std::strerror(errno));
  }
  return Status::OK();
}

std::optional<ProcessExit> RealProcessOs::TryWait(int pid) {
  siginfo_t info {};
  int r = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
  if (r != 0) {
    if (errno == ECHILD) return ProcessExit{-1, 0};  // not our child any more
    return std::nullopt;
  }
  if (info.si_pid != pid) return std::nullopt;
  // The leader is a zombie, so its group id is still reserved: kill what it left behind.
  ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ProcessExit exit;
  if (WIFEXITED(status)) exit.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) exit.signal = WTERMSIG(status);
  return exit;
}

}  // namespace abacus::agent
