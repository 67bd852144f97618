#include "agent/runtime/cgroup.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "agent/command.h"
#include "agent/discover/text.h"

namespace abacus::agent {

namespace {

bool Exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

Status WriteFile(const std::string& path, const std::string& value) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Internal("cannot open " + path + ": " + std::strerror(errno));
  ssize_t n = ::write(fd, value.data(), value.size());
  int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(value.size())) return Internal("cannot write '" + value + "' to " + path + ": " + std::strerror(err));
  return Status::OK();
}

// mkdir -p; returns false when the leaf cannot be created.
bool MakeDirs(const std::string& path) {
  if (Exists(path)) return ::access(path.c_str(), W_OK) == 0;
  size_t pos = 0;
  while ((pos = path.find('/', pos + 1)) != std::string::npos) {
    std::string prefix = path.substr(0, pos);
    if (!Exists(prefix) && ::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  return (::mkdir(path.c_str(), 0755) == 0 || errno == EEXIST) && ::access(path.c_str(), W_OK) == 0;
}

// "oom_kill 3" style lines.
int64_t ReadKey(const std::string& path, std::string_view key) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return -1;
  for (auto line : SplitLines(*text)) {
    auto words = SplitWords(line);
    long long v = 0;
    if (words.size() == 2 && words[0] == key && ParseUint(words[1], v)) return v;
  }
  return -1;
}

int64_t ReadNumber(const std::string& path) {
  auto text = ReadFileToString(path);
  long long v = 0;
  if (!text.ok() || !ParseUint(TrimText(*text), v)) return -1;
  return v;
}

// /proc/self/cgroup: controller → path ("" key for the v2 line).
std::map<std::string, std::string> ReadSelfCgroups(const std::string& file) {
  std::map<std::string, std::string> out;
  auto text = ReadFileToString(file);
  if (!text.ok()) return out;
  for (auto line : SplitLines(*text)) {
    size_t c1 = line.find(':');
    size_t c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
    if (c2 == std::string_view::npos) continue;
    std::string path(line.substr(c2 + 1));
    if (path == "/") path.clear();
    std::string_view controllers = line.substr(c1 + 1, c2 - c1 - 1);
    if (controllers.empty()) {
      out[""] = path;
      continue;
    }
    for (auto c : SplitTrim(controllers, ',')) out[std::string(c)] = path;
  }
  return out;
}

bool HasWord(const std::string& text, std::string_view word) {
  for (auto w : SplitWords(text)) {
    if (w == word) return true;
  }
  return false;
}

}  // namespace

std::string_view CgroupModeName(CgroupMode mode) {
  switch (mode) {
    case CgroupMode::kNone: return "none";
    case CgroupMode::kV1: return "v1";
    case CgroupMode::kV2: return "v2";
  }
  return "none";
}

std::unique_ptr<CgroupManager> CgroupManager::Detect(const CgroupOptions& options) {
  auto m = std::unique_ptr<CgroupManager>(new CgroupManager());
  m->options_ = options;
  auto self = ReadSelfCgroups(options.self_cgroup_file);
  std::string why_not_v2;

  // 1) v2: the unified mount at the root (pure v2) or at root/unified (hybrid).
  std::string unified;
  if (Exists(options.root + "/cgroup.controllers")) {
    unified = options.root;
  } else if (Exists(options.root + "/unified/cgroup.controllers")) {
    unified = options.root + "/unified";
  }
  if (!unified.empty()) {
    std::string base = unified + self[""];
    auto controllers = ReadFileToString(base + "/cgroup.controllers");
    if (!controllers.ok() || !HasWord(*controllers, "cpu") || !HasWord(*controllers, "memory")) {
      why_not_v2 = "cgroup v2 at " + unified + " has no cpu and memory controllers for " + (base.empty() ? "/" : base);
    } else {
      std::string parent = base + "/" + options.parent;
      auto subtree = ReadFileToString(base + "/cgroup.subtree_control");
      bool enabled = subtree.ok() && HasWord(*subtree, "cpu") && HasWord(*subtree, "memory");
      if (!enabled) enabled = WriteFile(base + "/cgroup.subtree_control", "+cpu +memory").ok();
      if (enabled && MakeDirs(parent) && WriteFile(parent + "/cgroup.subtree_control", "+cpu +memory").ok()) {
        m->mode_ = CgroupMode::kV2;
        m->v2_parent_ = parent;
        m->description_ = "v2 " + parent;
        return m;
      }
      why_not_v2 = "cgroup v2 at " + base + " is not writable or its controllers cannot be delegated";
    }
  }

  // 2) v1: separate hierarchies per controller.
  auto hierarchy = [&](const std::string& controller) -> std::string {
    std::vector<std::string> names = {controller};
    if (controller == "cpu" || controller == "cpuacct") {
      names.push_back("cpu,cpuacct");
      names.push_back("cpuacct,cpu");
    }
    for (const auto& name : names) {
      std::string mount = options.root + "/" + name;
      if (!Exists(mount + "/cgroup.procs") && !Exists(mount + "/tasks")) continue;
      std::string parent = mount + self[controller] + "/" + options.parent;
      return MakeDirs(parent) ? parent : "";
    }
    return "";
  };
  m->cpu_parent_ = hierarchy("cpu");
  m->memory_parent_ = hierarchy("memory");
  m->cpuacct_parent_ = hierarchy("cpuacct");
  if (!m->cpu_parent_.empty() || !m->memory_parent_.empty()) {
    m->mode_ = CgroupMode::kV1;
    m->description_ = "v1 cpu=" + (m->cpu_parent_.empty() ? "-" : m->cpu_parent_) +
                      " memory=" + (m->memory_parent_.empty() ? "-" : m->memory_parent_);
    if (m->cpu_parent_.empty()) m->warning_ = "cgroup v1 cpu hierarchy not writable: CPU limits are not enforced";
    if (m->memory_parent_.empty()) m->warning_ = "cgroup v1 memory hierarchy not writable: memory limits are not enforced";
    return m;
  }

  // 3) Neither.
  m->description_ = "none";
  m->warning_ = "no writable cgroup hierarchy under " + options.root +
                (why_not_v2.empty() ? std::string() : " (" + why_not_v2 + ")") +
                ": CPU and memory limits are not enforced and OOM kills are not detected";
  return m;
}

Result<std::unique_ptr<TaskCgroup>> CgroupManager::Create(const std::string& task_id, const CgroupLimits& limits) const {
  if (mode_ == CgroupMode::kNone) return FailedPrecondition("cgroups unavailable: " + warning_);
  std::string quota = std::to_string(limits.cpu_milli * options_.cpu_period_usec / 1000);
  std::string period = std::to_string(options_.cpu_period_usec);
  std::vector<std::string> dirs;
  auto make = [&](const std::string& parent) -> Result<std::string> {
    std::string dir = parent + "/" + task_id;
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return Internal("cannot create cgroup " + dir + ": " + std::strerror(errno));
    }
    dirs.push_back(dir);
    return dir;
  };
  auto fail = [&](Status s) {
    TaskCgroup(mode_, dirs, "", "", "").Remove().ok();
    return s;
  };
  if (mode_ == CgroupMode::kV2) {
    auto dir = make(v2_parent_);
    if (!dir.ok()) return dir.status();
    if (limits.cpu_milli > 0) {
      if (Status s = WriteFile(*dir + "/cpu.max", quota + " " + period); !s.ok()) return fail(s);
    }
    if (limits.memory_bytes > 0) {
      if (Status s = WriteFile(*dir + "/memory.max", std::to_string(limits.memory_bytes)); !s.ok()) return fail(s);
      (void)WriteFile(*dir + "/memory.swap.max", "0");  // absent without swap accounting
    }
    return std::make_unique<TaskCgroup>(mode_, dirs, *dir, *dir, *dir);
  }
  std::string cpu_dir, cpuacct_dir, memory_dir;
  if (!cpu_parent_.empty()) {
    auto dir = make(cpu_parent_);
    if (!dir.ok()) return fail(dir.status());
    cpu_dir = *dir;
    if (limits.cpu_milli > 0) {
      if (Status s = WriteFile(cpu_dir + "/cpu.cfs_period_us", period); !s.ok()) return fail(s);
      if (Status s = WriteFile(cpu_dir + "/cpu.cfs_quota_us", quota); !s.ok()) return fail(s);
    }
  }
  if (!cpuacct_parent_.empty() && cpuacct_parent_ != cpu_parent_) {
    auto dir = make(cpuacct_parent_);
    if (!dir.ok()) return fail(dir.status());
    cpuacct_dir = *dir;
  } else {
    cpuacct_dir = cpu_dir;
  }
  if (!memory_parent_.empty()) {
    auto dir = make(memory_parent_);
    if (!dir.ok()) return fail(dir.status());
    memory_dir = *dir;
    if (limits.memory_bytes > 0) {
      std::string bytes = std::to_string(limits.memory_bytes);
      if (Status s = WriteFile(memory_dir + "/memory.limit_in_bytes", bytes); !s.ok()) return fail(s);
      // Memory+swap at the same limit, so the task cannot swap past it (absent without swap
      // accounting).
      (void)WriteFile(memory_dir + "/memory.memsw.limit_in_bytes", bytes);
    }
  }
  return std::make_unique<TaskCgroup>(mode_, dirs, cpu_dir, cpuacct_dir, memory_dir);
}

void CgroupManager::RemoveParents() const {
  for (const auto& p : {v2_parent_, cpu_parent_, cpuacct_parent_, memory_parent_}) {
    if (!p.empty()) ::rmdir(p.c_str());
  }
}

std::vector<std::string> TaskCgroup::ProcsFiles() const {
  std::vector<std::string> out;
  for (const auto& d : dirs_) out.push_back(d + "/cgroup.procs");
  return out;
}

Result<CgroupUsage> TaskCgroup::ReadUsage() const {
  CgroupUsage u;
  if (mode_ == CgroupMode::kV2) {
    int64_t usec = ReadKey(cpu_dir_ + "/cpu.stat", "usage_usec");
    int64_t mem = ReadNumber(memory_dir_ + "/memory.current");
    if (usec < 0 && mem < 0) return Unavailable("cannot read usage of " + cpu_dir_);
    u.cpu_usage_usec = usec > 0 ? usec : 0;
    u.memory_bytes = mem > 0 ? mem : 0;
    return u;
  }
  int64_t ns = cpuacct_dir_.empty() ? -1 : ReadNumber(cpuacct_dir_ + "/cpuacct.usage");
  int64_t mem = memory_dir_.empty() ? -1 : ReadNumber(memory_dir_ + "/memory.usage_in_bytes");
  if (ns < 0 && mem < 0) return Unavailable("cannot read cgroup v1 usage");
  u.cpu_usage_usec = ns > 0 ? ns / 1000 : 0;
  u.memory_bytes = mem > 0 ? mem : 0;
  return u;
}

bool TaskCgroup::OomKilled(bool ended_by_sigkill) const {
  if (memory_dir_.empty()) return false;
  if (mode_ == CgroupMode::kV2) return ReadKey(memory_dir_ + "/memory.events", "oom_kill") > 0;
  int64_t kills = ReadKey(memory_dir_ + "/memory.oom_control", "oom_kill");
  if (kills >= 0) return kills > 0;
  return ended_by_sigkill && ReadNumber(memory_dir_ + "/memory.failcnt") > 0;
}

Status TaskCgroup::Remove() const {
  Status result;
  for (auto it = dirs_.rbegin(); it != dirs_.rend(); ++it) {
    // A just-reaped task may linger for a moment in the cgroup; retry briefly.
    int rc = -1;
    for (int attempt = 0; attempt < 50; ++attempt) {
      rc = ::rmdir(it->c_str());
      if (rc == 0 || errno == ENOENT || errno != EBUSY) break;
      ::usleep(2000);
    }
    if (rc != 0 && errno != ENOENT && result.ok()) {
      result = Internal("cannot remove cgroup " + *it + ": " + std::strerror(errno));
    }
  }
  return result;
}

}  // namespace abacus::agent
