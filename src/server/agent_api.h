// The agent service's routes (docs/agent-protocol.md): the join token registers a node, its node
// credential does the rest for that node only.
//   POST /api/v1/agent/register      — ControlPlane::RegisterAgent (join token; audited)
//   POST /api/v1/agent/status        — ControlPlane::AgentStatus
//   POST /api/v1/agent/heartbeat     — ControlPlane::AgentHeartbeat
//   POST /api/v1/agent/logs          — ControlPlane::AgentLogs (409 with the stored size)
//   GET  /api/v1/agent/assignments   — ControlPlane::WaitAssignments, the long poll
//   POST /api/v1/nodes/{NODE}/reset  — ControlPlane::ResetNode (admins; audited as node-reset)
// Governance authenticates the node and authorizes each call by its declaration before the
// handler runs (governance_api.cc).
// The JSON of each answer is written here, at the edge, from the typed answers of ControlPlane
// (agent_answers.h; the registration's with wire::ToJson).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "server/agent_answers.h"
#include "server/assignments.h"

namespace abacus::server {

class ControlPlane;
class RouteTable;
class SecretVault;

// Adds the routes above to `t`.
void AddAgentRoutes(RouteTable& t, ControlPlane& cp);

// The body of a status report's answer: {"ok": true, "unknown": [task ids]}.
nlohmann::json AgentStatusJson(const AgentStatusAnswer& answer);
// The body of a heartbeat's answer: {"ok": true}.
nlohmann::json AgentHeartbeatJson();
// The body of a log upload's answer: {"ok": true, "size", "truncated" when set}; a conflict is
// {"error": {"code": "aborted", "message"}, "size"} (sent with 409).
nlohmann::json AgentLogsJson(const AgentLogsAnswer& answer);
// The body of a node reset's answer: {"node", "reset": true, "message"}.
nlohmann::json NodeResetJson(const NodeResetAnswer& answer);
// The body of the long poll's answer: {"version", "tasks"}, each task as wire::ToJson writes it,
// the values of its secrets opened by `vault` on a copy for this answer only (null: none opened).
nlohmann::json AssignmentJson(const AssignmentBoard::Answer& answer, const std::string& node, SecretVault* vault);

}  // namespace abacus::server
