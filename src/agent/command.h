// Running short external commands (device tools such as npu-smi, exec probes) with a timeout,
// behind a CommandRunner seam so tests replay recorded outputs instead.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/runtime/task_user.h"
#include "common/status.h"

namespace abacus::agent {

// What a finished command left behind.
struct CommandOutput {
  int exit_code = 0;       // valid when signal == 0
  int signal = 0;          // the signal that ended it, 0 when it exited
  bool timed_out = false;  // killed by RunCommand after the timeout
  std::string out;         // stdout (and stderr when merged)
  bool ok() const { return signal == 0 && !timed_out && exit_code == 0; }
};

// Returns the absolute path of `name` found on `path_env` (a PATH value; the process PATH when
// empty), or NotFound. A name containing '/' is returned as is when it is executable. With
// `user`, only a file that user may execute counts (UserMayExecute): a root agent skips, say, a
// python3 under /root for a task user.
Result<std::string> FindExecutable(const std::string& name, const std::string& path_env = "",
                                   const std::optional<TaskUser>& user = std::nullopt);

// True when `user` (no supplementary groups) may execute `path`: the file and every directory
// above it grant it x by the owner, group or other bits that apply to it.
bool UserMayExecute(const std::string& path, const TaskUser& user);

// Runs `argv` (argv[0] searched on PATH) with stdin from /dev/null, capturing stdout (and stderr
// when `merge_stderr`), for at most `timeout`; on timeout the process group is killed and
// `timed_out` set. NotFound when argv[0] is not on PATH; Internal when it cannot be started.
// Output beyond 4 MiB is dropped. With `user` the command runs as that user (BecomeTaskUser);
// when the switch fails it does not run and exits 126.
Result<CommandOutput> RunCommand(const std::vector<std::string>& argv,
                                 std::chrono::milliseconds timeout, bool merge_stderr = false,
                                 const std::optional<TaskUser>& user = std::nullopt);

// The seam device discoverers use to run their vendor tools.
class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  // Runs `argv`. NotFound means "the tool is not installed", which callers treat as "no such
  // devices"; any other error is a real failure.
  virtual Result<CommandOutput> Run(const std::vector<std::string>& argv) = 0;
};

// Runs commands for real with a fixed timeout.
class SystemCommandRunner final : public CommandRunner {
 public:
  explicit SystemCommandRunner(std::chrono::milliseconds timeout = std::chrono::seconds(20))
      : timeout_(timeout) {}
  Result<CommandOutput> Run(const std::vector<std::string>& argv) override;

 private:
  std::chrono::milliseconds timeout_;
};

// Replays canned outputs keyed by the command line joined with single spaces; a command with no
// entry is NotFound (tool missing). For tests and for `--fake-devices` style dry runs.
class ReplayCommandRunner final : public CommandRunner {
 public:
  // Registers the output of `command_line`.
  void Set(const std::string& command_line, CommandOutput output) {
    outputs_[command_line] = std::move(output);
  }
  // Registers stdout `out` with exit code 0.
  void SetOutput(const std::string& command_line, std::string out) {
    outputs_[command_line] = CommandOutput{0, 0, false, std::move(out)};
  }
  Result<CommandOutput> Run(const std::vector<std::string>& argv) override;
  // The command lines run so far, in order.
  const std::vector<std::string>& calls() const { return calls_; }

 private:
  std::map<std::string, CommandOutput> outputs_;
  std::vector<std::string> calls_;
};

// Joins argv with single spaces (for messages and ReplayCommandRunner keys).
std::string JoinArgv(const std::vector<std::string>& argv);

// Reads a whole file; NotFound when it does not exist.
Result<std::string> ReadFileToString(const std::string& path);

}  // namespace abacus::agent
