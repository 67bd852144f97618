// Running a server process: control plane + HTTP until SIGTERM/SIGINT, then a graceful
// shutdown (stop accepting, finish in-flight requests, drain the committer, close the store).
#pragma once

#include <functional>
#include <string>

#include "common/status.h"
#include "server/control_plane.h"

namespace abacus::server {

struct RunOptions {
  std::string data_dir = ".abacus";
  std::string listen = "127.0.0.1:8420";  // HOST:PORT; port 0 picks a free one
  std::string store_url;                  // empty: sqlite://DATA/abacus.db
  size_t max_body_bytes = 8 << 20;
  int http_threads = 96;
  std::string tls_cert_file, tls_key_file;  // both set: HTTPS
  int heartbeat_seconds = 5;      // told to agents
  int node_timeout_seconds = 30;  // a silent agent node becomes NotReady, its tasks fail over
  double rate_limit = 200;        // requests a second per token (0: none), see HttpOptions
  double rate_burst = 400;
  // Called once the server listens, with its base URL ("http://127.0.0.1:8420"); may load
  // data (the demo) through the control plane. A non-OK status stops the server.
  std::function<Status(ControlPlane&, const std::string& url)> on_ready;
  // Called on SIGTERM/SIGINT before the HTTP server stops (local agents stop their tasks then).
  std::function<void()> on_stopping;
};

// Splits "HOST:PORT" ("127.0.0.1:8420", ":8420", "[::1]:8420"); InvalidArgument otherwise.
Result<std::pair<std::string, int>> ParseListen(const std::string& listen);

// Serves until SIGTERM or SIGINT. Writes DATA/server.url once listening. Returns the process
// exit code: 0 after a clean shutdown, 1 when the server could not start.
int RunServer(const RunOptions& options);

}  // namespace abacus::server
