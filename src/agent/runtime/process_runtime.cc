#include "agent/runtime/process_runtime.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "agent/command.h"
#include "common/log.h"
#include "common/mutex.h"
#include "common/process_state.h"
#include "wire/task_phase.h"

extern char** environ;

namespace abacus::agent {

namespace {

bool ValidTaskId(const std::string& id) {
  if (id.empty() || id.size() > 128 || id == "." || id == "..") return false;
  for (char c : id) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) return false;
  }
  return true;
}

std::string SignalName(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

}  // namespace

std::string_view TaskPhaseName(TaskPhase phase) {
  // The names are the protocol's (wire/task_phase.h): a process the agent runs is never Lost.
  switch (phase) {
    case TaskPhase::kRunning: return wire::TaskPhaseName(wire::TaskPhase::kRunning);
    case TaskPhase::kStopping: return wire::TaskPhaseName(wire::TaskPhase::kStopping);
    case TaskPhase::kExited: return wire::TaskPhaseName(wire::TaskPhase::kExited);
  }
  return wire::TaskPhaseName(wire::TaskPhase::kExited);
}

std::string TaskExit::Describe() const {
  if (oom_killed) return "OOM-killed";
  if (signal != 0) return "killed by " + SignalName(signal) + (killed_after_grace ? " after grace" : "");
  return "exited " + std::to_string(exit_code);
}

ProcessRuntime::ProcessRuntime(RuntimeOptions options, const Clock& clock, ProcessOs& os)
    : options_(std::move(options)), clock_(clock), os_(os) {}

ProcessRuntime::~ProcessRuntime() {
  MutexLock lock(mu_);
  for (auto& [id, e] : tasks_) {
    if (e.record.phase == TaskPhase::kExited) continue;
    (void)os_.SignalGroup(e.record.pid, SIGKILL);
    for (int i = 0; i < 500; ++i) {
      auto exit = os_.TryWait(e.record.pid);
      if (exit) {
        FinishLocked(e, *exit);
        break;
      }
      ::usleep(1000);
    }
  }
}

Result<TaskRecord> ProcessRuntime::Start(const TaskSpec& spec) {
  // 1) Validate.
  if (!ValidTaskId(spec.task_id)) return InvalidArgument("task id '" + spec.task_id + "' must be [A-Za-z0-9._-]+");
  if (spec.command.empty() || spec.command.front().empty()) return InvalidArgument("task " + spec.task_id + ": empty command");
  {
    MutexLock lock(mu_);
    auto it = tasks_.find(spec.task_id);
    if (it != tasks_.end() && it->second.record.phase != TaskPhase::kExited) {
      return AlreadyExists("task " + spec.task_id + " is already running");
    }
  }

  // 2) Directories and log files.
  TaskRecord rec;
  rec.task_id = spec.task_id;
  std::string task_dir = options_.root_dir + "/" + spec.task_id;
  rec.work_dir = spec.work_dir.empty() ? task_dir + "/work" : spec.work_dir;
  rec.stdout_path = task_dir + "/stdout.log";
  rec.stderr_path = task_dir + "/stderr.log";
  std::error_code ec;
  std::filesystem::create_directories(rec.work_dir, ec);
  if (ec) return FailedPrecondition("task " + spec.task_id + ": cannot create " + rec.work_dir + ": " + ec.message());
  std::filesystem::create_directories(task_dir, ec);
  if (ec) return FailedPrecondition("task " + spec.task_id + ": cannot create " + task_dir + ": " + ec.message());
  if (spec.user) {
    // Other task users may pass through the task directory (0711) but open nothing in it: the
    // work directory is the task's alone, the logs and the pid file stay the agent's.
    if (::chmod(task_dir.c_str(), 0711) != 0) {
      return FailedPrecondition("task " + spec.task_id + ": cannot set mode 0711 on " + task_dir + ": " + std::strerror(errno));
    }
    if (::lchown(rec.work_dir.c_str(), spec.user->uid, spec.user->gid) != 0 || ::chmod(rec.work_dir.c_str(), 0700) != 0) {
      return FailedPrecondition("task " + spec.task_id + ": cannot give " + rec.work_dir + " to uid " +
                                std::to_string(spec.user->uid) + ": " + std::strerror(errno));
    }
  }

  // 3) Environment: the agent's, then the task's, then device visibility (which wins).
  std::map<std::string, std::string> env;
  if (options_.inherit_environment) {
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      std::string kv(*e);
      size_t eq = kv.find('=');
      if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
  }
  for (const auto& [k, v] : spec.env) env[k] = v;
  for (const auto& [k, v] : DeviceEnvironment(spec.devices, options_.node_vendors)) env[k] = v;
  env["ABACUS_TASK_ID"] = spec.task_id;
  // A task user cannot use the agent's home: its own is its work directory, unless it names one.
  if (spec.user && spec.env.count("HOME") == 0) {
    std::error_code home_ec;
    auto home = std::filesystem::absolute(rec.work_dir, home_ec);
    env["HOME"] = home_ec ? rec.work_dir : home.lexically_normal().string();
  }
  auto path = env.find("PATH");
  ABACUS_ASSIGN_OR_RETURN(std::string exe,
                          FindExecutable(spec.command.front(), path != env.end() ? path->second : "", spec.user));

  // 4) Limits: a cgroup when one can be made, a warning otherwise.
  std::unique_ptr<TaskCgroup> cgroup;
  bool wants_limits = spec.cpu_milli > 0 || spec.memory_bytes > 0;
  if (options_.cgroups != nullptr && options_.cgroups->mode() != CgroupMode::kNone) {
    auto made = options_.cgroups->Create(spec.task_id, {spec.cpu_milli, spec.memory_bytes});
    if (made.ok()) {
      cgroup = std::move(*made);
      if (!options_.cgroups->warning().empty() && wants_limits) rec.warnings.push_back(options_.cgroups->warning());
    } else {
      rec.warnings.push_back("limits not enforced: " + made.status().message());
    }
  } else if (wants_limits) {
    rec.warnings.push_back(options_.cgroups != nullptr ? options_.cgroups->warning()
                                                       : std::string("limits not enforced: no cgroup manager"));
  }
  for (const auto& w : rec.warnings) ABACUS_LOG_WARN("task {}: {}", spec.task_id, w);

  // 5) Spawn.
  SpawnRequest req;
  req.executable = exe;
  req.argv = spec.command;
  for (const auto& [k, v] : env) req.env.push_back(k + "=" + v);
  req.work_dir = rec.work_dir;
  req.stdout_path = rec.stdout_path;
  req.stderr_path = rec.stderr_path;
  if (cgroup) req.cgroup_procs = cgroup->ProcsFiles();
  req.user = spec.user;
  auto pid = os_.Spawn(req);
  if (!pid.ok()) {
    if (cgroup) (void)cgroup->Remove();
    return pid.status().WithContext("task " + spec.task_id);
  }
  rec.pid = *pid;
  rec.started_at = clock_.Now();
  rec.cgroup = cgroup ? cgroup->mode() : CgroupMode::kNone;

  MutexLock lock(mu_);
  Entry& e = tasks_[spec.task_id];
  e = Entry{};
  e.record = rec;
  e.cgroup = std::move(cgroup);
  return rec;
}

Status ProcessRuntime::Stop(const std::string& task_id, int signal, Duration grace) {
  MutexLock lock(mu_);
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return NotFound("no task " + task_id);
  Entry& e = it->second;
  if (e.record.phase == TaskPhase::kExited) return Status::OK();
  ABACUS_RETURN_IF_ERROR(os_.SignalGroup(e.record.pid, signal));
  Time kill_at = clock_.Now() + grace;
  // A second Stop may shorten the grace, never extend it.
  if (!e.kill_at || kill_at < *e.kill_at) e.kill_at = kill_at;
  e.record.phase = TaskPhase::kStopping;
  return Status::OK();
}

std::vector<TaskRecord> ProcessRuntime::Poll() {
  MutexLock lock(mu_);
  std::vector<TaskRecord> ended;
  Time now = clock_.Now();
  for (auto& [id, e] : tasks_) {
    if (e.record.phase == TaskPhase::kExited) continue;
    auto exit = os_.TryWait(e.record.pid);
    if (!exit && e.kill_at && now >= *e.kill_at && !e.kill_sent) {
      (void)os_.SignalGroup(e.record.pid, SIGKILL);
      e.kill_sent = true;
      // Give the kernel a moment so the kill is usually seen in this same poll.
      for (int i = 0; i < 50 && !exit; ++i) {
        ::usleep(1000);
        exit = os_.TryWait(e.record.pid);
      }
    }
    if (!exit) continue;
    FinishLocked(e, *exit);
    ended.push_back(e.record);
  }
  return ended;
}

void ProcessRuntime::FinishLocked(Entry& e, const ProcessExit& exit) {
  TaskExit out;
  out.exit_code = exit.exit_code;
  out.signal = exit.signal;
  out.stopped = e.record.phase == TaskPhase::kStopping;
  out.killed_after_grace = e.kill_sent && exit.signal == SIGKILL;
  if (e.cgroup) {
    out.oom_killed = !e.kill_sent && e.cgroup->OomKilled(exit.signal == SIGKILL);
    if (auto usage = e.cgroup->ReadUsage(); usage.ok()) e.record.final_usage = *usage;
    if (Status s = e.cgroup->Remove(); !s.ok()) ABACUS_LOG_WARN("task {}: {}", e.record.task_id, s.message());
    e.cgroup.reset();
  }
  e.record.exit = out;
  e.record.phase = TaskPhase::kExited;
  e.record.finished_at = clock_.Now();
}

Result<TaskRecord> ProcessRuntime::Get(const std::string& task_id) const {
  MutexLock lock(mu_);
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return NotFound("no task " + task_id);
  return it->second.record;
}

std::vector<TaskRecord> ProcessRuntime::List() const {
  MutexLock lock(mu_);
  std::vector<TaskRecord> out;
  for (const auto& [id, e] : tasks_) out.push_back(e.record);
  return out;
}

Result<std::string> ProcessRuntime::ReadLog(const std::string& task_id, LogStream stream, size_t max_bytes) const {
  std::string path;
  {
    MutexLock lock(mu_);
    auto it = tasks_.find(task_id);
    if (it == tasks_.end()) return NotFound("no task " + task_id);
    path = stream == LogStream::kStdout ? it->second.record.stdout_path : it->second.record.stderr_path;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::string();  // nothing written yet
  in.seekg(0, std::ios::end);
  auto size = static_cast<size_t>(in.tellg());
  size_t start = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string out(size - start, '\0');
  in.read(out.data(), static_cast<std::streamsize>(out.size()));
  out.resize(static_cast<size_t>(in.gcount()));
  if (start > 0) {
    size_t nl = out.find('\n');
    if (nl != std::string::npos && nl + 1 < out.size()) out.erase(0, nl + 1);
  }
  return out;
}

Result<CgroupUsage> ProcessRuntime::Usage(const std::string& task_id) const {
  int pid = 0;
  {
    MutexLock lock(mu_);
    auto it = tasks_.find(task_id);
    if (it == tasks_.end()) return NotFound("no task " + task_id);
    if (it->second.record.phase == TaskPhase::kExited) return it->second.record.final_usage;
    if (it->second.cgroup) return it->second.cgroup->ReadUsage();
    pid = it->second.record.pid;
  }
  // No cgroup: the leader's own CPU time and resident memory from /proc/<pid>/stat.
  auto stat = ReadProcStat(pid);
  if (!stat) return Unavailable("no usage for task " + task_id);
  long ticks = ::sysconf(_SC_CLK_TCK);
  CgroupUsage u;
  u.cpu_usage_usec = (stat->utime + stat->stime) * 1'000'000 / (ticks > 0 ? ticks : 100);
  u.memory_bytes = stat->rss_pages * ::sysconf(_SC_PAGESIZE);
  return u;
}

Status ProcessRuntime::Remove(const std::string& task_id) {
  MutexLock lock(mu_);
  auto it = tasks_.find(task_id);
  if (it == tasks_.end()) return NotFound("no task " + task_id);
  if (it->second.record.phase != TaskPhase::kExited) return FailedPrecondition("task " + task_id + " is still running");
  tasks_.erase(it);
  return Status::OK();
}

}  // namespace abacus::agent
