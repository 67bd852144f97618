// What the server knows of an agent node's liveness, for `get nodes`, `describe node` and the
// API (issue 20.20): the last time its agent was heard from, how long ago, whether heartbeats
// are late, and since when the node is NotReady.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "common/clock.h"

namespace abacus::server {

// Sets on `node` (a node's API JSON from ToJson): lastHeartbeatUs, the newer of the stored
// value and `last_seen` (the agent's last request, kept in memory); heartbeatAgeSeconds, `now`
// minus that; heartbeatLate, true while the node is Ready but silent for more than two
// heartbeat intervals; notReadySince (RFC 3339) next to notReadySinceUs when the node is
// NotReady. Nodes without an agent are left as they are.
void AddLiveness(nlohmann::json& node, std::optional<Time> last_seen, Time now, Duration heartbeat_interval);

}  // namespace abacus::server
