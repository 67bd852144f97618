// LoopbackServer: a BufferedServer on a free 127.0.0.1 port, serving on a thread of its own,
// for tests. Set routes and options on server() first, then Start; Stop (or the destructor)
// stops it and joins its thread.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "net/http_transport.h"

namespace abacus::net {

class LoopbackServer {
 public:
  LoopbackServer() = default;
  ~LoopbackServer() { Stop(); }
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;

  BufferedServer& server() { return svr_; }
  // Binds a free port as the real server does (BindServer: listen backlog widened) and serves;
  // returns the port, or 0 when binding failed.
  int Start() {
    Result<int> bound = BindServer(svr_, "127.0.0.1", 0);
    if (!bound.ok()) return 0;
    port_ = *bound;
    thread_ = std::thread([this] { svr_.Serve(); });
    while (!svr_.serving()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return port_;
  }
  // Stops serving (open connections are closed) and joins the thread. Idempotent.
  void Stop() {
    svr_.StopServing();
    if (thread_.joinable()) thread_.join();
  }
  int port() const { return port_; }

 private:
  BufferedServer svr_;
  int port_ = 0;
  std::thread thread_;
};

// A raw TCP connection to 127.0.0.1:`port` from `source` (any 127.x.y.z address: loopback
// accepts them all, so a test can play several clients); -1 when it failed.
inline int ConnectLoopback(int port, const char* source = nullptr) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (source != nullptr) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    ::inet_pton(AF_INET, source, &from.sin_addr);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0) {
      ::close(fd);
      return -1;
    }
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Reads from `fd` until `count` occurrences of `marker` have arrived, the peer closes (then
// `closed` is set), or nothing came for `quiet`.
inline std::string ReadUntil(int fd, const std::string& marker, int count, bool* closed = nullptr,
                             std::chrono::milliseconds quiet = std::chrono::seconds(5)) {
  std::string got;
  char buf[4096];
  auto seen = [&] {
    int n = 0;
    for (size_t at = got.find(marker); at != std::string::npos; at = got.find(marker, at + 1)) ++n;
    return n;
  };
  if (closed != nullptr) *closed = false;
  while (seen() < count) {
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, static_cast<int>(quiet.count())) <= 0) break;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) {
      if (closed != nullptr) *closed = true;
      break;
    }
    got.append(buf, static_cast<size_t>(n));
  }
  return got;
}

// True when the peer closes `fd` within `limit` (bytes that arrive first are read and dropped).
inline bool PeerCloses(int fd, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  auto end = std::chrono::steady_clock::now() + limit;
  char buf[4096];
  while (std::chrono::steady_clock::now() < end) {
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, 100) <= 0) continue;
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return true;
  }
  return false;
}

}  // namespace abacus::net
