// FollowerServer: what a server that does not hold the scheduling lease answers on its address
// (HA, docs/operations.md "HA pair with PostgreSQL"). It keeps no ledger:
//   - /healthz: ok; /readyz: {"status":"ready","role":"follower","leader":URL} while a leader is
//     known, else 503; /metrics: abacus_ha_leader 0.
//   - agent calls (/api/v1/agent/...): 421 naming the leader (X-Abacus-Leader header and
//     error.leader), so that agents talk to the leader directly.
//   - everything else is forwarded to the leader (Forwarder) and answered with the leader's
//     answer; when no leader is known or it cannot be reached: 503 with Retry-After and, when
//     known, the leader's URL.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "common/status.h"
#include "server/ha_forward.h"
#include "server/ha_lease_keeper.h"
#include "server/http_server.h"

namespace httplib {
class Server;
}

namespace abacus::server {

// The follower listens as the leader's API would (host, port, body limit, threads, TLS, keep-alive
// of HttpOptions); rate limits and the role do not apply to it.
using FollowerOptions = HttpOptions;

class FollowerServer {
 public:
  // `view` tells the lease as this server sees it; its leader_address is where requests go ("":
  // none to go to, e.g. while this server takes over). `forwarder` must outlive the server.
  FollowerServer(std::function<LeaseView()> view, Forwarder& forwarder, FollowerOptions options);
  ~FollowerServer();
  FollowerServer(const FollowerServer&) = delete;
  FollowerServer& operator=(const FollowerServer&) = delete;

  // Binds the listening socket; Unavailable naming the address when it cannot.
  Status Bind();
  int port() const { return port_; }
  // Serves until Stop.
  void Serve();
  // Returns whether Serve has started listening.
  bool serving() const;
  // Stops accepting at once (the port is free when this returns). Requests in flight finish, and
  // each open keep-alive connection is served one more request if one comes before it idles out
  // (keep_alive_seconds); then Serve returns.
  void Stop();

 private:
  void Routes();
  // The leader to send a request to, or "" when none is known (or it is this server, taking over).
  std::string Leader() const;

  const std::function<LeaseView()> view_;
  Forwarder& forwarder_;
  const FollowerOptions options_;
  std::unique_ptr<httplib::Server> svr_;
  int port_ = 0;
};

}  // namespace abacus::server
