// cpp-httplib's server and client over net::SocketStream: httplib still parses, routes and
// writes every message; these classes own only the connection loop, so that each request and
// each response leaves in one send and a kept-alive connection waits in one poll.
//
//   auto svr = std::make_unique<net::BufferedServer>();   // an httplib::Server in every way
//   net::BufferedClient client("127.0.0.1", 8420);         // an httplib::ClientImpl
//
// Plain TCP only: HTTPS keeps httplib's SSLServer and SSLClient.
//
// BufferedServer serves through net::HttpFront (net/http_front.h): one epoll thread owns every
// connection and frames requests strictly; httplib parses, routes and answers only complete,
// validated requests on the front's workers. Serve it with ServeBound, not listen_after_bind.
#pragma once

#include <httplib.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "common/mutex.h"
#include "common/status.h"
#include "net/http_front.h"
#include "net/server_url.h"

namespace abacus::net {

class BufferedServer : public httplib::Server {
 public:
  // The front's limits and timeouts. Its body limit and idle timeout are taken from
  // set_payload_max_length and set_keep_alive_timeout when Serve starts.
  void set_front_options(FrontOptions options) { front_options_ = std::move(options); }
  // Serves the bound socket through the front until StopServing; false when it could not.
  bool Serve();
  // Ends Serve (before or during it); requests in flight finish. Thread-safe.
  void StopServing();
  // True while Serve runs.
  bool serving() const { return serving_.load(); }
  // The front's counters (zero before Serve).
  const FrontCounters* counters() const {
    MutexLock lock(front_mu_);
    return front_ ? &front_->counters() : nullptr;
  }

  // Runs one complete request (`request`, as ForwardedRequest builds it) through httplib's
  // processing and writes the answer to `fd`; returns whether the connection may carry another.
  bool RunRequest(int fd, const ConnAddresses& ends, const std::string& request, bool closing);

 private:
  // httplib's own loop (listen_after_bind) still lands here: one connection served on one
  // thread until it closes.
  bool process_and_close_socket(socket_t sock) override;

  FrontOptions front_options_;
  mutable Mutex front_mu_;
  std::unique_ptr<HttpFront> front_ GUARDED_BY(front_mu_);
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> serving_{false};
};

// Serves `svr` (bound with BindServer) until StopServer: a BufferedServer through its front,
// an SSLServer with httplib's listen_after_bind. Returns false when serving could not start.
bool ServeBound(httplib::Server& svr);
// Stops what ServeBound serves; thread-safe, and a stop before ServeBound started is kept.
void StopServer(httplib::Server& svr);
// True while ServeBound serves `svr`.
bool IsServing(httplib::Server& svr);
// Sets the front's options when `svr` is a BufferedServer (HTTPS has no front).
void SetFrontOptions(httplib::Server& svr, FrontOptions options);
// The front's counters in Prometheus text form; empty for HTTPS or before Serve.
std::string FrontMetrics(httplib::Server& svr);

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

// Binds `svr` to host:port (any free port when `port` is 0) and widens its listen backlog. The
// address is bound exclusively (SO_REUSEADDR, never SO_REUSEPORT): a second server on it fails.
// Returns the port; Unavailable "address HOST:PORT is in use" when another socket holds it,
// else Unavailable naming the address.
Result<int> BindServer(httplib::Server& svr, const std::string& host, int port);
// True when another socket holds host:port (a trial bind with BindServer's options fails with
// EADDRINUSE): a server checks it before it creates anything in its data folder.
bool AddressInUse(const std::string& host, int port);

// Raises the listen backlog of `svr`, bound and not yet serving, to `backlog` (the kernel caps
// it at net.core.somaxconn). httplib listens with a backlog of 5: a burst of connections (64
// clients at once, agents reconnecting after a restart) overflowed it, and each dropped SYN
// waited out a retransmit of 1 s, then 3 s. Returns false when the socket refused.
bool WidenListenBacklog(httplib::Server& svr, int backlog = 1024);
// Returns the server's listening socket: −1 before it is bound and after it stopped.
int ListenSocketOf(httplib::Server& svr);

// A client for `url`: BufferedClient for http://, httplib's SSLClient for https://. Every
// Abacus client is set up alike here: kept-alive connections, no Nagle delay, and for HTTPS the
// CA in $ABACUS_CA_CERT (a private CA or a self-signed server certificate), else the system's,
// with the server's certificate verified. Callers set their own timeouts and credentials.
Result<std::unique_ptr<httplib::ClientImpl>> MakeClient(const std::string& url);

}  // namespace abacus::net
