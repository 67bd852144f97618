// What `abacus gateway` wants HAProxy to route to for one service, and the HAProxy runtime API
// commands (management guide, "add server", "del server", "set server") that take a backend
// from what it has to that — no reload, so established connections are kept.
//
// Wanted servers come from the service's endpoints (GET /api/v1/services/{S}/endpoints,
// docs/api.md): one server per endpoint, named after its task id; a ready serving replica is
// `ready`, a draining one `drain` (no new requests, its open ones finish), one not ready `maint`.
// Weights split the requests by rollout: while a canary runs, the canary replicas together get
// canaryPercent of the weight and the stable ones the rest; otherwise every server weighs the
// same.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace abacus::gateway {

enum class ServerAdmin { kReady, kDrain, kMaint };
// Returns "ready", "drain" or "maint" (the runtime API's words).
const char* ServerAdminName(ServerAdmin a);

struct ServerWant {
  std::string address;  // host:port
  int weight = 1;       // 0..256
  ServerAdmin admin = ServerAdmin::kReady;
  bool operator==(const ServerWant&) const = default;
};

// Server name → what it should be.
using ServerSet = std::map<std::string, ServerWant>;

// Returns the HAProxy server name of a task id ("t-" and the id, '.' kept: names may hold it).
std::string ServerName(const std::string& task_id);

// Returns the servers `endpoints` (one GET …/endpoints answer) ask for.
ServerSet WantedServers(const nlohmann::json& endpoints);

// Returns the runtime API commands that take backend `backend` from `have` to `want`, in order:
// new servers are added (in maint), weighted, health-checked when `health_checks`, then set to
// their state; changed ones get their weight and state; servers no longer wanted are set to
// maint, their sessions shut, then deleted.
std::vector<std::string> PlanCommands(const std::string& backend, const ServerSet& have, const ServerSet& want,
                                      bool health_checks);

}  // namespace abacus::gateway
