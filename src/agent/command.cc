#include "agent/command.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace abacus::agent {

namespace {
constexpr size_t kMaxOutput = 4 << 20;
}  // namespace

std::string JoinArgv(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) {
    if (!out.empty()) out += ' ';
    out += a;
  }
  return out;
}

Result<std::string> ReadFileToString(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read " + path + ": " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool UserMayExecute(const std::string& path, const TaskUser& user) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(path, ec).lexically_normal();
  if (ec) return false;
  for (;;) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return false;
    mode_t x = st.st_uid == user.uid ? S_IXUSR : st.st_gid == user.gid ? S_IXGRP : S_IXOTH;
    if ((st.st_mode & x) == 0) return false;
    if (p == p.root_path() || !p.has_parent_path()) return true;
    p = p.parent_path();
  }
}

Result<std::string> FindExecutable(const std::string& name, const std::string& path_env,
                                   const std::optional<TaskUser>& user) {
  if (name.empty()) return InvalidArgument("empty command");
  if (name.find('/') != std::string::npos) {
    if (::access(name.c_str(), X_OK) == 0 && (!user || UserMayExecute(name, *user))) return name;
    return NotFound(name + ": not executable" + (user ? " by the task's user (uid " + std::to_string(user->uid) + ")" : ""));
  }
  std::string path = path_env;
  if (path.empty()) {
    const char* p = std::getenv("PATH");
    path = p != nullptr ? p : "/usr/local/bin:/usr/bin:/bin";
  }
  size_t start = 0;
  while (start <= path.size()) {
    size_t colon = path.find(':', start);
    std::string dir = path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    start = colon == std::string::npos ? path.size() + 1 : colon + 1;
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0 && (!user || UserMayExecute(candidate, *user))) {
      return candidate;
    }
  }
  return NotFound(name + ": not found on PATH");
}

Result<CommandOutput> RunCommand(const std::vector<std::string>& argv,
                                 std::chrono::milliseconds timeout, bool merge_stderr,
                                 const std::optional<TaskUser>& user) {
  if (argv.empty()) return InvalidArgument("empty command");
  ABACUS_ASSIGN_OR_RETURN(std::string exe, FindExecutable(argv[0], "", user));
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  int out_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + std::strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    return Internal(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls from here on.
    ::setpgid(0, 0);
    int devnull = ::open("/dev/null", O_RDWR);
    if (devnull >= 0) {
      ::dup2(devnull, 0);
      if (!merge_stderr) ::dup2(devnull, 2);
    }
    ::dup2(out_pipe[1], 1);
    if (merge_stderr) ::dup2(out_pipe[1], 2);
    ::signal(SIGPIPE, SIG_DFL);
    if (user && BecomeTaskUser(*user) != nullptr) ::_exit(126);  // never as root by accident
    ::execv(exe.c_str(), cargv.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  ::close(out_pipe[1]);

  CommandOutput result;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[8192];
  bool open = true;
  while (open) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      result.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    struct pollfd pfd {out_pipe[0], POLLIN, 0};
    int r = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (r < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (r == 0) continue;
    ssize_t n = ::read(out_pipe[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      open = false;
      break;
    }
    if (result.out.size() < kMaxOutput) result.out.append(buf, static_cast<size_t>(n));
  }
  ::close(out_pipe[0]);
  // Wait without reaping, so the group id stays reserved while the stragglers it left behind
  // are killed; then reap.
  while (true) {
    siginfo_t info {};
    int r = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT | WNOHANG);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 || info.si_pid == pid) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      result.timed_out = true;
      ::kill(-pid, SIGKILL);
      deadline = std::chrono::steady_clock::time_point::max();
    }
    ::usleep(2000);
  }
  ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

Result<CommandOutput> SystemCommandRunner::Run(const std::vector<std::string>& argv) {
  return RunCommand(argv, timeout_);
}

Result<CommandOutput> ReplayCommandRunner::Run(const std::vector<std::string>& argv) {
  std::string key = JoinArgv(argv);
  calls_.push_back(key);
  auto it = outputs_.find(key);
  if (it == outputs_.end()) return NotFound((argv.empty() ? std::string("?") : argv[0]) + ": not found on PATH");
  return it->second;
}

}  // namespace abacus::agent
