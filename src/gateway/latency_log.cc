#include "gateway/latency_log.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>

#include "common/mutex.h"

namespace abacus::gateway {
namespace {

// The next space-separated word of `s` from `pos` (moves `pos` past it).
std::string_view NextWord(std::string_view s, size_t& pos) {
  while (pos < s.size() && s[pos] == ' ') ++pos;
  size_t end = pos;
  while (end < s.size() && s[end] != ' ' && s[end] != '\n' && s[end] != '\r' && s[end] != '\0') ++end;
  std::string_view w = s.substr(pos, end - pos);
  pos = end;
  return w;
}

}  // namespace

std::optional<LatencyRecord> ParseLatencyLine(std::string_view datagram) {
  // "<134>Dec  5 14:00:00 haproxy[123]: abacus-latency svc_chat t-w-1.0.0.1.0 3"
  const std::string_view tag = kLatencyLogTag;
  size_t at = datagram.find(tag);
  while (at != std::string_view::npos && at + tag.size() < datagram.size() && datagram[at + tag.size()] != ' ') {
    at = datagram.find(tag, at + 1);
  }
  if (at == std::string_view::npos) return std::nullopt;
  size_t pos = at + tag.size();
  LatencyRecord r;
  r.backend = std::string(NextWord(datagram, pos));
  r.server = std::string(NextWord(datagram, pos));
  const std::string_view ms = NextWord(datagram, pos);
  if (r.backend.empty() || r.server.empty() || r.server == "<NOSRV>" || ms.empty()) return std::nullopt;
  auto [end, ec] = std::from_chars(ms.data(), ms.data() + ms.size(), r.ms);
  if (ec != std::errc() || end != ms.data() + ms.size() || r.ms < 0) return std::nullopt;
  return r;
}

double Percentile(const LatencyCounts& counts, double p) {
  int64_t total = 0;
  for (const auto& [ms, n] : counts) total += n;
  if (total == 0) return 0;
  // Nearest rank: the smallest value with at least ceil(p * total) requests at or below it.
  const auto rank = static_cast<int64_t>(std::ceil(p * static_cast<double>(total)));
  int64_t seen = 0;
  for (const auto& [ms, n] : counts) {
    seen += n;
    if (seen >= rank) return static_cast<double>(ms);
  }
  return static_cast<double>(counts.rbegin()->first);
}

LatencyListener::~LatencyListener() { Stop(); }

Status LatencyListener::Start() {
  fd_ = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) return Unavailable(std::string("latency log: socket: ") + std::strerror(errno));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    const int e = errno;
    ::close(fd_);
    fd_ = -1;
    return Unavailable(std::string("latency log: cannot bind a UDP port on 127.0.0.1: ") + std::strerror(e));
  }
  int size = 4 << 20;  // room for a burst of lines while the reader sleeps
  (void)::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  port_ = ntohs(a.sin_port);
  reader_ = std::thread([this] { Read(); });
  return Status::OK();
}

void LatencyListener::Stop() {
  stopping_.store(true);
  if (reader_.joinable()) reader_.join();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string LatencyListener::address() const { return port_ == 0 ? "" : "127.0.0.1:" + std::to_string(port_); }

std::map<std::string, LatencyCounts> LatencyListener::Take(const std::string& backend) {
  MutexLock lock(mu_);
  auto it = counts_.find(backend);
  if (it == counts_.end()) return {};
  std::map<std::string, LatencyCounts> out = std::move(it->second);
  counts_.erase(it);
  return out;
}

void LatencyListener::Add(const LatencyRecord& r) {
  MutexLock lock(mu_);
  ++counts_[r.backend][r.server][r.ms];
  received_.fetch_add(1);
}

void LatencyListener::Read() {
  char buf[2048];
  while (!stopping_.load()) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, 100) <= 0) continue;
    ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    while (n > 0) {
      if (auto r = ParseLatencyLine(std::string_view(buf, static_cast<size_t>(n)))) Add(*r);
      n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    }
  }
}

}  // namespace abacus::gateway
