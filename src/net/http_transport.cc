#include "net/http_transport.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/log.h"
#include "common/mutex.h"
#include "net/socket_stream.h"

namespace abacus::net {
namespace {

std::chrono::microseconds Timeout(time_t sec, time_t usec) {
  return std::chrono::seconds(sec) + std::chrono::microseconds(usec);
}

// How long an idle kept-alive connection sleeps before it checks again whether the server is
// stopping (httplib checks every 10 ms and then sleeps 1 ms, which can delay a request by 1 ms).
constexpr std::chrono::milliseconds kStopCheck{100};

// Server::svr_sock_ is protected; a pointer to it taken through a derived class reaches it on
// any Server, the SSLServer included.
struct ListenSocket : httplib::Server {
  static constexpr auto kSock = &ListenSocket::svr_sock_;
};

// A request the front framed, read from memory, with the answer written to the connection:
// httplib's parser sees exactly the bytes the front validated and nothing after them.
class FramedStream final : public httplib::Stream {
 public:
  FramedStream(int fd, const ConnAddresses& ends, const std::string& request, StreamTimeouts timeouts)
      : out_(fd, timeouts), ends_(ends), in_(request) {}

  bool is_readable() const override { return pos_ < in_.size(); }
  bool is_writable() const override { return out_.is_writable(); }
  ssize_t read(char* ptr, size_t size) override {
    size_t n = std::min(size, in_.size() - pos_);
    std::memcpy(ptr, in_.data() + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, size_t size) override {
    if (!head_seen_) {
      // httplib writes the status line and headers in one piece, first.
      head_seen_ = true;
      std::string_view head(ptr, size);
      head = head.substr(0, head.find("\r\n\r\n"));
      closes_ = head.find("\r\nConnection: close") != std::string_view::npos;
      // A handler that closes the connection (Connection: close) left httplib's Keep-Alive
      // header beside it: two contradicting headers (the probe of 2026-12-07). Dropped.
      if (const size_t k = head.find("\r\nKeep-Alive: "); closes_ && k != std::string_view::npos) {
        const size_t end = head.find("\r\n", k + 2);
        std::string fixed(ptr, size);
        fixed.erase(k, (end == std::string_view::npos ? head.size() : end) - k);
        return out_.write(fixed.data(), fixed.size()) < 0 ? -1 : static_cast<ssize_t>(size);
      }
    }
    return out_.write(ptr, size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = ends_.remote_ip;
    port = ends_.remote_port;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = ends_.local_ip;
    port = ends_.local_port;
  }
  // Never used for I/O; below FD_SETSIZE, which httplib's select() build checks.
  socket_t socket() const override { return 0; }

  bool Flush() { return out_.Flush(); }
  // True when the answer said Connection: close.
  bool closes() const { return closes_; }

 private:
  SocketStream out_;
  const ConnAddresses& ends_;
  const std::string& in_;
  size_t pos_ = 0;
  bool head_seen_ = false, closes_ = false;
};

// Binds nothing itself: SO_REUSEADDR lets a restarted server bind past TIME_WAIT, and unlike
// httplib's SO_REUSEPORT never lets a second server share a listening port.
void ExclusiveSocketOptions(socket_t sock) {
  int yes = 1;
  ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
}

}  // namespace

bool AddressInUse(const std::string& host, int port) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | AI_PASSIVE;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res) != 0) return false;
  bool in_use = false;
  for (addrinfo* rp = res; rp != nullptr && !in_use; rp = rp->ai_next) {
    int sock = ::socket(rp->ai_family, rp->ai_socktype | SOCK_CLOEXEC, rp->ai_protocol);
    if (sock < 0) continue;
    ExclusiveSocketOptions(sock);
    in_use = ::bind(sock, rp->ai_addr, rp->ai_addrlen) != 0 && errno == EADDRINUSE;
    ::close(sock);
  }
  ::freeaddrinfo(res);
  return in_use;
}

std::unique_ptr<httplib::Server> MakeServer(const std::string& tls_cert_file, const std::string& tls_key_file) {
  std::unique_ptr<httplib::Server> svr;
  if (tls_cert_file.empty() && tls_key_file.empty()) {
    svr = std::make_unique<BufferedServer>();
  } else {
    svr = std::make_unique<httplib::SSLServer>(tls_cert_file.c_str(), tls_key_file.c_str());
  }
  svr->set_socket_options(ExclusiveSocketOptions);
  return svr;
}

Result<int> BindServer(httplib::Server& svr, const std::string& host, int port) {
  svr.set_socket_options(ExclusiveSocketOptions);
  int bound = port == 0 ? svr.bind_to_any_port(host) : (svr.bind_to_port(host, port) ? port : -1);
  if (bound <= 0) {
    std::string address = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
    if (port != 0 && AddressInUse(host, port)) return Unavailable("address " + address + " is in use");
    return Unavailable("cannot listen on " + address + " (not a local address?)");
  }
  if (!WidenListenBacklog(svr)) ABACUS_LOG_WARN("listen backlog left at httplib's 5: {}", std::strerror(errno));
  return bound;
}

int ListenSocketOf(httplib::Server& svr) {
  socket_t sock = (svr.*ListenSocket::kSock).load();
  return sock == INVALID_SOCKET ? -1 : static_cast<int>(sock);
}

bool WidenListenBacklog(httplib::Server& svr, int backlog) {
  int sock = ListenSocketOf(svr);
  // listen() on a listening socket only changes its backlog.
  return sock >= 0 && ::listen(sock, backlog) == 0;
}

bool BufferedServer::Serve() {
  FrontOptions options;
  HttpFront* front = nullptr;  // set once, here; StopServing reaches it under front_mu_
  {
    MutexLock lock(front_mu_);
    if (stop_requested_.load() || front_) return false;
    options = front_options_;
    options.limits.max_body = payload_max_length_;
    options.idle_timeout = std::chrono::seconds(keep_alive_timeout_sec_);
    options.max_requests_per_connection = [this] { return keep_alive_max_count_; };
    front_ = std::make_unique<HttpFront>(
        options, [this](int fd, const ConnAddresses& ends, const std::string& request, bool closing) {
          return RunRequest(fd, ends, request, closing);
        });
    front = front_.get();
  }
  int sock = ListenSocketOf(*this);
  if (sock < 0) return false;
  auto close_listener = [this] {
    socket_t mine = svr_sock_.exchange(INVALID_SOCKET);
    if (mine != INVALID_SOCKET) ::close(mine);
  };
  serving_.store(true);
  bool ok = front->Run(sock, close_listener);
  serving_.store(false);
  close_listener();
  return ok;
}

void BufferedServer::StopServing() {
  MutexLock lock(front_mu_);
  stop_requested_.store(true);
  if (front_) front_->Stop();
}

bool BufferedServer::RunRequest(int fd, const ConnAddresses& ends, const std::string& request, bool closing) {
  FramedStream strm(fd, ends, request, {Timeout(read_timeout_sec_, read_timeout_usec_), Timeout(write_timeout_sec_, write_timeout_usec_)});
  bool closed = false;
  bool ret = process_request(strm, closing, closed, nullptr);
  if (!strm.Flush()) ret = false;  // head and body in one send
  return ret && !closed && !strm.closes();
}

bool ServeBound(httplib::Server& svr) {
  if (auto* b = dynamic_cast<BufferedServer*>(&svr)) return b->Serve();
  return svr.listen_after_bind();
}

void StopServer(httplib::Server& svr) {
  if (auto* b = dynamic_cast<BufferedServer*>(&svr)) return b->StopServing();
  svr.stop();
}

bool IsServing(httplib::Server& svr) {
  if (auto* b = dynamic_cast<BufferedServer*>(&svr)) return b->serving();
  return svr.is_running();
}

void SetFrontOptions(httplib::Server& svr, FrontOptions options) {
  if (auto* b = dynamic_cast<BufferedServer*>(&svr)) b->set_front_options(std::move(options));
}

std::string FrontMetrics(httplib::Server& svr) {
  auto* b = dynamic_cast<BufferedServer*>(&svr);
  const FrontCounters* c = b != nullptr ? b->counters() : nullptr;
  return c != nullptr ? RenderFrontMetrics(*c) : std::string();
}

bool BufferedServer::process_and_close_socket(socket_t sock) {
  SocketStream strm(sock, {Timeout(read_timeout_sec_, read_timeout_usec_), Timeout(write_timeout_sec_, write_timeout_usec_)});
  const auto keep_alive = std::chrono::seconds(keep_alive_timeout_sec_);
  bool ret = false;
  for (size_t left = keep_alive_max_count_; left > 0; --left) {
    // Wait for the next request's first byte, giving up at the keep-alive timeout or a stop.
    auto idle_since = std::chrono::steady_clock::now();
    int ready = 0;
    while (ready == 0 && svr_sock_ != INVALID_SOCKET) {
      ready = strm.WaitReadable(kStopCheck);
      if (ready == 0 && std::chrono::steady_clock::now() - idle_since >= keep_alive) break;
    }
    if (ready <= 0 || svr_sock_ == INVALID_SOCKET) break;
    bool closed = false;
    ret = process_request(strm, /*close_connection=*/left == 1, closed, nullptr);
    if (!strm.Flush()) ret = false;  // the response leaves here: head and body in one send
    if (!ret || closed) break;
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ret;
}

bool BufferedClient::process_socket(const Socket& socket, std::function<bool(httplib::Stream& strm)> callback) {
  SocketStream strm(socket.sock,
                    {Timeout(read_timeout_sec_, read_timeout_usec_), Timeout(write_timeout_sec_, write_timeout_usec_)});
  // The request is held until the response is read, which sends it in one piece.
  return callback(strm) && strm.Flush();
}

Result<std::unique_ptr<httplib::ClientImpl>> MakeClient(const std::string& url) {
  ABACUS_ASSIGN_OR_RETURN(ServerUrl u, ParseServerUrl(url));
  std::unique_ptr<httplib::ClientImpl> c;
  if (u.tls) {
    c = std::make_unique<httplib::SSLClient>(u.host, u.port);
  } else {
    c = std::make_unique<BufferedClient>(u.host, u.port);
  }
  c->set_keep_alive(true);
  c->set_tcp_nodelay(true);
  if (const char* ca = std::getenv("ABACUS_CA_CERT"); ca != nullptr && *ca != '\0') c->set_ca_cert_path(ca);
  c->enable_server_certificate_verification(true);
  return c;
}

}  // namespace abacus::net
