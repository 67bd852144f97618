// ProcessRuntime: runs tasks as local process groups — working directory, environment with
// device visibility, stdout/stderr to files, cgroup limits — and records how they end (exit
// code, signal, OOM kill). Stop is graceful: the checkpoint signal to the whole group, then
// SIGKILL once the grace period has passed on the injected clock.
//
// The agent loop calls Poll() (on SIGCHLD or a short timer): it reaps finished tasks and
// escalates stops whose grace has run out. All methods are thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "agent/runtime/cgroup.h"
#include "agent/runtime/env.h"
#include "agent/runtime/process_os.h"
#include "agent/runtime/task_user.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"

namespace abacus::agent {

// What to run.
struct TaskSpec {
  std::string task_id;                        // [A-Za-z0-9._-]+, unique among live tasks
  std::vector<std::string> command;           // argv; argv[0] searched on the task's PATH
  std::map<std::string, std::string> env;     // task variables (device variables override them)
  std::string work_dir;                       // empty: <root>/<task id>/work
  std::vector<DeviceGrant> devices;
  int64_t cpu_milli = 0;                      // 0: no CPU limit
  int64_t memory_bytes = 0;                   // 0: no memory limit
  // Run as this user (task_user.h): the task directory is then <root>/<task id> mode 0711 owned
  // by the agent, the work directory owned by the user with mode 0700, the logs the agent's with
  // mode 0600. nullopt: the agent's own user (docs/agent.md, "Task users").
  std::optional<TaskUser> user = std::nullopt;
};

enum class TaskPhase { kRunning, kStopping, kExited };
// Returns "Running", "Stopping" or "Exited".
std::string_view TaskPhaseName(TaskPhase phase);

// How a task ended.
struct TaskExit {
  int exit_code = 0;        // valid when signal == 0
  int signal = 0;           // the signal that ended it (SIGKILL for an OOM kill)
  bool oom_killed = false;  // the kernel killed it for exceeding its memory limit
  bool stopped = false;     // it ended after Stop()
  bool killed_after_grace = false;  // Stop() had to escalate to SIGKILL
  bool Succeeded() const { return signal == 0 && exit_code == 0 && !oom_killed; }
  // "exited 0", "exited 3", "killed by SIGTERM", "OOM-killed", "killed by SIGKILL after grace".
  std::string Describe() const;
};

struct TaskRecord {
  std::string task_id;
  int pid = 0;  // also the process group id
  TaskPhase phase = TaskPhase::kRunning;
  Time started_at{};
  Time finished_at{};  // when Poll() saw it end
  std::optional<TaskExit> exit;
  std::string work_dir, stdout_path, stderr_path;
  CgroupMode cgroup = CgroupMode::kNone;
  std::vector<std::string> warnings;  // limits not enforced, …
  CgroupUsage final_usage;            // at exit, when a cgroup measured it
};

enum class LogStream { kStdout, kStderr };

struct RuntimeOptions {
  std::string root_dir;                         // <root>/<task id>/{stdout.log,stderr.log,work}
  const CgroupManager* cgroups = nullptr;       // nullptr or mode none: no limits (warning)
  std::vector<std::string> node_vendors;        // vendors hidden from tasks not granted them
  bool inherit_environment = true;              // start from the agent's environment
};

class ProcessRuntime {
 public:
  ProcessRuntime(RuntimeOptions options, const Clock& clock, ProcessOs& os = RealProcessOs::Get());
  // Kills (SIGKILL) and reaps every task still running.
  ~ProcessRuntime();
  ProcessRuntime(const ProcessRuntime&) = delete;
  ProcessRuntime& operator=(const ProcessRuntime&) = delete;

  // Starts `spec`. InvalidArgument for a bad id or empty command, AlreadyExists for a live id,
  // NotFound when the command is not on PATH, FailedPrecondition when the process cannot start
  // (working directory, exec). Limits that cannot be applied only add a warning.
  Result<TaskRecord> Start(const TaskSpec& spec);

  // Sends `signal` to the task's process group and arms SIGKILL after `grace` (0: at the next
  // Poll). NotFound for an unknown task; OK when it already ended.
  Status Stop(const std::string& task_id, int signal, Duration grace);

  // Reaps ended tasks and escalates expired stops. Returns the tasks that ended in this call.
  std::vector<TaskRecord> Poll();

  // The record of a task (live or ended and not yet removed).
  Result<TaskRecord> Get(const std::string& task_id) const;
  std::vector<TaskRecord> List() const;

  // Returns at most the last `max_bytes` of a task's stdout or stderr (whole lines where the
  // cut allows). NotFound for an unknown task.
  Result<std::string> ReadLog(const std::string& task_id, LogStream stream, size_t max_bytes = 64 * 1024) const;

  // CPU time and memory of a live task (cgroup), or of its leader process (procfs) without one.
  Result<CgroupUsage> Usage(const std::string& task_id) const;

  // Forgets an ended task (logs stay on disk). FailedPrecondition while it runs.
  Status Remove(const std::string& task_id);

 private:
  struct Entry {
    TaskRecord record;
    std::unique_ptr<TaskCgroup> cgroup;
    std::optional<Time> kill_at;
    bool kill_sent = false;
  };
  void FinishLocked(Entry& e, const ProcessExit& exit) REQUIRES(mu_);

  RuntimeOptions options_;
  const Clock& clock_;
  ProcessOs& os_;
  mutable Mutex mu_;
  std::map<std::string, Entry> tasks_ GUARDED_BY(mu_);
};

}  // namespace abacus::agent
