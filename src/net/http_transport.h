// cpp-httplib's server and client over net::SocketStream: httplib still parses, routes and
// writes every message; these classes own only the connection loop, so that each request and
// each response leaves in one send and a kept-alive connection waits in one poll.
//
//   auto svr = std::make_unique<net::BufferedServer>();   // an httplib::Server in every way
//   net::BufferedClient client("127.0.0.1", 8420);         // an httplib::ClientImpl
//
// Plain TCP only: HTTPS keeps httplib's SSLServer and SSLClient.
#pragma once

#include <httplib.h>

#include <memory>
#include <string>

#include "common/status.h"

namespace abacus::net {

class BufferedServer : public httplib::Server {
 private:
  // Serves requests on `sock` until the peer closes, the keep-alive timeout or count runs out,
  // an error, or stop(); then closes it.
  bool process_and_close_socket(socket_t sock) override;
};

class BufferedClient : public httplib::ClientImpl {
 public:
  BufferedClient(const std::string& host, int port) : httplib::ClientImpl(host, port) {}

 private:
  // Runs one exchange on the kept-alive socket with a SocketStream.
  bool process_socket(const Socket& socket, std::function<bool(httplib::Stream& strm)> callback) override;
};

// A server for plain HTTP (BufferedServer) when both paths are empty, else httplib's SSLServer
// with the PEM certificate and key (check is_valid()).
std::unique_ptr<httplib::Server> MakeServer(const std::string& tls_cert_file, const std::string& tls_key_file);

// Binds `svr` to host:port (any free port when `port` is 0) and widens its listen backlog.
// Returns the port; Unavailable when the address cannot be bound.
Result<int> BindServer(httplib::Server& svr, const std::string& host, int port);

// Raises the listen backlog of `svr`, bound and not yet serving, to `backlog` (the kernel caps
// it at net.core.somaxconn). httplib listens with a backlog of 5: a burst of connections (64
// clients at once, agents reconnecting after a restart) overflowed it, and each dropped SYN
// waited out a retransmit of 1 s, then 3 s. Returns false when the socket refused.
bool WidenListenBacklog(httplib::Server& svr, int backlog = 1024);
// Returns the server's listening socket: −1 before it is bound and after it stopped.
int ListenSocketOf(httplib::Server& svr);

// Where an http:// or https:// server URL points.
struct ServerUrl {
  bool tls = false;
  std::string host;  // without the brackets of an IPv6 literal
  int port = 0;      // 80 or 443 when the URL names none
};

// Parses "http://HOST[:PORT][/...]" or "https://...". InvalidArgument names what is wrong.
Result<ServerUrl> ParseServerUrl(const std::string& url);

// A client for `url`: BufferedClient for http://, httplib's SSLClient for https://. Every
// Abacus client is set up alike here: kept-alive connections, no Nagle delay, and for HTTPS the
// CA in $ABACUS_CA_CERT (a private CA or a self-signed server certificate), else the system's,
// with the server's certificate verified. Callers set their own timeouts and credentials.
Result<std::unique_ptr<httplib::ClientImpl>> MakeClient(const std::string& url);

}  // namespace abacus::net
