// Running a server process: control plane + HTTP until SIGTERM/SIGINT, then a graceful
// shutdown (stop accepting, finish in-flight requests, drain the committer, close the store).
#pragma once

#include <signal.h>

#include <functional>
#include <string>

#include "common/status.h"
#include "server/control_plane.h"
#include "server/http_server.h"

namespace abacus::server {

struct RunOptions {
  std::string data_dir = ".abacus";
  std::string listen = "127.0.0.1:8420";  // HOST:PORT; port 0 picks a free one
  std::string store_url;                  // empty: sqlite://DATA/abacus.db
  size_t max_body_bytes = 8 << 20;
  int http_threads = 96;
  int http_running = 0;  // 0: four per core
  // The front door (HttpOptions): a request head's deadline, open connections per client.
  int header_timeout_seconds = 10;
  size_t max_connections_per_client = 512;
  std::string tls_cert_file, tls_key_file;  // both set: HTTPS
  int heartbeat_seconds = 5;      // told to agents
  int node_timeout_seconds = 30;  // a silent agent node becomes NotReady, its tasks fail over
  FencingPolicy fencing;          // … once node timeout + the task's fencing grace have passed
  double rate_limit = 200;        // requests a second per token (0: none), see HttpOptions
  double rate_burst = 400;
  // Audit anchors: key file and append-only anchor file; empty: DATA/audit.key, DATA/audit.anchors.
  std::string audit_key_file, audit_anchor_file;
  std::string secrets_key_file, secrets_keyring_file;  // server/secrets.h; empty: DATA/secrets.key, DATA/secrets.keyring
  Duration audit_check_every = std::chrono::minutes(30);  // background chain check (0: never)
  // Fair share over time (docs/scheduler.md): half-life of past usage, Slurm's default 7 days; 0: off.
  Duration fair_share_half_life = std::chrono::hours(24 * 7);
  HealthPolicy health;  // device faults, probation, the health cordon (device_health.h)
  double tenant_rate_limit = 1000;  // requests a second per tenant, all its users together (0: none)
  double tenant_rate_burst = 2000;
  size_t max_tokens_per_user = 20;  // active API tokens per user (0: no cap)
  int64_t max_task_log_bytes = int64_t{64} << 20;  // stored output per task and stream (0: no bound)
  // HA (docs/operations.md "HA pair with PostgreSQL"): several servers share the store; the one
  // holding the scheduling lease runs the ledger, the loop and the API, the others forward to it.
  bool ha = false;
  std::string advertise;  // this server's URL for the others and for agents; empty: from --listen
  Duration lease_ttl = std::chrono::seconds(5);
  Duration lease_renew = std::chrono::seconds(1);
  // Called once the server listens, with its base URL ("http://127.0.0.1:8420"); may load
  // data (the demo) through the control plane. A non-OK status stops the server.
  std::function<Status(ControlPlane&, const std::string& url)> on_ready;
  // Called on SIGTERM/SIGINT before the HTTP server stops (local agents stop their tasks then).
  std::function<void()> on_stopping;
};

// Splits "HOST:PORT" ("127.0.0.1:8420", ":8420", "[::1]:8420"); InvalidArgument otherwise, its
// message without the option's name (the caller says where the value came from).
Result<std::pair<std::string, int>> ParseListen(const std::string& listen);

// Serves until SIGTERM or SIGINT. Writes DATA/server.url once listening. Returns the process
// exit code: 0 after a clean shutdown, 1 when the server could not start. With `ha`, runs
// RunHaServer (server/ha_server.h); on_ready and on_stopping are not called then.
int RunServer(const RunOptions& options);
// Returns the HTTP options of `options` (body limit, threads, TLS, rate limits) on host:port.
HttpOptions HttpOptionsFor(const RunOptions& options, const std::string& host, int port);
// Blocks SIGTERM and SIGINT in the calling thread (and the threads it starts later) and ignores
// SIGPIPE; returns the set for the thread that sigwaits on it.
sigset_t BlockShutdownSignals();

}  // namespace abacus::server
