#include "server/fleet_api.h"

#include <httplib.h>

#include "common/duration_parse.h"
#include "net/http_framing.h"
#include "server/control_plane.h"
#include "server/error_detail.h"
#include "server/governance_api.h"
#include "server/http_answer.h"
#include "server/http_request.h"
#include "server/http_server.h"
#include "server/read_views_json.h"
#include "server/route_table.h"
#include "server/write_views_json.h"

namespace abacus::server {
namespace {

using govern::Action;
using nlohmann::json;

}  // namespace

void AddFleetRoutes(RouteTable& t, ControlPlane& cp) {
  // ---- a node's stored events: registrations, cordons, drains, device faults and recoveries
  t.Get(R"(/api/v1/nodes/([^/]+)/events)", OnCluster(Action::kRead, "node"),
        [&cp](const httplib::Request& req, httplib::Response& res) {
          Send(res, NodeEventsJson(cp.NodeEvents(req.matches[1])));
        });
  // ---- nodes: cordon, uncordon, drain {"grace": "10m", "requeue": false, "reason": "..."}
  for (bool cordon : {true, false}) {
    const std::string verb = cordon ? "cordon" : "uncordon";
    t.Post(R"(/api/v1/nodes/([^/]+)/)" + verb, OnCluster(Action::kNodeControl, "node", verb, "node", true),
           [&cp, cordon](const httplib::Request& req, httplib::Response& res) {
             std::optional<json> body = ActionBodyOr400(req, res, {"reason"}, R"({} or {"reason": "..."})");
             if (!body) return;
             Result<std::string> reason = StringField(*body, "reason");
             if (!reason.ok()) return SendStatus(res, reason.status());
             Send(res, NodeJson(cp.CordonNode(req.matches[1], cordon, RequestPrincipal().name, *reason,
                                              CurrentRequest())));
           });
  }
  t.Post(R"(/api/v1/nodes/([^/]+)/drain)", OnCluster(Action::kNodeControl, "node", "drain", "node", true),
         [&cp](const httplib::Request& req, httplib::Response& res) {
    std::optional<json> body = ActionBodyOr400(req, res, {"grace", "requeue", "reason"},
                                               R"({"grace": "10m", "requeue": false, "reason": "..."}, each optional)");
    if (!body) return;
    DrainOrder order;
    order.by = RequestPrincipal().name;
    Result<std::string> reason = StringField(*body, "reason");
    if (!reason.ok()) return SendStatus(res, reason.status());
    order.reason = *reason;
    if (body->contains("grace")) {
      if (!(*body)["grace"].is_string()) return SendStatus(res, InvalidArgument("grace: expected a duration like \"10m\""));
      auto grace = ParseDurationSpec((*body)["grace"].get<std::string>());
      if (!grace.ok()) return SendStatus(res, grace.status().WithContext("grace"));
      order.grace = *grace;
    }
    if (body->contains("requeue")) {
      if (!(*body)["requeue"].is_boolean()) return SendStatus(res, InvalidArgument("requeue: expected true or false"));
      order.requeue_all = (*body)["requeue"].get<bool>();
    }
    Send(res, NodeJson(cp.DrainNode(req.matches[1], order, CurrentRequest())));
  });

  // ---- workloads: hold, release, suspend, resume, requeue; priority {"priority": "N"|"class"}
  for (WorkloadControl c : {WorkloadControl::kHold, WorkloadControl::kRelease, WorkloadControl::kSuspend,
                            WorkloadControl::kResume, WorkloadControl::kRequeue}) {
    const std::string verb(WorkloadControlName(c));
    t.Post(R"(/api/v1/workloads/([^/]+)/)" + verb,
           OnWorkload(c == WorkloadControl::kRequeue ? Action::kRequeue : Action::kHold, verb),
           [&cp, c](const httplib::Request& req, httplib::Response& res) {
             // No field is read, but a body sent is checked like any other (nesting, JSON object).
             if (!ActionBodyOr400(req, res, {}, "{} or no body")) return;
             Send(res, WorkloadViewJson(cp.ControlWorkload(RequestWorkloadId(req.matches[1]), c,
                                                           RequestPrincipal().name, CurrentRequest())));
           });
  }
  t.Post(R"(/api/v1/workloads/([^/]+)/priority)", OnWorkload(Action::kPriorityChange, "priority-change"),
         [&cp](const httplib::Request& req, httplib::Response& res) {
    std::optional<json> body =
        ActionBodyOr400(req, res, {"priority"}, R"({"priority": N} or {"priority": "CLASS"})");
    if (!body) return;
    std::string priority;
    if (body->contains("priority") && (*body)["priority"].is_number_integer()) {
      priority = std::to_string((*body)["priority"].get<int64_t>());
    } else {
      Result<std::string> named = StringField(*body, "priority");
      if (named.ok()) priority = *named;  // anything else: the 400 below says what is expected
    }
    if (priority.empty()) {
      return SendStatus(res, InvalidArgument("body: expected {\"priority\": N} or {\"priority\": \"CLASS\"}"));
    }
    Send(res, WorkloadViewJson(cp.SetWorkloadPriority(RequestWorkloadId(req.matches[1]), priority,
                                                      RequestPrincipal().name, CurrentRequest())));
  });

  // ---- queues: suspend, resume
  for (bool suspend : {true, false}) {
    const std::string verb = suspend ? "suspend" : "resume";
    t.Post(R"(/api/v1/queues/([^/]+)/)" + verb, OnQueue(Action::kQueueControl, verb),
           [&cp, suspend](const httplib::Request& req, httplib::Response& res) {
             if (!ActionBodyOr400(req, res, {}, "{} or no body")) return;
             auto suspended =
                 cp.SuspendQueue(req.matches[1], suspend, RequestPrincipal().name, CurrentRequest());
             Send(res, QueueSuspendJson(suspended));
           });
  }
}

}  // namespace abacus::server
