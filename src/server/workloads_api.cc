#include "server/workloads_api.h"

#include <httplib.h>

#include <chrono>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "server/control_plane.h"
#include "server/http_answer.h"
#include "server/http_request.h"
#include "server/logs_api.h"
#include "server/read_views_json.h"
#include "server/request_authorization.h"
#include "server/request_thread.h"
#include "server/route_table.h"
#include "server/watch_api.h"
#include "server/write_views_json.h"
#include "workload/label_selector.h"
#include "workload/lifecycle.h"
#include "workload/workload.h"

namespace abacus::server {

using govern::Action;
using nlohmann::json;

void AddWorkloadRoutes(RouteTable& t, ControlPlane& cp) {
  t.Post("/api/v1/workloads", WithDryRun(AnyUser("create", "workload")),
         [&cp](const httplib::Request& req, httplib::Response& res) {
    auto start = std::chrono::steady_clock::now();
    const bool dry_run = IsDryRun(req);
    auto r = cp.Submit(req.body, IsJsonBody(req), Param(req, "filename", "request"), &RequestPrincipal(),
                        dry_run ? IdempotentRequest{} : KeyedRequest(req), dry_run, CurrentRequest());
    if (!r.ok()) {
      SendStatus(res, r.status());
    } else {
      SendJson(res, dry_run ? 200 : 201,
               {{"items", KeyedJson(*r, [](const SubmitView& s) { return SubmitJson(s); })}});
    }
    cp.metrics().request_seconds.Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  });
  t.Get("/api/v1/workloads", AnyUser(), [&cp](const httplib::Request& req, httplib::Response& res) {
    WorkloadFilter f;
    f.queue = Param(req, "queue");
    f.state = Param(req, "state");
    f.project = Param(req, "project");
    f.tenant = Param(req, "tenant");
    f.kind = Param(req, "kind");
    f.name = Param(req, "name");
    f.user = Param(req, "user");
    // A state or kind no workload can have is a typo: refused, not answered with an empty list.
    if (!f.state.empty()) {
      if (auto st = ParseWorkloadState(f.state); !st.ok()) return SendStatus(res, st.status().WithContext("state"));
    }
    if (!f.kind.empty()) {
      if (auto k = ParseWorkloadKind(f.kind); !k.ok()) return SendStatus(res, k.status().WithContext("kind"));
    }
    f.visible = RequestWorkloadFilter();
    auto selector = LabelSelector::Parse(Param(req, "labelSelector"));
    if (!selector.ok()) return SendError(res, 400, "invalid_argument", "labelSelector: " + selector.status().message());
    f.selector = std::move(*selector);
    Result<int64_t> limit = IntParam(req, "limit", 1000, 0, std::numeric_limits<int64_t>::max());
    if (!limit.ok()) return SendStatus(res, limit.status());
    f.limit = static_cast<size_t>(*limit);
    if (IsWatchRequest(req)) return ServeWorkloadWatch(cp, std::move(f), req, res);  // watch_api.h
    SendJson(res, 200, ListWorkloadsJson(cp, f));
  });
  t.Get(R"(/api/v1/workloads/([^/]+))", OnWorkload(Action::kRead),
        [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, WorkloadViewJson(cp.GetWorkload(RequestWorkloadId(req.matches[1]))));
  });
  // Updates of a workload that exists (issue 19.4, workload_update.h): PUT the whole document,
  // PATCH a JSON merge patch, POST …/rollback {"revision": N} (default: the one before); an
  // immutable field changed is 422 naming each.
  auto update = [&cp](const httplib::Request& req, httplib::Response& res, bool patch, int32_t rollback_to) {
    std::vector<std::string> immutable;
    auto r = cp.UpdateWorkload(RequestWorkloadId(req.matches[1]), req.body, IsJsonBody(req), patch, rollback_to, &RequestPrincipal(),
                                &immutable, IsDryRun(req), CurrentRequest());
    if (!r.ok() && !immutable.empty()) {
      SendError(res, 422, "immutable_field", r.status().message());
      return;
    }
    Send(res, UpdateJson(r));
  };
  t.Put(R"(/api/v1/workloads/([^/]+))", WithDryRun(OnWorkload(Action::kUpdate, "update")),
        [update](const httplib::Request& req, httplib::Response& res) {
    update(req, res, false, -1);
  });
  t.Patch(R"(/api/v1/workloads/([^/]+))", WithDryRun(OnWorkload(Action::kUpdate, "update")),
          [update](const httplib::Request& req, httplib::Response& res) {
    update(req, res, true, -1);
  });
  t.Post(R"(/api/v1/workloads/([^/]+)/rollback)", OnWorkload(Action::kUpdate, "update"),
         [update](const httplib::Request& req, httplib::Response& res) {
    std::optional<json> parsed = ActionBodyOr400(req, res, {"revision"}, R"({} or {"revision": N})");
    if (!parsed) return;
    json body = std::move(*parsed);
    if ((body.contains("revision") && !body["revision"].is_number_integer()) || body.value("revision", 0) < 0) {
      return SendError(res, 400, "invalid_argument", "body: expected {} or {\"revision\": N}");
    }
    update(req, res, false, body.value("revision", 0));
  });
  t.Get(R"(/api/v1/workloads/([^/]+)/revisions)", OnWorkload(Action::kRead),
        [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, RevisionsJson(cp.Revisions(RequestWorkloadId(req.matches[1]))));
  });
  t.Delete(R"(/api/v1/workloads/([^/]+))", OnWorkload(Action::kCancel, "cancel"),
           [&cp](const httplib::Request& req, httplib::Response& res) {
    const std::string reason = Param(req, "reason");
    auto cancelled = cp.Cancel(RequestWorkloadId(req.matches[1]), reason, KeyedRequest(req),
                                CurrentRequest());
    Send(res, WorkloadViewJson(cancelled));
  });
  t.Post(R"(/api/v1/workloads/([^/]+)/cancel)", OnWorkload(Action::kCancel, "cancel"),
         [&cp](const httplib::Request& req, httplib::Response& res) {
    std::string reason = Param(req, "reason");
    std::optional<json> parsed = ActionBodyOr400(req, res, {"reason"}, R"({} or {"reason": "..."})");
    if (!parsed) return;
    json& body = *parsed;
    if (body.contains("reason") && !body["reason"].is_string()) {
      return SendError(res, 400, "invalid_argument", "body: expected {} or {\"reason\": \"...\"}");
    }
    if (body.contains("reason")) reason = body["reason"];
    auto cancelled = cp.Cancel(RequestWorkloadId(req.matches[1]), reason, KeyedRequest(req),
                                CurrentRequest());
    Send(res, WorkloadViewJson(cancelled));
  });
  t.Post(R"(/api/v1/workloads/([^/]+)/scale)", OnWorkload(Action::kScale, "scale"),
         [&cp](const httplib::Request& req, httplib::Response& res) {
    std::optional<json> parsed = ActionBodyOr400(req, res, {"replicas"}, R"({"replicas": N})", "");
    if (!parsed) return;
    json& body = *parsed;
    if (!body.contains("replicas") || !body["replicas"].is_number_integer() ||
        body["replicas"].get<int64_t>() < std::numeric_limits<int32_t>::min() ||
        body["replicas"].get<int64_t>() > std::numeric_limits<int32_t>::max()) {
      return SendError(res, 400, "invalid_argument", "body: expected {\"replicas\": N}");
    }
    Send(res, WorkloadViewJson(cp.Scale(RequestWorkloadId(req.matches[1]), body["replicas"].get<int32_t>(),
                                         KeyedRequest(req), CurrentRequest())));
  });
  t.Post(R"(/api/v1/workloads/([^/]+)/quota)", OnWorkload(Action::kQuotaChange, "quota-decision"),
         [&cp](const httplib::Request& req, httplib::Response& res) {
    std::optional<json> parsed =
        ActionBodyOr400(req, res, {"approve"}, R"({"approve": true} or {"approve": false})", "");
    if (!parsed) return;
    json& body = *parsed;
    if (!body.contains("approve") || !body["approve"].is_boolean()) {
      return SendError(res, 400, "invalid_argument", "body: expected {\"approve\": true} or {\"approve\": false}");
    }
    const govern::Principal& who = RequestPrincipal();
    auto decided = cp.DecideTemporaryQuota(RequestWorkloadId(req.matches[1]), body["approve"].get<bool>(),
                                            who.name.empty() ? "admin" : who.name, CurrentRequest());
    Send(res, WorkloadViewJson(decided));
  });
  t.Post(R"(/api/v1/workloads/([^/]+)/metrics)", OnWorkload(Action::kUpdate, "update"),
         [&cp](const httplib::Request& req, httplib::Response& res) {
    std::optional<json> parsed = JsonBodyOr400(req, res);
    if (!parsed) return;
    Send(res, MetricsAcceptedJson(cp.ReportMetrics(RequestWorkloadId(req.matches[1]), *parsed)));
  });
  t.Get(R"(/api/v1/workloads/([^/]+)/explain)", OnWorkload(Action::kRead),
        [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, ExplainJson(cp.Explain(RequestWorkloadId(req.matches[1]))));
  });
  t.Get(R"(/api/v1/workloads/([^/]+)/events)", OnWorkload(Action::kRead),
        [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, WorkloadEventsJson(cp.Events(RequestWorkloadId(req.matches[1]))));
  });
  t.Get(R"(/api/v1/workloads/([^/]+)/logs)", OnWorkload(Action::kRead),
        [&cp](const httplib::Request& req, httplib::Response& res) {
    if (IsLogFollow(req)) return ServeLogFollow(cp, RequestWorkloadId(req.matches[1]), req, res);  // logs -f
    Result<int64_t> tail = IntParam(req, "tail", 1 << 20, 0, std::numeric_limits<int64_t>::max());  // bytes
    if (!tail.ok()) return SendStatus(res, tail.status());
    Send(res, TaskLogJson(cp.Logs(RequestWorkloadId(req.matches[1]), Param(req, "task"),
                                   Param(req, "stream", "stdout"), *tail)));
  });
}

}  // namespace abacus::server
