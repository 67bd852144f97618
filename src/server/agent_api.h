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
#pragma once

namespace abacus::server {

class ControlPlane;
class RouteTable;

// Adds the routes above to `t`.
void AddAgentRoutes(RouteTable& t, ControlPlane& cp);

}  // namespace abacus::server
