// What the server knows of an agent node's liveness, for `get nodes`, `describe node` and the
// API (issue 20.20): the last time its agent was heard from, how long ago, whether heartbeats
// are late, and since when the node is NotReady.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

#include "common/clock.h"
#include "server/records.h"

namespace abacus::server {

// An agent node's liveness as the read model shows it.
struct NodeLiveness {
  int64_t last_heartbeat_us = 0;  // the newer of the stored heartbeat and the agent's last request
  int64_t heartbeat_age_seconds = 0;
  bool heartbeat_late = false;  // Ready but silent for more than two heartbeat intervals
};

// Returns the liveness of `node` given `last_seen` (the agent's last request, kept in memory) at
// `now`; nullopt for nodes without an agent or never heard from.
std::optional<NodeLiveness> LivenessOf(const NodeRecord& node, std::optional<Time> last_seen, Time now,
                                       Duration heartbeat_interval);

// Sets on `node` (a node's API JSON from ToJson) what `liveness` holds: lastHeartbeatUs,
// lastHeartbeat (RFC 3339), heartbeatAgeSeconds, heartbeatLate; notReadySince (RFC 3339) next to
// notReadySinceUs when the node is NotReady. Without liveness the node is left as it is.
void AddLiveness(nlohmann::json& node, const std::optional<NodeLiveness>& liveness);

}  // namespace abacus::server
