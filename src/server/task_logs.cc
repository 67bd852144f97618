#include "server/task_logs.h"

#include <charconv>

namespace abacus::server {
namespace {

bool ParseNonNegative(std::string_view s, int32_t& out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size() && out >= 0;
}

}  // namespace

bool IsPlainWorkloadId(std::string_view id) {
  if (id.empty() || id.size() > 64 || id[0] == '-') return false;
  for (char c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
  }
  return true;
}

Result<LogTaskQuery> ParseLogTaskQuery(std::string_view task, const std::string& workload_id) {
  LogTaskQuery q;
  if (task.empty()) return q;
  size_t dot = task.find('.');
  if (dot != std::string_view::npos && task.find('.', dot + 1) == std::string_view::npos &&
      ParseNonNegative(task.substr(0, dot), q.group) && ParseNonNegative(task.substr(dot + 1), q.replica)) {
    q.has_unit = true;
    return q;
  }
  auto ref = ParseTaskId(task);
  if (!ref.ok() || !IsPlainWorkloadId(ref->workload_id)) {
    return InvalidArgument("task: expected GROUP.REPLICA or a task id of workload " + workload_id + " (" + workload_id +
                           ".<group>.<replica>.<attempt>[.<run>]), got '" + std::string(task) + "'");
  }
  if (ref->workload_id != workload_id) {
    return NotFound("task " + std::string(task) + " is not a task of workload " + workload_id);
  }
  q.exact = *ref;
  return q;
}

Result<std::filesystem::path> TaskLogPath(const std::string& data_dir, const TaskRef& ref, std::string_view stream) {
  if (stream != "stdout" && stream != "stderr") return InvalidArgument("stream: expected stdout or stderr");
  if (!IsPlainWorkloadId(ref.workload_id)) {
    return InvalidArgument("task " + FormatTaskId(ref) + ": not a workload id the server made");
  }
  return std::filesystem::path(data_dir) / "logs" / (FormatTaskId(ref) + "." + std::string(stream));
}

}  // namespace abacus::server
