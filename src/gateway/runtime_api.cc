#include "gateway/runtime_api.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

namespace abacus::gateway {
namespace {

// True when HAProxy's answer to a change says it failed (it answers errors in words; a success
// is empty, "New server registered." or "Server deleted.").
bool Refused(const std::string& answer) {
  if (answer.rfind("# ", 0) == 0) return false;  // a CSV answer (show stat): its header names "…errors" columns
  for (const char* bad : {"No such", "Unknown command", "Require", "cannot", "Cannot", "invalid", "Invalid",
                          "error", "Error", "not found", "Permission denied", "must be", "Only"}) {
    if (answer.find(bad) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

Result<std::string> RuntimeApi::Send(const std::string& command) const {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Unavailable("haproxy runtime API: socket: " + std::string(std::strerror(errno)));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path_.size() >= sizeof addr.sun_path) {
    ::close(fd);
    return InvalidArgument("haproxy runtime API socket path too long: " + path_);
  }
  std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int e = errno;
    ::close(fd);
    return Unavailable("haproxy runtime API at " + path_ + ": " + std::strerror(e));
  }
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const std::string line = command + "\n";
  size_t sent = 0;
  while (sent < line.size()) {
    ssize_t n = ::send(fd, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      ::close(fd);
      return Unavailable("haproxy runtime API at " + path_ + ": send failed");
    }
    sent += static_cast<size_t>(n);
  }
  std::string answer;
  char buf[8192];
  while (true) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    answer.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (Refused(answer)) {
    while (!answer.empty() && (answer.back() == '\n' || answer.back() == ' ')) answer.pop_back();
    return InvalidArgument("haproxy refused '" + command + "': " + answer);
  }
  return answer;
}

}  // namespace abacus::gateway
