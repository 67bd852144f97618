// LoopbackServer: a BufferedServer on a free 127.0.0.1 port, serving on a thread of its own,
// for tests. Set routes and options on server() first, then Start; Stop (or the destructor)
// stops it and joins its thread.
#pragma once

#include <chrono>
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
    thread_ = std::thread([this] { svr_.listen_after_bind(); });
    while (!svr_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return port_;
  }
  // Stops serving (open connections are closed) and joins the thread. Idempotent.
  void Stop() {
    svr_.stop();
    if (thread_.joinable()) thread_.join();
  }
  int port() const { return port_; }

 private:
  BufferedServer svr_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace abacus::net
