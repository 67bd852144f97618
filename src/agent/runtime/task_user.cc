#include "agent/runtime/task_user.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace abacus::agent {

const char* BecomeTaskUser(const TaskUser& user) {
  if (::syscall(SYS_setgroups, 0, nullptr) != 0) return "setgroups";
  if (::syscall(SYS_setresgid, user.gid, user.gid, user.gid) != 0) return "setgid";
  if (::syscall(SYS_setresuid, user.uid, user.uid, user.uid) != 0) return "setuid";
  uid_t ru = 0, eu = 0, su = 0;
  gid_t rg = 0, eg = 0, sg = 0;
  if (::syscall(SYS_getresuid, &ru, &eu, &su) != 0 || ::syscall(SYS_getresgid, &rg, &eg, &sg) != 0) return "check ids";
  if (ru != user.uid || eu != user.uid || su != user.uid || rg != user.gid || eg != user.gid || sg != user.gid) {
    errno = EPERM;
    return "check ids";
  }
  return nullptr;
}

std::set<uint32_t> UidsWithProcesses(uint32_t first, uint32_t last) {
  std::set<uint32_t> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    // The owner of /proc/<pid> is the effective uid; the Uid line of status has all four.
    std::ifstream status(entry.path() / "status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("Uid:", 0) != 0) continue;
      std::istringstream ids(line.substr(4));
      for (uint64_t id = 0; ids >> id;) {
        if (id >= first && id <= last) out.insert(static_cast<uint32_t>(id));
      }
      break;
    }
  }
  return out;
}

bool UidHasProcesses(uint32_t uid) { return !UidsWithProcesses(uid, uid).empty(); }

Status KillProcessesOf(uint32_t uid) {
  if (uid == 0) return InvalidArgument("refusing to kill every process of uid 0");
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + std::strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    ::close(report[0]);
    ::close(report[1]);
    return Internal(std::string("fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    // Child: async-signal-safe calls only. kill(-1) reaches every process this user may signal
    // (those running as the uid), never the caller itself.
    int err = 0;
    if (BecomeTaskUser(TaskUser{uid, uid}) != nullptr) {
      err = errno;
    } else if (::kill(-1, SIGKILL) != 0 && errno != ESRCH) {
      err = errno;
    }
    if (err != 0) (void)!::write(report[1], &err, sizeof err);
    ::_exit(err == 0 ? 0 : 1);
  }
  ::close(report[1]);
  int err = 0;
  ssize_t n;
  while ((n = ::read(report[0], &err, sizeof err)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (n == static_cast<ssize_t>(sizeof err) && err != 0) {
    return Internal("cannot kill the processes of uid " + std::to_string(uid) + ": " + std::strerror(err));
  }
  return Status::OK();
}

}  // namespace abacus::agent
