// RunHaServer: `abacus server --ha` (docs/operations.md "HA pair with PostgreSQL"). Several
// servers share one store; each runs a LeaseKeeper, and exactly one — the lease holder — opens a
// ControlPlane (the ledger loaded from the store, the scheduling loop, the controllers) whose
// every commit carries the lease's fencing token, and serves the API on its address. The others
// serve a FollowerServer on theirs: requests are forwarded to the leader, agents are sent there.
//
//   follower --(lease taken)--> load the ledger, then swap the follower for the API: leader
//   leader   --(lease lost)---> stop the loop at once, swap the API back for the follower, let
//                               requests in flight finish (their commits are fenced), close
//
// SIGTERM/SIGINT: a leader finishes its requests, drains its commits and releases the lease, so
// that a follower takes over within one renewal instead of a ttl.
#pragma once

#include "server/run.h"

namespace abacus::server {

// Serves as one server of an HA group until SIGTERM or SIGINT. Writes DATA/server.url once
// listening. Returns the process exit code: 0 after a clean shutdown, 1 when it could not start.
int RunHaServer(const RunOptions& options);

// Returns the URL this server advertises: `advertise` when set, else SCHEME://HOST:PORT of the
// listening address, with this machine's host name for a wildcard host (0.0.0.0, ::).
std::string AdvertisedUrl(const std::string& advertise, const std::string& scheme, const std::string& host,
                          int port);

}  // namespace abacus::server
