// HttpServer::ServeRaw: one HTTP request served from bytes in memory, without a socket, through
// the same cpp-httplib request processing (parsing, limits, pre-routing, routes, post-routing,
// error handlers) that Serve runs on each connection. Used by the HTTP fuzz target.
#include <httplib.h>

#include <algorithm>
#include <cstring>

#include "server/http_server.h"

namespace abacus::server {
namespace {

// A connection whose peer sent `input` and then closed its side; what the server writes is kept.
class MemoryStream final : public httplib::Stream {
 public:
  explicit MemoryStream(std::string_view input) : input_(input) {}

  bool is_readable() const override { return true; }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    size_t n = std::min(size, input_.size() - read_);
    if (n > 0) std::memcpy(ptr, input_.data() + read_, n);
    read_ += n;
    return static_cast<ssize_t>(n);  // 0 at the end: the peer closed
  }
  ssize_t write(const char* ptr, size_t size) override {
    output_.append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 40000;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = "127.0.0.1";
    port = 8420;
  }
  socket_t socket() const override { return 0; }  // below FD_SETSIZE; never used for I/O

  const std::string& output() const { return output_; }

 private:
  std::string_view input_;
  size_t read_ = 0;
  std::string output_;
};

// Server::process_request is protected; a pointer to it taken through a derived class may be
// applied to any Server (the standard way to reach a protected member of another object).
struct ProcessRequest : httplib::Server {
  static constexpr auto kFn = &ProcessRequest::process_request;
};

}  // namespace

std::string HttpServer::ServeRaw(std::string_view request) {
  MemoryStream stream(request);
  bool closed = false;
  (svr_.get()->*ProcessRequest::kFn)(stream, /*close_connection=*/true, closed, nullptr);
  return stream.output();
}

}  // namespace abacus::server
