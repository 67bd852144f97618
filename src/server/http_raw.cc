// HttpServer::ServeRaw: one HTTP request served from bytes in memory, without a socket, through
// the front's framing (net/http_framing.h) and then the same cpp-httplib request processing
// (parsing, pre-routing, routes, post-routing, error handlers) that a worker runs for each
// request the front hands it. Used by the HTTP fuzz target.
#include <httplib.h>

#include <algorithm>
#include <cstring>

#include "net/http_framing.h"
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
  // The front's framing first (net/http_framing.h), as a connection's bytes get it.
  net::FrameLimits limits;
  limits.max_body = options_.max_body_bytes;
  net::RequestHeadParser head(limits);
  net::FrameState st = head.Parse(request);
  if (st == net::FrameState::kError) return net::ErrorAnswer(head.error().status, head.error().message);
  if (st == net::FrameState::kNeedMore) return net::ErrorAnswer(400, "incomplete request head");
  std::string_view rest = request.substr(head.head().head_bytes);
  std::string body;
  if (head.head().body == net::RequestHead::Body::kLength) {
    if (rest.size() < head.head().content_length) return net::ErrorAnswer(400, "incomplete request body");
    body = rest.substr(0, head.head().content_length);
  } else if (head.head().body == net::RequestHead::Body::kChunked) {
    net::ChunkedDecoder chunked(limits.max_body);
    size_t consumed = 0;
    st = chunked.Feed(rest, consumed, body);
    if (st == net::FrameState::kError) return net::ErrorAnswer(chunked.error().status, chunked.error().message);
    if (st == net::FrameState::kNeedMore) return net::ErrorAnswer(400, "incomplete chunked body");
  }
  std::string forwarded = net::ForwardedRequest(head.head(), body);
  MemoryStream stream(forwarded);
  bool closed = false;
  (svr_.get()->*ProcessRequest::kFn)(stream, /*close_connection=*/true, closed, nullptr);
  return stream.output();
}

}  // namespace abacus::server
