#include "net/http_transport.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/log.h"
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

}  // namespace

std::unique_ptr<httplib::Server> MakeServer(const std::string& tls_cert_file, const std::string& tls_key_file) {
  if (tls_cert_file.empty() && tls_key_file.empty()) return std::make_unique<BufferedServer>();
  return std::make_unique<httplib::SSLServer>(tls_cert_file.c_str(), tls_key_file.c_str());
}

Result<int> BindServer(httplib::Server& svr, const std::string& host, int port) {
  int bound = port == 0 ? svr.bind_to_any_port(host) : (svr.bind_to_port(host, port) ? port : -1);
  if (bound <= 0) {
    return Unavailable("cannot listen on " + host + ":" + std::to_string(port) + " (address in use or not local?)");
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

Result<ServerUrl> ParseServerUrl(const std::string& url) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("server URL '" + url + "': " + why + " (expected http://HOST:PORT or https://HOST:PORT)");
  };
  ServerUrl out;
  std::string_view rest = url;
  if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  } else if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
    out.tls = true;
  } else {
    return bad("unknown scheme");
  }
  rest = rest.substr(0, rest.find_first_of("/?#"));
  std::string_view port;
  if (rest.starts_with("[")) {
    size_t close = rest.find(']');
    if (close == std::string_view::npos) return bad("unclosed '['");
    out.host = std::string(rest.substr(1, close - 1));
    rest.remove_prefix(close + 1);
    if (!rest.empty() && !rest.starts_with(":")) return bad("text after ']'");
    if (!rest.empty()) port = rest.substr(1);
  } else {
    size_t colon = rest.find(':');
    out.host = std::string(rest.substr(0, colon));
    if (colon != std::string_view::npos) port = rest.substr(colon + 1);
  }
  if (out.host.empty()) return bad("no host");
  out.port = out.tls ? 443 : 80;
  if (!port.empty()) {
    int p = 0;
    for (char c : port) {
      if (c < '0' || c > '9' || p > 65535) return bad("port must be a number from 1 to 65535");
      p = p * 10 + (c - '0');
    }
    if (p < 1 || p > 65535) return bad("port must be a number from 1 to 65535");
    out.port = p;
  }
  return out;
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
