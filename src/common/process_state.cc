#include "common/process_state.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <string>

namespace abacus {

std::optional<ProcStat> ParseProcStat(std::string_view line) {
  const size_t paren = line.rfind(')');  // the command name may hold any character
  if (paren == std::string_view::npos) return std::nullopt;
  std::string_view rest = line.substr(paren + 1);
  ProcStat out;
  // Field 3 (the state) is the first after "(comm)"; fields are separated by single spaces.
  int field = 2;
  while (!rest.empty() && field < 24) {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (rest.empty()) break;
    const size_t end = std::min(rest.find(' '), rest.size());
    const std::string_view word = rest.substr(0, end);
    rest.remove_prefix(end);
    ++field;
    long long* number = field == 14 ? &out.utime : field == 15 ? &out.stime : field == 22 ? &out.start_time
                                   : field == 24 ? &out.rss_pages : nullptr;
    if (field == 3) {
      if (word.size() != 1) return std::nullopt;
      out.state = word.front();
    } else if (number != nullptr) {
      auto [ptr, ec] = std::from_chars(word.data(), word.data() + word.size(), *number);
      if (ec != std::errc() || ptr != word.data() + word.size()) return std::nullopt;
    }
  }
  if (field < 24) return std::nullopt;
  return out;
}

std::optional<ProcStat> ReadProcStat(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return std::nullopt;
  return ParseProcStat(line);
}

char ProcessState(pid_t pid) {
  auto stat = ReadProcStat(pid);
  return stat ? stat->state : '\0';
}

bool ProcessExited(pid_t pid) {
  const char state = ProcessState(pid);
  if (state == '\0') return true;
  if (state != 'Z' && state != 'X') return false;
  std::error_code ec;
  size_t threads = 0;
  for (std::filesystem::directory_iterator it("/proc/" + std::to_string(pid) + "/task", ec), end; !ec && it != end;
       it.increment(ec)) {
    ++threads;
  }
  return threads <= 1;
}

}  // namespace abacus
