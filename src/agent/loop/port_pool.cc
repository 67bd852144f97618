#include "agent/loop/port_pool.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <charconv>
#include <random>

#include "common/mutex.h"

namespace abacus::agent {
namespace {

bool ParsePort(std::string_view s, int& out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

}  // namespace

Result<PortRange> ParsePortRange(std::string_view text) {
  auto bad = [&] {
    return InvalidArgument("port range '" + std::string(text) +
                           "': expected FIRST-LAST with 1024 <= FIRST <= LAST <= 65535, e.g. 20000-29999");
  };
  size_t dash = text.find('-');
  if (dash == std::string_view::npos) return bad();
  PortRange r;
  if (!ParsePort(text.substr(0, dash), r.first) || !ParsePort(text.substr(dash + 1), r.last)) return bad();
  if (r.first < 1024 || r.last > 65535 || r.first > r.last) return bad();
  return r;
}

bool PortFree(int port) {
  int fd = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  bool v6 = fd >= 0;
  if (!v6) fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // TIME_WAIT leftovers do not count
  int rc;
  if (v6) {
    int zero = 0;
    ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);  // the v4 addresses too
    sockaddr_in6 a{};
    a.sin6_family = AF_INET6;
    a.sin6_addr = in6addr_any;
    a.sin6_port = htons(static_cast<uint16_t>(port));
    rc = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  } else {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    a.sin_port = htons(static_cast<uint16_t>(port));
    rc = ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  }
  ::close(fd);
  return rc == 0;
}

PortPool::PortPool(PortRange range, std::function<bool(int)> free, std::optional<int> first_try)
    : range_(range), free_(std::move(free)), next_(range.first) {
  if (first_try && *first_try >= range.first && *first_try <= range.last) {
    next_ = *first_try;
  } else if (!first_try) {
    std::random_device seed;
    next_ = range.first + static_cast<int>(seed() % static_cast<unsigned>(range.last - range.first + 1));
  }
}

Result<int> PortPool::Acquire(const std::string& task_id) {
  MutexLock lock(mu_);
  if (auto it = by_task_.find(task_id); it != by_task_.end()) return it->second;
  const int size = range_.last - range_.first + 1;
  for (int i = 0; i < size; ++i) {
    const int port = range_.first + (next_ - range_.first + i) % size;
    if (by_port_.count(port) != 0 || !free_(port)) continue;
    by_task_[task_id] = port;
    by_port_[port] = task_id;
    next_ = port == range_.last ? range_.first : port + 1;
    return port;
  }
  return ResourceExhausted("no free TCP port in the agent's range " + std::to_string(range_.first) + "-" +
                           std::to_string(range_.last) + " for task " + task_id + " (" + std::to_string(by_port_.size()) +
                           " held by tasks); widen `abacus agent --port-range` or free ports on the host");
}

void PortPool::Release(const std::string& task_id) {
  MutexLock lock(mu_);
  auto it = by_task_.find(task_id);
  if (it == by_task_.end()) return;
  by_port_.erase(it->second);
  by_task_.erase(it);
}

int PortPool::PortOf(const std::string& task_id) const {
  MutexLock lock(mu_);
  auto it = by_task_.find(task_id);
  return it == by_task_.end() ? 0 : it->second;
}

size_t PortPool::held() const {
  MutexLock lock(mu_);
  return by_task_.size();
}

}  // namespace abacus::agent
