// Data mount paths (see DataMount in workload.h).
#include <string>

#include "workload/workload.h"

namespace abacus {

Status CheckMountPath(std::string_view path) {
  if (path.empty() || path.front() != '/') {
    return InvalidArgument("must be an absolute path, got '" + std::string(path) + "'");
  }
  if (path == "/") return Status::OK();
  if (path.back() == '/') return InvalidArgument("must not end with '/', got '" + std::string(path) + "'");
  if (path.find('\0') != std::string_view::npos) return InvalidArgument("must not contain NUL");
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view seg = path.substr(start, end - start);
    if (seg.empty()) return InvalidArgument("must not contain '//', got '" + std::string(path) + "'");
    if (seg == "." || seg == "..") {
      return InvalidArgument("must not contain '" + std::string(seg) + "' segments, got '" +
                             std::string(path) + "'");
    }
    start = end + 1;
  }
  return Status::OK();
}

bool PathWithin(std::string_view path, std::string_view prefix) {
  if (prefix == "/") return !path.empty() && path.front() == '/';
  if (path.size() < prefix.size() || path.substr(0, prefix.size()) != prefix) return false;
  return path.size() == prefix.size() || path[prefix.size()] == '/';
}

}  // namespace abacus
