#include "server/fleet_api.h"

#include <httplib.h>

#include "common/duration_parse.h"
#include "common/nesting.h"
#include "net/http_framing.h"
#include "server/control_plane.h"
#include "server/error_detail.h"
#include "server/governance_api.h"
#include "server/http_server.h"

namespace abacus::server {
namespace {

using nlohmann::json;

void SendError(httplib::Response& res, const Status& given) {
  Status st = ForCaller(given);  // no store detail for non-admins (error_detail.h)
  res.status = HttpStatusOf(st.code());
  res.set_content(json({{"error", {{"code", StatusCodeName(st.code())}, {"message", net::CapAnswerText(st.message())}}}})
                      .dump(-1, ' ', false, json::error_handler_t::replace),
                  "application/json");
}

void Send(httplib::Response& res, const Result<json>& r) {
  if (!r.ok()) return SendError(res, r.status());
  res.status = 200;
  res.set_content(r->dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

// The request's JSON object body ({} when empty), or nullopt with a 400 sent.
std::optional<json> ObjectBody(const httplib::Request& req, httplib::Response& res) {
  auto parsed = ParseJsonBody(req.body.empty() ? std::string_view("{}") : std::string_view(req.body));
  if (!parsed.ok()) {
    SendError(res, parsed.status());
    return std::nullopt;
  }
  if (!parsed->is_object()) {
    SendError(res, InvalidArgument("body: expected a JSON object"));
    return std::nullopt;
  }
  return std::move(*parsed);
}

std::string StringField(const json& body, const char* name) {
  return body.contains(name) && body[name].is_string() ? body[name].get<std::string>() : "";
}

}  // namespace

void AddFleetRoutes(httplib::Server& s, ControlPlane& cp) {
  // ---- a node's stored events: registrations, cordons, drains, device faults and recoveries
  s.Get(R"(/api/v1/nodes/([^/]+)/events)", [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, cp.NodeEvents(req.matches[1]));
  });
  // ---- nodes: cordon, uncordon, drain {"grace": "10m", "requeue": false, "reason": "..."}
  for (bool cordon : {true, false}) {
    s.Post(std::string(R"(/api/v1/nodes/([^/]+)/)") + (cordon ? "cordon" : "uncordon"),
           [&cp, cordon](const httplib::Request& req, httplib::Response& res) {
             std::optional<json> body = ObjectBody(req, res);
             if (!body) return;
             Send(res, cp.CordonNode(req.matches[1], cordon, RequestPrincipal().name, StringField(*body, "reason")));
           });
  }
  s.Post(R"(/api/v1/nodes/([^/]+)/drain)", [&cp](const httplib::Request& req, httplib::Response& res) {
    std::optional<json> body = ObjectBody(req, res);
    if (!body) return;
    DrainOrder order;
    order.by = RequestPrincipal().name;
    order.reason = StringField(*body, "reason");
    if (body->contains("grace")) {
      if (!(*body)["grace"].is_string()) return SendError(res, InvalidArgument("grace: expected a duration like \"10m\""));
      auto grace = ParseDurationSpec((*body)["grace"].get<std::string>());
      if (!grace.ok()) return SendError(res, grace.status().WithContext("grace"));
      order.grace = *grace;
    }
    if (body->contains("requeue")) {
      if (!(*body)["requeue"].is_boolean()) return SendError(res, InvalidArgument("requeue: expected true or false"));
      order.requeue_all = (*body)["requeue"].get<bool>();
    }
    Send(res, cp.DrainNode(req.matches[1], order));
  });

  // ---- workloads: hold, release, suspend, resume, requeue; priority {"priority": "N"|"class"}
  for (WorkloadControl c : {WorkloadControl::kHold, WorkloadControl::kRelease, WorkloadControl::kSuspend,
                            WorkloadControl::kResume, WorkloadControl::kRequeue}) {
    s.Post(std::string(R"(/api/v1/workloads/([^/]+)/)") + std::string(WorkloadControlName(c)),
           [&cp, c](const httplib::Request& req, httplib::Response& res) {
             // No field is read, but a body sent is checked like any other (nesting, JSON object).
             if (!ObjectBody(req, res)) return;
             Send(res, cp.ControlWorkload(RequestWorkloadId(req.matches[1]), c, RequestPrincipal().name));
           });
  }
  s.Post(R"(/api/v1/workloads/([^/]+)/priority)", [&cp](const httplib::Request& req, httplib::Response& res) {
    std::optional<json> body = ObjectBody(req, res);
    if (!body) return;
    std::string priority;
    if (body->contains("priority") && (*body)["priority"].is_number_integer()) {
      priority = std::to_string((*body)["priority"].get<int64_t>());
    } else {
      priority = StringField(*body, "priority");
    }
    if (priority.empty()) {
      return SendError(res, InvalidArgument("body: expected {\"priority\": N} or {\"priority\": \"CLASS\"}"));
    }
    Send(res, cp.SetWorkloadPriority(RequestWorkloadId(req.matches[1]), priority, RequestPrincipal().name));
  });

  // ---- queues: suspend, resume
  for (bool suspend : {true, false}) {
    s.Post(std::string(R"(/api/v1/queues/([^/]+)/)") + (suspend ? "suspend" : "resume"),
           [&cp, suspend](const httplib::Request& req, httplib::Response& res) {
             if (!ObjectBody(req, res)) return;
             Send(res, cp.SuspendQueue(req.matches[1], suspend, RequestPrincipal().name));
           });
  }
}

}  // namespace abacus::server
