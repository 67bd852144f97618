// CPU and memory limits for tasks through cgroups: v2 when the unified hierarchy has the cpu and
// memory controllers and the agent may create cgroups under its own; else v1 when the cpu and
// memory hierarchies are writable (cpuacct, when separate, for CPU usage); else none, with a
// warning — limits are then not enforced, which is not a failure.
//
// Layout: <mount><agent's own cgroup>/<parent>/<task id>, parent "abacus" by default.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace abacus::agent {

enum class CgroupMode { kNone, kV1, kV2 };
// Returns "none", "v1" or "v2".
std::string_view CgroupModeName(CgroupMode mode);

struct CgroupLimits {
  int64_t cpu_milli = 0;     // 0: no CPU limit (quota = cpu_milli × period / 1000)
  int64_t memory_bytes = 0;  // 0: no memory limit
};

struct CgroupUsage {
  int64_t cpu_usage_usec = 0;  // cumulative CPU time of the task's processes
  int64_t memory_bytes = 0;    // current memory use
};

struct CgroupOptions {
  std::string root = "/sys/fs/cgroup";
  std::string parent = "abacus";
  std::string self_cgroup_file = "/proc/self/cgroup";  // where the agent itself sits
  int64_t cpu_period_usec = 100000;
};

// One task's cgroup (in each hierarchy under v1).
class TaskCgroup {
 public:
  TaskCgroup(CgroupMode mode, std::vector<std::string> dirs, std::string cpu_dir, std::string cpuacct_dir,
             std::string memory_dir)
      : mode_(mode), dirs_(std::move(dirs)), cpu_dir_(std::move(cpu_dir)),
        cpuacct_dir_(std::move(cpuacct_dir)), memory_dir_(std::move(memory_dir)) {}
  CgroupMode mode() const { return mode_; }
  // The cgroup.procs files a new task process writes its pid into (before exec).
  std::vector<std::string> ProcsFiles() const;
  // Reads CPU time and memory use.
  Result<CgroupUsage> ReadUsage() const;
  // Returns true when the kernel OOM-killed a process of this cgroup: v2 memory.events
  // oom_kill > 0; v1 memory.oom_control oom_kill > 0, or on kernels without that counter
  // memory.failcnt > 0 together with `ended_by_sigkill`.
  bool OomKilled(bool ended_by_sigkill) const;
  // Removes the cgroup directories (its processes must be gone).
  Status Remove() const;
  const std::vector<std::string>& dirs() const { return dirs_; }

 private:
  CgroupMode mode_;
  std::vector<std::string> dirs_;  // every directory created, in creation order
  std::string cpu_dir_, cpuacct_dir_, memory_dir_;
};

class CgroupManager {
 public:
  // Probes `options.root` and picks v2, v1 or none (see the file comment).
  static std::unique_ptr<CgroupManager> Detect(const CgroupOptions& options = {});

  CgroupMode mode() const { return mode_; }
  // Where task cgroups go ("v1 cpu=/sys/fs/cgroup/cpu/abacus memory=…").
  const std::string& description() const { return description_; }
  // Why limits are not (fully) enforced; empty when they are.
  const std::string& warning() const { return warning_; }

  // Creates the cgroup of `task_id` with `limits`. FailedPrecondition in mode none; the
  // underlying error when a directory or limit cannot be written.
  Result<std::unique_ptr<TaskCgroup>> Create(const std::string& task_id, const CgroupLimits& limits) const;
  // Removes the parent directories when empty (tests, uninstall).
  void RemoveParents() const;

 private:
  CgroupMode mode_ = CgroupMode::kNone;
  CgroupOptions options_;
  std::string v2_parent_;
  std::string cpu_parent_, cpuacct_parent_, memory_parent_;  // v1; empty when unavailable
  std::string description_, warning_;
};

}  // namespace abacus::agent
