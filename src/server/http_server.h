// HttpServer: the REST API (/api/v1/...), /healthz, /readyz and /metrics over cpp-httplib, in
// front of a ControlPlane. Bearer-token auth on every route but /healthz and the dashboard's
// files (GET /ui/…); errors are JSON {"error": {"code", "message", "details"?}} with the HTTP
// status of the Status code. Routes and bodies: docs/api.md.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "server/control_plane.h"

namespace httplib {
class Server;
}

namespace abacus::server {

class RouteTable;

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8420;                       // 0: any free port (see HttpServer::port)
  size_t max_body_bytes = 8 << 20;       // larger bodies get 413
  int threads = 96;                      // workers: each runs one request at a time
  int running = 0;                       // of those, running on the CPU at once; 0: four per core
  int read_timeout_seconds = 30;
  int write_timeout_seconds = 30;
  int keep_alive_seconds = 5;
  // The front door (net/http_front.h, docs/operations.md): a request's head must arrive within
  // header_timeout_seconds of its first byte and its body within body_timeout_seconds of the
  // head (else 408 and close); one source address may hold max_connections_per_client open
  // connections (else 503 and close). Plain HTTP only.
  int header_timeout_seconds = 10;
  int body_timeout_seconds = 30;
  size_t max_connections_per_client = 512;
  // TLS: PEM certificate (chain) and private key; both empty: plain HTTP.
  std::string tls_cert_file;
  std::string tls_key_file;  // idle keep-alive connections close after this (and at shutdown)
  // Requests a second per token (token bucket; 429 with Retry-After beyond), bursts of
  // rate_burst (0: twice the rate). 0: no limit (in-process servers); `abacus server`: 200/400.
  double rate_limit = 0;
  double rate_burst = 0;
  // The same limit holds per user (all its tokens together); this one per tenant (all the users
  // whose roles are scoped to it together). 0: none.
  double tenant_rate_limit = 0;
  double tenant_rate_burst = 0;
  // Active API tokens one user may hold (POST /api/v1/tokens answers 409 beyond). 0: no cap.
  size_t max_tokens_per_user = 0;
  // HA: this server's role, reported by /readyz ("leader"); empty: a single server.
  std::string role;
  int64_t lease_token = 0;  // HA leader: the fencing token of its lease (abacus_ha_lease_token)
};

// Returns the HTTP status for a Status code (InvalidArgument 400, NotFound 404, ...).
int HttpStatusOf(StatusCode code);

class HttpServer {
 public:
  // The watches and log follows one user's API tokens may hold open at once (429 beyond).
  static constexpr size_t kLongPollsPerUser = 16;

  HttpServer(ControlPlane& cp, HttpOptions options);
  ~HttpServer();

  // Binds the listening socket; Unavailable naming the address when it cannot, InvalidArgument
  // when the TLS certificate or key cannot be loaded.
  Status Bind();
  // The bound port (after Bind).
  int port() const { return port_; }
  // "https" with a certificate, else "http".
  std::string scheme() const { return options_.tls_cert_file.empty() ? "http" : "https"; }
  // Serves until Stop; returns when the server has stopped.
  void Serve();
  // Returns whether Serve has started listening (Stop before that would be lost).
  bool serving() const;
  // Stops accepting and ends keep-alive connections; in-flight requests finish. Thread-safe.
  void Stop();
  // Serves one raw HTTP/1.1 request (the bytes a client would send on a connection) in-process,
  // without a socket, through the same parsing, limits, authentication, routes and audit as
  // Serve; returns the raw response bytes (status line, headers, body). For fuzzing and tests;
  // needs no Bind.
  std::string ServeRaw(std::string_view request);
  // Every route this server serves, with its access declaration (route_table.h).
  const RouteTable& routes() const { return *routes_; }

 private:
  void Routes();

  ControlPlane& cp_;
  HttpOptions options_;
  std::unique_ptr<httplib::Server> svr_;
  std::unique_ptr<RouteTable> routes_;  // every route and its access declaration (route_table.h)
  int port_ = 0;
};

}  // namespace abacus::server
