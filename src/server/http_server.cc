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
#include "server/nodes_api.h"
#include "server/workloads_api.h"
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
  // Long polls hold a thread each while they wait: half the threads at most, 16 per user, so
  // that heartbeats, /healthz and every other request keep the other half (ChangeFeed::LimitPlaces).
  cp_.feed().LimitPlaces(kLongPollsPerUser, std::max<size_t>(1, static_cast<size_t>(std::max(options_.threads, 1)) / 2));
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
    if (!cp_.ready()) return SendError(res, 503, "unavailable", "not ready");
    // A server that refuses every write (its audit stream moved by another writer, its store full)
    // is not ready.
    if (std::string why = cp_.governance().audit_log().NotWriting(); !why.empty()) {
      return SendError(res, 503, "unavailable", "not ready: " + why);
    }
    json body = {{"status", "ready"}};
    if (!options_.role.empty()) body["role"] = options_.role;
    SendJson(res, 200, body);
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

  // ---- workloads (workloads_api.h), their tasks (logs_api.h), services' endpoints (endpoints_api.h)
  AddWorkloadRoutes(t, cp_);
  AddTaskRoutes(t, cp_);
  AddEndpointRoutes(t, cp_);

  // ---- evaluations: archived results, versions side by side (evaluations_api.h)
  AddEvaluationRoutes(t, cp_);

  // ---- configuration: apply (POST /api/v1/apply and per kind) and the reads (config_api.h)
  AddApplyRoutes(t, cp_);
  AddConfigRoutes(t, cp_);  // the configuration reads, queues, flavors, version (config_api.h)

  // ---- nodes and devices (nodes_api.h), events (watch_api.h)
  AddNodeRoutes(t, cp_);
  AddEventRoutes(t, cp_);
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
