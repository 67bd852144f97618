#include "server/http_server.h"

#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <optional>

#include "common/log.h"
#include "common/nesting.h"
#include "common/thread_name.h"
#include "net/http_framing.h"
#include "net/http_transport.h"
#include "server/agent_api.h"
#include "server/config_api.h"
#include "server/error_detail.h"
#include "server/evaluations_api.h"
#include "server/fleet_api.h"
#include "server/governance_api.h"
#include "server/endpoints_api.h"
#include "server/http_answer.h"
#include "server/logs_api.h"
#include "server/metering_api.h"
#include "server/ui_routes.h"
#include "server/watch_api.h"
#include "server/write_views_json.h"
#include "server/read_views_json.h"
#include "server/reservations_api.h"
#include "server/route_table.h"
#include "server/shares_api.h"
#include "server/whoami_api.h"

namespace abacus::server {
namespace {

using nlohmann::json;
using govern::Action;

std::string_view CodeForHttp(int status) {
  switch (status) {
    case 400: return "invalid_argument";
    case 401: return "unauthenticated";
    case 403: return "permission_denied";
    case 404: return "not_found";
    case 405: return "method_not_allowed";
    case 409: return "failed_precondition";
    case 413: return "payload_too_large";
    case 416: return "out_of_range";
    case 429: return "resource_exhausted";
    case 503: return "unavailable";
    default: return status >= 500 ? "internal" : "error";
  }
}

bool IsJsonBody(const httplib::Request& req) {
  std::string ct = req.get_header_value("Content-Type");
  if (ct.find("json") != std::string::npos) return true;
  if (ct.find("yaml") != std::string::npos) return false;
  size_t i = req.body.find_first_not_of(" \t\r\n");
  return i != std::string::npos && (req.body[i] == '{' || req.body[i] == '[');
}

// The request's JSON body, read with the limits every route shares (nesting depth before
// parsing, duplicate keys: ParseJsonBody); a refused body is answered 400 here and nullopt
// returned. An empty body reads as `if_empty`.
std::optional<json> JsonBodyOr400(const httplib::Request& req, httplib::Response& res, std::string_view if_empty = "") {
  auto parsed = ParseJsonBody(req.body.empty() && !if_empty.empty() ? if_empty : std::string_view(req.body));
  if (!parsed.ok()) {
    SendStatus(res, parsed.status());
    return std::nullopt;
  }
  return std::move(*parsed);
}

std::string Param(const httplib::Request& req, const char* name, std::string fallback = "") {
  return req.has_param(name) ? req.get_param_value(name) : fallback;
}

// The request as its Idempotency-Key names it (server/idempotency.h): unkeyed without the header.
IdempotentRequest KeyedRequest(const httplib::Request& req) {
  std::string key = req.get_header_value("Idempotency-Key");
  if (key.empty()) return {};
  std::vector<std::pair<std::string, std::string>> params(req.params.begin(), req.params.end());
  return DescribeRequest(RequestPrincipal().name, std::move(key), req.method, req.path, params, req.body);
}

}  // namespace

int HttpStatusOf(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return 200;
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange: return 400;
    case StatusCode::kUnauthenticated: return 401;
    case StatusCode::kPermissionDenied: return 403;
    case StatusCode::kNotFound: return 404;
    case StatusCode::kAlreadyExists:
    case StatusCode::kFailedPrecondition:
    case StatusCode::kAborted: return 409;
    case StatusCode::kResourceExhausted: return 429;
    case StatusCode::kUnavailable: return 503;
    case StatusCode::kDeadlineExceeded: return 504;
    case StatusCode::kInternal: return 500;
  }
  return 500;
}

namespace {

// httplib's pool, its workers named abacus-http so that top -H and perf tell them apart.
class NamedThreadPool : public httplib::ThreadPool {
 public:
  explicit NamedThreadPool(size_t n) : httplib::ThreadPool(n) {}
  void enqueue(std::function<void()> fn) override {
    httplib::ThreadPool::enqueue([fn = std::move(fn)] {
      NameThisThread("abacus-http");
      fn();
    });
  }
};

}  // namespace

HttpServer::HttpServer(ControlPlane& cp, HttpOptions options)
    : cp_(cp), options_(std::move(options)), svr_(net::MakeServer(options_.tls_cert_file, options_.tls_key_file)) {
  Routes();
}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Bind() {
  if (!svr_->is_valid()) {
    return InvalidArgument("TLS: cannot load the certificate " + options_.tls_cert_file + " or the key " +
                           options_.tls_key_file + " (PEM files, the key unencrypted; see docs/operations.md)");
  }
  if (options_.tls_cert_file.empty() != options_.tls_key_file.empty()) {
    return InvalidArgument("TLS needs both --tls-cert and --tls-key");
  }
  ABACUS_ASSIGN_OR_RETURN(port_, net::BindServer(*svr_, options_.host, options_.port));
  return Status::OK();
}

void HttpServer::Serve() { net::ServeBound(*svr_); }

bool HttpServer::serving() const { return net::IsServing(*svr_); }

void HttpServer::Stop() {
  cp_.WakePollers();  // long polls answer now instead of holding the shutdown
  if (svr_) net::StopServer(*svr_);
}

void HttpServer::Routes() {
  httplib::Server& s = *svr_;
  int threads = options_.threads;
  s.new_task_queue = [threads] { return new NamedThreadPool(static_cast<size_t>(threads)); };
  s.set_payload_max_length(options_.max_body_bytes);
  s.set_read_timeout(options_.read_timeout_seconds, 0);
  s.set_write_timeout(options_.write_timeout_seconds, 0);
  s.set_keep_alive_timeout(options_.keep_alive_seconds);
  s.set_keep_alive_max_count(1'000'000);
  s.set_tcp_nodelay(true);
  net::FrontOptions front;
  front.threads = static_cast<size_t>(std::max(1, threads));
  front.max_running = static_cast<size_t>(std::max(0, options_.running));
  front.header_timeout = std::chrono::seconds(options_.header_timeout_seconds);
  front.body_timeout = std::chrono::seconds(options_.body_timeout_seconds);
  front.max_connections_per_client = options_.max_connections_per_client;
  net::SetFrontOptions(s, front);

  // Errors that httplib produces itself (404 no route, 413, 400 bad request) get the JSON form.
  s.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
    // An error answer is sent whole: httplib would cut it to the request's byte ranges (a
    // 416 carried a slice of the JSON error; found by http_request_fuzz).
    const_cast<httplib::Request&>(req).ranges.clear();
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    std::string message = res.status == 404   ? "no route " + req.method + " " + req.path
                          : res.status == 413 ? "request body too large"
                                              : "request failed";
    SendError(res, res.status, CodeForHttp(res.status), message);
    return httplib::Server::HandlerResponse::Handled;
  }));
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "internal error";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = std::string("internal error: ") + e.what();
    } catch (...) {
    }
    ABACUS_LOG_ERROR("{}", what);
    SendError(res, 500, "internal", what);
  });
  // Auth: everything but /healthz needs a bearer token; governance authenticates, rate-limits
  // and authorizes each request, and audits each mutating one (governance_api.cc).
  routes_ = std::make_unique<RouteTable>(s);
  RouteTable& t = *routes_;  // every route, with its access declaration (route_table.h)
  InstallGovernance(s, cp_, t, options_.rate_limit, options_.rate_burst);
  cp_.governance().SetTenantRateLimit(options_.tenant_rate_limit, options_.tenant_rate_burst);
  cp_.governance().SetMaxTokensPerUser(options_.max_tokens_per_user);
  AddUiRoutes(t);  // the dashboard under /ui/ (docs/ui.md)
  t.Get("/healthz", Public(), [this](const httplib::Request&, httplib::Response& res) {
    json body = {{"status", "ok"}};
    if (!options_.role.empty()) body["role"] = options_.role;
    SendJson(res, 200, body);
  });
  t.Get("/readyz", AnyUser(), [this](const httplib::Request&, httplib::Response& res) {
    if (cp_.ready()) {
      json body = {{"status", "ready"}};
      if (!options_.role.empty()) body["role"] = options_.role;
      SendJson(res, 200, body);
    } else {
      SendError(res, 503, "unavailable", "not ready");
    }
  });
  t.Get("/metrics", CrossTenant(), [this](const httplib::Request&, httplib::Response& res) {
    std::string out = cp_.RenderMetrics() + net::FrontMetrics(*svr_);
    if (options_.role == "leader") {  // HA: the follower's /metrics says 0 (ha_follower.cc)
      out += "# HELP abacus_ha_leader Whether this server holds the scheduling lease.\n"
             "# TYPE abacus_ha_leader gauge\nabacus_ha_leader 1\n"
             "# HELP abacus_ha_lease_token The fencing token of the current lease holder.\n"
             "# TYPE abacus_ha_lease_token gauge\nabacus_ha_lease_token " +
             std::to_string(options_.lease_token) + "\n";
    }
    res.set_content(out, "text/plain; version=0.0.4");
  });

  // ---- workloads
  t.Post("/api/v1/workloads", WithDryRun(AnyUser("create", "workload")),
         [this](const httplib::Request& req, httplib::Response& res) {
    auto start = std::chrono::steady_clock::now();
    const bool dry_run = IsDryRun(req);
    auto r = cp_.Submit(req.body, IsJsonBody(req), Param(req, "filename", "request"), &RequestPrincipal(),
                        dry_run ? IdempotentRequest{} : KeyedRequest(req), dry_run, CurrentRequest());
    if (!r.ok()) {
      SendStatus(res, r.status());
    } else {
      SendJson(res, dry_run ? 200 : 201,
               {{"items", KeyedJson(*r, [](const SubmitView& s) { return SubmitJson(s); })}});
    }
    cp_.metrics().request_seconds.Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  });
  t.Get("/api/v1/workloads", AnyUser(), [this](const httplib::Request& req, httplib::Response& res) {
    WorkloadFilter f;
    f.queue = Param(req, "queue");
    f.state = Param(req, "state");
    f.project = Param(req, "project");
    f.tenant = Param(req, "tenant");
    f.kind = Param(req, "kind");
    f.name = Param(req, "name");
    f.user = Param(req, "user");
    f.visible = RequestWorkloadFilter();
    auto selector = LabelSelector::Parse(Param(req, "labelSelector"));
    if (!selector.ok()) return SendError(res, 400, "invalid_argument", "labelSelector: " + selector.status().message());
    f.selector = std::move(*selector);
    std::string limit = Param(req, "limit", "1000");
    try {
      f.limit = std::stoul(limit);
    } catch (...) {
      return SendError(res, 400, "invalid_argument", "limit: expected a number, got '" + limit + "'");
    }
    if (IsWatchRequest(req)) return ServeWorkloadWatch(cp_, std::move(f), req, res);  // watch_api.h
    SendJson(res, 200, ListWorkloadsJson(cp_, f));
  });
  t.Get(R"(/api/v1/workloads/([^/]+))", OnWorkload(Action::kRead),
        [this](const httplib::Request& req, httplib::Response& res) {
    Send(res, WorkloadViewJson(cp_.GetWorkload(RequestWorkloadId(req.matches[1]))));
  });
  // Updates of a workload that exists (issue 19.4, workload_update.h): PUT the whole document,
  // PATCH a JSON merge patch, POST …/rollback {"revision": N} (default: the one before); an
  // immutable field changed is 422 naming each.
  auto update = [this](const httplib::Request& req, httplib::Response& res, bool patch, int32_t rollback_to) {
    std::vector<std::string> immutable;
    auto r = cp_.UpdateWorkload(RequestWorkloadId(req.matches[1]), req.body, IsJsonBody(req), patch, rollback_to, &RequestPrincipal(),
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
    auto parsed = ParseJsonBody(req.body.empty() ? "{}" : req.body);  // nesting and duplicate keys first
    if (!parsed.ok()) return SendError(res, 400, "invalid_argument", parsed.status().message());
    json body = std::move(*parsed);
    if (!body.is_object() || (body.contains("revision") && !body["revision"].is_number_integer()) ||
        body.value("revision", 0) < 0) {
      return SendError(res, 400, "invalid_argument", "body: expected {} or {\"revision\": N}");
    }
    update(req, res, false, body.value("revision", 0));
  });
  t.Get(R"(/api/v1/workloads/([^/]+)/revisions)", OnWorkload(Action::kRead),
        [this](const httplib::Request& req, httplib::Response& res) {
    Send(res, RevisionsJson(cp_.Revisions(RequestWorkloadId(req.matches[1]))));
  });
  t.Delete(R"(/api/v1/workloads/([^/]+))", OnWorkload(Action::kCancel, "cancel"),
           [this](const httplib::Request& req, httplib::Response& res) {
    const std::string reason = Param(req, "reason");
    auto cancelled = cp_.Cancel(RequestWorkloadId(req.matches[1]), reason, KeyedRequest(req),
                                CurrentRequest());
    Send(res, WorkloadViewJson(cancelled));
  });
  t.Post(R"(/api/v1/workloads/([^/]+)/cancel)", OnWorkload(Action::kCancel, "cancel"),
         [this](const httplib::Request& req, httplib::Response& res) {
    std::string reason = Param(req, "reason");
    std::optional<json> parsed = JsonBodyOr400(req, res, "{}");
    if (!parsed) return;
    json& body = *parsed;
    if (body.is_object() && body.contains("reason") && body["reason"].is_string()) reason = body["reason"];
    auto cancelled = cp_.Cancel(RequestWorkloadId(req.matches[1]), reason, KeyedRequest(req),
                                CurrentRequest());
    Send(res, WorkloadViewJson(cancelled));
  });
  t.Post(R"(/api/v1/workloads/([^/]+)/scale)", OnWorkload(Action::kScale, "scale"),
         [this](const httplib::Request& req, httplib::Response& res) {
    std::optional<json> parsed = JsonBodyOr400(req, res);
    if (!parsed) return;
    json& body = *parsed;
    if (!body.is_object() || !body.contains("replicas") || !body["replicas"].is_number_integer()) {
      return SendError(res, 400, "invalid_argument", "body: expected {\"replicas\": N}");
    }
    Send(res, WorkloadViewJson(cp_.Scale(RequestWorkloadId(req.matches[1]), body["replicas"].get<int32_t>(),
                                         KeyedRequest(req), CurrentRequest())));
  });
  t.Post(R"(/api/v1/workloads/([^/]+)/quota)", OnWorkload(Action::kQuotaChange, "quota-decision"),
         [this](const httplib::Request& req, httplib::Response& res) {
    std::optional<json> parsed = JsonBodyOr400(req, res);
    if (!parsed) return;
    json& body = *parsed;
    if (!body.is_object() || !body.contains("approve") || !body["approve"].is_boolean()) {
      return SendError(res, 400, "invalid_argument", "body: expected {\"approve\": true} or {\"approve\": false}");
    }
    const govern::Principal& who = RequestPrincipal();
    auto decided = cp_.DecideTemporaryQuota(RequestWorkloadId(req.matches[1]), body["approve"].get<bool>(),
                                            who.name.empty() ? "admin" : who.name, CurrentRequest());
    Send(res, WorkloadViewJson(decided));
  });
  t.Post(R"(/api/v1/workloads/([^/]+)/metrics)", OnWorkload(Action::kUpdate, "update"),
         [this](const httplib::Request& req, httplib::Response& res) {
    std::optional<json> parsed = JsonBodyOr400(req, res);
    if (!parsed) return;
    json& body = *parsed;
    if (body.is_discarded()) return SendError(res, 400, "invalid_argument", "request body is not valid JSON");
    Send(res, MetricsAcceptedJson(cp_.ReportMetrics(RequestWorkloadId(req.matches[1]), body)));
  });
  t.Get(R"(/api/v1/workloads/([^/]+)/explain)", OnWorkload(Action::kRead),
        [this](const httplib::Request& req, httplib::Response& res) {
    Send(res, ExplainJson(cp_.Explain(RequestWorkloadId(req.matches[1]))));
  });
  t.Get(R"(/api/v1/workloads/([^/]+)/events)", OnWorkload(Action::kRead),
        [this](const httplib::Request& req, httplib::Response& res) {
    Send(res, WorkloadEventsJson(cp_.Events(RequestWorkloadId(req.matches[1]))));
  });
  AddTaskRoutes(t, cp_);  // GET /api/v1/workloads/{W}/tasks (logs_api.h)
  AddEndpointRoutes(t, cp_);  // GET /api/v1/services/{SERVICE}/endpoints (endpoints_api.h)
  t.Get(R"(/api/v1/workloads/([^/]+)/logs)", OnWorkload(Action::kRead),
        [this](const httplib::Request& req, httplib::Response& res) {
    if (IsLogFollow(req)) return ServeLogFollow(cp_, RequestWorkloadId(req.matches[1]), req, res);  // logs -f
    int64_t tail = 1 << 20;
    if (req.has_param("tail")) {
      try {
        tail = std::stoll(req.get_param_value("tail"));
      } catch (...) {
        return SendError(res, 400, "invalid_argument", "tail: expected a number of bytes");
      }
    }
    Send(res, TaskLogJson(cp_.Logs(RequestWorkloadId(req.matches[1]), Param(req, "task"),
                                   Param(req, "stream", "stdout"), tail)));
  });

  // ---- evaluations: archived results, versions side by side (evaluations_api.h)
  t.Get("/api/v1/evaluations", AnyUser(), [this](const httplib::Request& req, httplib::Response& res) {
    EvaluationQuery q;
    q.model = Param(req, "model");
    q.baseline = Param(req, "baseline");
    q.visible = RequestWorkloadFilter();
    Send(res, ListEvaluations(cp_.store(), q));
  });

  // ---- configuration
  auto apply = [this](const httplib::Request& req, httplib::Response& res) {
    const bool dry_run = IsDryRun(req);
    auto r = cp_.Apply(req.body, IsJsonBody(req), Param(req, "filename", "request"), &RequestPrincipal(),
                       dry_run ? IdempotentRequest{} : KeyedRequest(req), dry_run, CurrentRequest());
    if (!r.ok()) return SendStatus(res, r.status());
    SendJson(res, 200,
             {{"items", KeyedJson(*r, [](const std::vector<AppliedView>& a) { return ApplyJson(a); })}});
  };
  // Any user: Apply checks each document. Users and policies are their own objects; a
  // reservation has no dry run.
  t.Post("/api/v1/apply", WithDryRun(AnyUser("apply", "config")), apply);
  for (const char* kind :
       {"tenants", "projects", "cohorts", "queues", "priorityclasses", "pools", "clusters", "flavors"}) {
    t.Post(std::string("/api/v1/") + kind, WithDryRun(AnyUser("apply", "config")), apply);
  }
  t.Post("/api/v1/users", WithDryRun(AnyUser("apply", "user")), apply);
  t.Post("/api/v1/policies", WithDryRun(AnyUser("apply", "policy")), apply);
  t.Post("/api/v1/reservations", AnyUser("apply", "config"), apply);
  AddConfigRoutes(t, cp_);  // the configuration reads, queues, flavors, version (config_api.h)

  // ---- nodes and devices
  t.Get("/api/v1/nodes", OnCluster(Action::kRead, "node"),
        [this](const httplib::Request& req, httplib::Response& res) {
    // Each device names the holders the caller may see; other tenants' work is hiddenMilli.
    auto visible = RequestWorkloadFilter();
    if (IsWatchRequest(req)) {
      return ServeListWatch(cp_, [this, visible] { return NodesJson(cp_.ListNodes(visible)); }, req, res);
    }
    SendJson(res, 200, NodesJson(cp_.ListNodes(visible)));
  });
  AddEventRoutes(t, cp_);  // GET /api/v1/events (watch_api.h)
  t.Get(R"(/api/v1/nodes/([^/]+))", OnCluster(Action::kRead, "node"),
        [this](const httplib::Request& req, httplib::Response& res) {
    Send(res, NodeJson(cp_.GetNode(req.matches[1], RequestWorkloadFilter())));
  });
  t.Post("/api/v1/nodes", OnCluster(Action::kApplyConfig, "node", "node-put", "node"),
         [this](const httplib::Request& req, httplib::Response& res) {
    std::optional<json> parsed = JsonBodyOr400(req, res);
    if (!parsed) return;
    json& body = *parsed;
    if (body.is_discarded()) return SendError(res, 400, "invalid_argument", "request body is not valid JSON");
    Send(res, NodeRecordJson(cp_.PutNode(body, CurrentRequest())), 201);
  });
  t.Get("/api/v1/devices", OnCluster(Action::kRead, "node"),
        [this](const httplib::Request&, httplib::Response& res) { SendJson(res, 200, DevicesJson(cp_.ListDevices())); });
  // ---- operator control: cordon/drain, hold/requeue/priority/suspend, queue suspend (fleet_api.h)
  AddFleetRoutes(t, cp_);

  // ---- governance: tokens, users, policies, audit
  AddGovernanceRoutes(t, cp_);
  AddWhoamiRoutes(t, cp_);  // GET /api/v1/whoami: the caller and what it may do (whoami_api.h)
  AddReservationRoutes(t, cp_);  // DELETE /api/v1/reservations/NAME (reservations_api.h)
  AddSharesRoutes(t, cp_);  // GET /api/v1/shares: fair share over time per queue (shares_api.h)

  // ---- metering: price lists, usage reports (metering_api.h)
  AddMeteringRoutes(t, cp_);

  // ---- agents (docs/agent-protocol.md): register, status, heartbeat, logs, the long poll, node
  // reset (agent_api.h)
  AddAgentRoutes(t, cp_);
}

}  // namespace abacus::server
