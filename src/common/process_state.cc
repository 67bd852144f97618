#include "common/process_state.h"

#include <filesystem>
#include <fstream>
#include <string>

namespace abacus {

char ProcessState(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return '\0';
  const size_t paren = line.rfind(')');  // the command name may hold any character
  if (paren == std::string::npos || paren + 2 >= line.size()) return '\0';
  return line[paren + 2];
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
