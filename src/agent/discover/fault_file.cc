#include "agent/discover/fault_file.h"

#include <charconv>
#include <fstream>
#include <sstream>

namespace abacus::agent {

Result<std::map<int32_t, std::string>> ParseFaultFile(std::string_view text) {
  std::map<int32_t, std::string> faults;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    int32_t index = -1;
    auto [p, ec] = std::from_chars(line.data(), line.data() + line.size(), index);
    if (ec != std::errc() || index < 0 || (p != line.data() + line.size() && *p != ' ' && *p != '\t')) {
      return InvalidArgument("line " + std::to_string(line_no) + ": expected 'INDEX REASON' (a device index first), got '" +
                             std::string(line.substr(0, 80)) + "'");
    }
    std::string_view reason(p, line.data() + line.size() - p);
    while (!reason.empty() && (reason.front() == ' ' || reason.front() == '\t')) reason.remove_prefix(1);
    faults[index] = reason.empty() ? "injected fault" : std::string(reason.substr(0, 200));
  }
  return faults;
}

Result<std::map<int32_t, std::string>> ReadFaultFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::map<int32_t, std::string>{};
  std::ostringstream text;
  text << in.rdbuf();
  auto parsed = ParseFaultFile(text.str());
  if (!parsed.ok()) return parsed.status().WithContext(path);
  return parsed;
}

}  // namespace abacus::agent
