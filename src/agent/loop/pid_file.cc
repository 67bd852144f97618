#include "agent/loop/pid_file.h"

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/file.h"
#include "common/log.h"
#include "common/process_state.h"

namespace abacus::agent {

namespace fs = std::filesystem;

Status WritePidFile(const std::string& task_dir, int pid) {
  std::string path = task_dir + "/pid";
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << pid << " " << ProcessStartTime(pid) << "\n";
    if (!out.flush()) return Unavailable("cannot write " + tmp);
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return Unavailable("cannot write " + path + ": " + ec.message());
  return Status::OK();
}

void RemovePidFile(const std::string& task_dir) {
  std::error_code ec;
  fs::remove(task_dir + "/pid", ec);
}

long long ProcessStartTime(int pid) {
  auto stat = ReadProcStat(pid);
  return stat ? stat->start_time : -1;
}

std::vector<TaskStatus> KillOrphans(const std::string& tasks_dir, ProcessOs& os, Time now) {
  std::vector<TaskStatus> lost;
  std::error_code ec;
  if (!fs::is_directory(tasks_dir, ec)) return lost;
  for (const auto& entry : fs::directory_iterator(tasks_dir, ec)) {
    std::string pid_path = entry.path().string() + "/pid";
    auto text = ReadFile(pid_path, "pid file");
    if (!text.ok()) continue;
    std::istringstream in(*text);
    long long pid = 0, start = -1;
    in >> pid >> start;
    TaskStatus s;
    s.task_id = entry.path().filename().string();
    s.phase = ReportedPhase::kLost;
    s.pid = static_cast<int>(pid);
    if (pid <= 1) {
      s.message = "agent restarted; unreadable pid file";
    } else {
      long long now_start = ProcessStartTime(static_cast<int>(pid));
      if (now_start >= 0 && now_start != start) {
        s.message = "agent restarted while the task ran; its pid now belongs to another process, left alone";
      } else {
        // A zombie ran no more: its parent, the previous agent, is gone and nothing reaped it
        // (a container's pid 1 that reaps nothing).
        const bool ran = now_start >= 0 && !ProcessExited(static_cast<pid_t>(pid));
        Status killed = os.SignalGroup(static_cast<int>(pid), SIGKILL);
        s.message = killed.ok() ? "agent restarted while the task ran; killed its process group"
                                : "agent restarted while the task ran; " + killed.message();
        if (ran && killed.ok()) s.finished_at = now;  // it ran until this kill
      }
    }
    ABACUS_LOG_WARN("orphan task {} (pid {}): {}", s.task_id, pid, s.message);
    RemovePidFile(entry.path().string());
    lost.push_back(std::move(s));
  }
  return lost;
}

}  // namespace abacus::agent
