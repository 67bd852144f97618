// The OS seam of the process runtime: start a process group, signal it, reap it. Tests that
// need no real process swap in a fake.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "agent/runtime/task_user.h"
#include "common/status.h"

namespace abacus::agent {

struct SpawnRequest {
  std::string executable;              // absolute path
  std::vector<std::string> argv;       // argv[0] included
  std::vector<std::string> env;        // "KEY=VALUE"
  std::string work_dir;
  std::string stdout_path, stderr_path;  // opened for append by the child while still root, mode 0600
  std::vector<std::string> cgroup_procs;  // the child writes its pid here before exec
  // The user to run as (BecomeTaskUser), after the cgroups and log files and before the working
  // directory; nullopt: the agent's own. A failure to switch fails the start ("task user").
  std::optional<TaskUser> user = std::nullopt;
};

struct ProcessExit {
  int exit_code = 0;  // valid when signal == 0
  int signal = 0;     // the signal that ended it
};

class ProcessOs {
 public:
  virtual ~ProcessOs() = default;
  // Starts the process as the leader of a new process group; returns its pid. The error names
  // what failed (log file, working directory, cgroup, exec).
  virtual Result<int> Spawn(const SpawnRequest& request) = 0;
  // Sends `sig` to the process group `pgid`.
  virtual Status SignalGroup(int pgid, int sig) = 0;
  // Returns the exit of `pid` when it has ended (and reaps it, after killing what is left of its
  // group), or nullopt while it runs.
  virtual std::optional<ProcessExit> TryWait(int pid) = 0;
};

// The real OS: fork/exec, kill, waitid/waitpid.
class RealProcessOs final : public ProcessOs {
 public:
  Result<int> Spawn(const SpawnRequest& request) override;
  Status SignalGroup(int pgid, int sig) override;
  std::optional<ProcessExit> TryWait(int pid) override;
  // A process-wide instance.
  static RealProcessOs& Get();
};

}  // namespace abacus::agent
