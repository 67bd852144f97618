#include "server/agent_api.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>

#include "server/control_plane.h"
#include "server/governance_api.h"
#include "server/http_answer.h"
#include "server/http_request.h"
#include "server/request_authorization.h"
#include "server/route_table.h"
#include "server/secrets.h"
#include "wire/agent_protocol.h"

namespace abacus::server {
namespace {

using govern::Action;
using nlohmann::json;

// The request's JSON object body (nesting and duplicate keys checked first: JsonBodyOr400), or
// nullopt with a 400 sent.
std::optional<json> AgentBody(const httplib::Request& req, httplib::Response& res) {
  std::optional<json> parsed = JsonBodyOr400(req, res);
  if (!parsed) return std::nullopt;
  if (!parsed->is_object()) {
    SendError(res, 400, "invalid_argument", "request body: expected a JSON object");
    return std::nullopt;
  }
  return std::move(*parsed);
}

// The node whose credential the pre-routing handler authenticated (the request's one
// authentication), or "" with a 403 sent: for any other caller, or for a node speaking for
// another (`claimed`, when not empty).
std::string NodeOf(httplib::Response& res, const std::string& claimed) {
  std::string node = RequestNode();
  if (node.empty()) {
    SendError(res, 403, "permission_denied", "agent calls need a node credential (from /api/v1/agent/register)");
    return "";
  }
  if (!claimed.empty() && claimed != node) {
    SendError(res, 403, "permission_denied", "credential of node " + node + " cannot speak for node " + claimed);
    return "";
  }
  return node;
}

// POST /api/v1/nodes/{NODE}/reset: as applying a node (admins), the entry about NODE.
Access NodeReset() {
  Access a = OnCluster(Action::kApplyConfig, "node", "node-reset", "node");
  a.named = true;
  return a;
}

// A handler of an agent's POST: the object body of the node the caller's credential names,
// handed to `call`, whose answer is sent.
template <typename Call>
RouteHandler AgentPost(Call call) {
  return [call](const httplib::Request& req, httplib::Response& res) {
    std::optional<json> body = AgentBody(req, res);
    if (!body) return;
    std::string node = NodeOf(res, body->value("node", ""));
    if (node.empty()) return;
    call(node, *body, res);
  };
}

}  // namespace

json AgentStatusJson(const AgentStatusAnswer& answer) { return json{{"ok", true}, {"unknown", answer.unknown}}; }

json AgentHeartbeatJson() { return json{{"ok", true}}; }

json AgentLogsJson(const AgentLogsAnswer& answer) {
  if (answer.conflict) {
    return json{{"error", {{"code", "aborted"}, {"message", *answer.conflict}}}, {"size", answer.size}};
  }
  json body = {{"ok", true}, {"size", answer.size}};
  if (answer.truncated) body["truncated"] = true;
  return body;
}

json NodeResetJson(const NodeResetAnswer& answer) {
  return json{{"node", answer.node}, {"reset", true}, {"message", answer.message}};
}

json AssignmentJson(const AssignmentBoard::Answer& answer, const std::string& node, SecretVault* vault) {
  json tasks = json::array();
  for (const auto& t : answer.tasks) {
    if (vault == nullptr || !t->secrets) {
      tasks.push_back(wire::ToJson(t->task));
      continue;
    }
    wire::TaskAssignment filled = t->task;  // the values only in this answer, never on the board
    vault->FillAssignment(node, *t->secrets, filled);
    tasks.push_back(wire::ToJson(filled));
  }
  return json{{"version", answer.version}, {"tasks", std::move(tasks)}};
}

void AddAgentRoutes(RouteTable& t, ControlPlane& cp) {
  t.Post("/api/v1/agent/register", ForAgent(Action::kAgentRegister, true, "agent-register", "node"),
         [&cp](const httplib::Request& req, httplib::Response& res) {
    std::optional<json> body = AgentBody(req, res);
    if (!body) return;
    auto r = cp.RegisterAgent(*body, CurrentRequest());
    if (!r.ok()) return SendStatus(res, r.status());
    SendJson(res, 200, wire::ToJson(*r));
  });
  t.Post("/api/v1/agent/status", ForAgent(Action::kAgentReport, false),
         AgentPost([&cp](const std::string& node, const json& body, httplib::Response& res) {
    auto r = cp.AgentStatus(node, body);
    if (!r.ok()) return SendStatus(res, r.status());
    SendJson(res, 200, AgentStatusJson(*r));
  }));
  t.Post("/api/v1/agent/heartbeat", ForAgent(Action::kAgentHeartbeat, false),
         AgentPost([&cp](const std::string& node, const json& body, httplib::Response& res) {
    Status st = cp.AgentHeartbeat(node, body);
    if (!st.ok()) return SendStatus(res, st);
    SendJson(res, 200, AgentHeartbeatJson());
  }));
  t.Post("/api/v1/agent/logs", ForAgent(Action::kAgentReport, false),
         AgentPost([&cp](const std::string& node, const json& body, httplib::Response& res) {
    auto r = cp.AgentLogs(node, body);
    if (!r.ok()) return SendStatus(res, r.status());
    SendJson(res, r->conflict ? 409 : 200, AgentLogsJson(*r));
  }));
  t.Get("/api/v1/agent/assignments", ForAgent(Action::kAgentHeartbeat, false),
        [&cp](const httplib::Request& req, httplib::Response& res) {
    std::string node = NodeOf(res, req.has_param("node") ? req.get_param_value("node") : "");
    if (node.empty()) return;
    Result<int64_t> after = IntParam(req, "after", 0, 0, std::numeric_limits<int64_t>::max());
    if (!after.ok()) return SendStatus(res, after.status());
    Result<int64_t> wait_ms = IntParam(req, "waitMs", 25000, 0, std::numeric_limits<int64_t>::max());
    if (!wait_ms.ok()) return SendStatus(res, wait_ms.status());
    using std::chrono::steady_clock;
    const auto deadline =
        CallerDeadline(cp, steady_clock::now() + std::chrono::milliseconds(std::min<int64_t>(*wait_ms, 60000)));
    while (true) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady_clock::now());
      auto answer = cp.WaitAssignments(node, static_cast<uint64_t>(*after), std::max(left, std::chrono::milliseconds(0)));
      if (!answer.ok()) return SendStatus(res, answer.status());
      if (!CallerStillStands(cp, req, res)) return;  // a credential reset while it waited: no secrets
      // Woken for another caller's credential change, with nothing new: wait on.
      if (answer->version == static_cast<uint64_t>(*after) && !answer->shut_down && steady_clock::now() < deadline) {
        continue;
      }
      return SendJson(res, 200, AssignmentJson(*answer, node, &cp.secrets()));
    }
  });
  t.Post(R"(/api/v1/nodes/([^/]+)/reset)", NodeReset(),
         [&cp](const httplib::Request& req, httplib::Response& res) {
    auto r = cp.ResetNode(req.matches[1], CurrentRequest());
    if (!r.ok()) return SendStatus(res, r.status());
    SendJson(res, 200, NodeResetJson(*r));
  });
}

}  // namespace abacus::server
