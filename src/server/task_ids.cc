#include "server/task_ids.h"

#include <charconv>
#include <vector>

namespace abacus::server {

std::string FormatTaskId(const TaskRef& ref) {
  return ref.workload_id + "." + std::to_string(ref.group) + "." + std::to_string(ref.replica) + "." +
         std::to_string(ref.attempt) + (ref.run > 0 ? "." + std::to_string(ref.run) : "");
}

Result<TaskRef> ParseTaskId(std::string_view id) {
  auto bad = [&] {
    return InvalidArgument("task id '" + std::string(id) + "': expected <workload id>.<group>.<replica>.<attempt>[.<run>]");
  };
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= id.size(); ++i) {
    if (i == id.size() || id[i] == '.') {
      parts.push_back(id.substr(start, i - start));
      start = i + 1;
    }
  }
  if ((parts.size() != 4 && parts.size() != 5) || parts[0].empty()) return bad();
  TaskRef ref;
  ref.workload_id = std::string(parts[0]);
  int32_t* fields[] = {&ref.group, &ref.replica, &ref.attempt, &ref.run};
  for (size_t k = 0; k + 1 < parts.size(); ++k) {
    std::string_view p = parts[k + 1];
    auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), *fields[k]);
    if (p.empty() || ec != std::errc() || ptr != p.data() + p.size() || *fields[k] < 0) return bad();
  }
  if (ref.attempt < 1 || (parts.size() == 5 && ref.run < 1)) return bad();
  return ref;
}

}  // namespace abacus::server
