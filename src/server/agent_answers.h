// What the agent service's methods answer (ControlPlane::AgentStatus, AgentLogs, ResetNode),
// typed; the HTTP edge encodes them (agent_api.h). The registration answers the protocol's own
// message, wire::RegisterAnswer (wire/agent_protocol.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace abacus::server {

// POST /api/v1/agent/status: the reports were queued; `unknown` lists the task ids that name no
// task (the agent stops reporting them).
struct AgentStatusAnswer {
  std::vector<std::string> unknown;
};

// POST /api/v1/agent/logs: the stored size of the task's stream after the call.
struct AgentLogsAnswer {
  int64_t size = 0;
  bool truncated = false;                // the output past the bound was dropped
  std::optional<std::string> conflict;  // the offset is past `size`: why (the agent resends from `size`)
};

// POST /api/v1/nodes/{NODE}/reset: the node whose credential was revoked.
struct NodeResetAnswer {
  std::string node;
  std::string message;
};

}  // namespace abacus::server
