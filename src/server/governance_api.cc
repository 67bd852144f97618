#include "server/governance_api.h"

#include <httplib.h>

#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <string_view>
#include <vector>

#include "common/ascii.h"
#include "common/duration_parse.h"
#include "common/time_spec.h"
#include "common/log.h"
#include "govern/crypto.h"
#include "net/http_framing.h"
#include "server/control_plane.h"
#include "server/error_detail.h"
#include "server/governance.h"
#include "server/governance_views_json.h"
#include "server/http_answer.h"
#include "server/http_request.h"
#include "server/http_server.h"
#include "server/request_authorization.h"
#include "server/request_thread.h"
#include "server/route_table.h"
#include "server/secret_views_json.h"
#include "workload/utf8.h"
#include "server/ui_assets.h"

namespace abacus::server {
namespace {

using nlohmann::json;
using govern::Action;
using govern::Resource;


// An id a client may pass in X-Request-Id: 1–64 of [A-Za-z0-9._-].
// The bearer token of `req`'s Authorization header ("" when there is none).
std::string BearerOf(const httplib::Request& req) {
  const std::string header = req.get_header_value("Authorization");
  return header.rfind("Bearer ", 0) == 0 ? header.substr(7) : "";
}

bool GoodRequestId(const std::string& id) {
  if (id.empty() || id.size() > 64) return false;
  for (char c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

// The "after" summary and result of a finished mutating request.
void FinishRecord(ControlPlane& cp, const httplib::Request& req, const httplib::Response& res,
                  const RequestContext& ctx, govern::AuditRecord& r) {
  const bool plain = !res.has_header("Content-Encoding");
  json body = plain ? json::parse(res.body, nullptr, false) : json();
  const bool ok = res.status >= 200 && res.status < 300;
  if (ok) {
    r.result = "ok";
  } else {
    r.result = std::to_string(res.status);
    if (body.is_object() && body.contains("error") && body["error"].is_object()) {
      r.result += ": " + body["error"].value("message", "");
    }
    r.result = TruncateSummary(r.result);
  }
  if (!ok) return;
  if (!ctx.replayed_key.empty()) {
    // A repeat changes nothing: its entry is a note, not a second change.
    r.after = TruncateSummary("replay of Idempotency-Key '" + ctx.replayed_key + "': the first answer again, nothing changed");
    return;
  }
  if (!ctx.workload_id.empty()) {
    json after;
    if (auto w = cp.GetWorkload(ctx.workload_id); w.ok()) after["state"] = WorkloadStateName(w->record.state);
    if (ctx.action == "scale") {
      json b = json::parse(req.body, nullptr, false);
      if (b.is_object() && b.contains("replicas")) after["replicas"] = b["replicas"];
    }
    r.after = after.dump();
    return;
  }
  if (!body.is_object()) return;
  // (A successful `create` other than a replay never gets here: its entry is committed with
  // the workloads, ControlPlane::Submit.)
  if (ctx.action == "apply" && body.contains("items")) {
    r.after = TruncateSummary(body["items"].dump());
  } else if (ctx.action == "node-put" && body.contains("name")) {
    r.object_name = body.value("name", "");
    r.after = TruncateSummary(json({{"state", body.value("state", "")}, {"devices", body.value("devices", json::array()).size()}}).dump());
  } else if (ctx.action == "agent-register") {
    r.object_name = body.value("node", r.object_name);  // never the credential
  } else if (ctx.object_kind == "token") {
    // Never the secret.
    r.after = json({{"id", body.value("id", "")}, {"user", body.value("user", "")}, {"active", body.value("active", false)},
                    {"expiresAt", body.value("expiresAt", "")}})
                  .dump();
  }
}

Result<std::optional<Duration>> ParseTtl(const json& body) {
  if (!body.contains("expires") || body["expires"].is_null()) return std::optional<Duration>();
  if (!body["expires"].is_string()) return InvalidArgument("expires: expected a duration like \"30d\" or \"12h\"");
  std::string text = body["expires"].get<std::string>();
  if (text.empty() || text == "never") return std::optional<Duration>();
  auto d = ParseDurationSpec(text);
  if (!d.ok()) return d.status().WithContext("expires");
  // A token that expires before its answer is read is no token (the sixth probe: "1ms" gave one
  // already inactive).
  if (*d < std::chrono::seconds(1)) return InvalidArgument("expires: must be at least 1s, got '" + text + "'");
  return std::optional<Duration>(*d);
}

// POST /api/v1/tokens/rotate-admin: any user (the handler checks), its entry about token "admin".
Access AdminTokenRotation() {
  Access a = AnyUser("admin-token-rotate", "token");
  a.object_name = "admin";
  return a;
}

}  // namespace

void InstallGovernance(httplib::Server& s, ControlPlane& cp, const RouteTable& routes, double rate_limit,
                       double rate_burst) {
  cp.governance().SetRateLimit(rate_limit, rate_burst);
  s.set_pre_routing_handler([&cp, &routes](const httplib::Request& req, httplib::Response& res) {
    RequestContext& ctx = t_request;
    ctx = RequestContext();
    MatchRequest(routes, req);  // the route the request will be dispatched to: its declaration
    // The API does not serve byte ranges: answers are whole JSON documents (and an answer cut
    // to a range would not parse). (httplib owns `req` as a non-const object.)
    const_cast<httplib::Request&>(req).ranges.clear();
    // Every answer carries X-Request-Id, the public ones too (docs/api.md).
    std::string client_id = req.get_header_value("X-Request-Id");
    ctx.request_id = GoodRequestId(client_id) ? client_id : NewRequestId();
    if (req.path == "/healthz") return httplib::Server::HandlerResponse::Unhandled;
    // The dashboard's static files and login page need no token; its API calls carry one.
    // So do "/" (a redirect to /ui/) and the browser's /favicon.ico (no content).
    if ((req.method == "GET" || req.method == "HEAD") &&
        (IsUiPath(req.path) || req.path == "/" || req.path == "/favicon.ico")) {
      return httplib::Server::HandlerResponse::Unhandled;
    }
    ctx.active = true;
    // A refusal before the body was read: the connection cannot carry another request.
    auto refuse = [&](const Status& st) {
      SendStatus(res, st);
      if (!req.get_header_value("Content-Length").empty()) res.set_header("Connection", "close");
      return httplib::Server::HandlerResponse::Handled;
    };
    // Names, ids and filters come from the path and the query: they must be UTF-8 (they end up
    // in JSON answers and audit entries).
    if (FindInvalidUtf8(req.path)) return refuse(InvalidArgument("request path is not valid UTF-8"));
    for (const auto& [k, v] : req.params) {
      if (FindInvalidUtf8(k) || FindInvalidUtf8(v)) return refuse(InvalidArgument("query parameters are not valid UTF-8"));
    }
    auto caller = cp.governance().Authenticate(BearerOf(req));
    if (!caller.ok()) {
      res.set_header("WWW-Authenticate", "Bearer realm=\"abacus\"");
      return refuse(caller.status());
    }
    ctx.caller = std::move(*caller);
    std::string bucket;
    if (double wait = cp.governance().Throttle(ctx.caller, &bucket); wait > 0) {
      cp.metrics().rejected_busy.fetch_add(1);
      int seconds = std::max(1, static_cast<int>(std::ceil(wait)));
      res.set_header("Retry-After", std::to_string(seconds));
      return refuse(ResourceExhausted("rate limit exceeded for " + bucket + ": retry after " +
                                      std::to_string(seconds) + "s"));
    }
    ctx.audit = IsMutating(req.method) && !IsDryRun(req);  // a dry run changes nothing
    ctx.action = AsciiLower(req.method);
    if (ctx.audit) {
      // The answer of a mutating request is small: sent uncompressed, the post-routing handler
      // can read it for the audit entry. (httplib owns `req` as a non-const object.)
      const_cast<httplib::Request&>(req).headers.erase("Accept-Encoding");
    }
    Status allowed = AuthorizeRequest(cp, req, ctx);
    if (!allowed.ok()) return refuse(allowed);
    return httplib::Server::HandlerResponse::Unhandled;
  });
  s.set_post_routing_handler([&cp](const httplib::Request& req, httplib::Response& res) {
    cp.metrics().requests.Count(req.path, res.status);
    RequestContext& ctx = t_request;
    if (!ctx.request_id.empty()) res.set_header("X-Request-Id", ctx.request_id);
    if (!ctx.active) return;
    ctx.active = false;
    if (!ctx.replayed_key.empty()) res.set_header("Idempotent-Replayed", "true");
    // Unauthenticated and throttled requests are not recorded (anyone could flood the chain).
    if (!ctx.audit || res.status == 401 || res.status == 429 || ctx.caller.principal.name.empty()) return;
    if (ctx.audited) return;  // committed with the change itself (CommitAudited)
    if (ctx.pending && ctx.pending->committed.load()) return;  // claimed by the change's commit
    govern::AuditRecord r = ContextRecord(ctx);
    FinishRecord(cp, req, res, ctx, r);
    Governance& gov = cp.governance();
    if (Status st = gov.WaitAudit(gov.EnqueueAudit(std::move(r))); !st.ok()) {
      ABACUS_LOG_ERROR("audit entry of request {} not written: {}", ctx.request_id, st.ToString());
    }
  });
}

bool CallerStillStands(const ControlPlane& cp, const httplib::Request& req, httplib::Response& res) {
  const RequestContext& ctx = t_request;
  if (!ctx.active) return true;  // not served through the pre-routing handler (a test's server)
  Status st = cp.governance().StillStands(ctx.caller, BearerOf(req));
  if (st.ok()) return true;
  res.set_header("WWW-Authenticate", "Bearer realm=\"abacus\"");
  SendStatus(res, st);
  return false;
}

std::chrono::steady_clock::time_point CallerDeadline(const ControlPlane& cp,
                                                     std::chrono::steady_clock::time_point deadline) {
  const RequestContext& ctx = t_request;
  if (!ctx.active) return deadline;
  const std::optional<Time> expires = cp.governance().ExpiresAt(ctx.caller);
  if (!expires) return deadline;
  const auto left = *expires - cp.governance().clock().Now();
  const auto now = std::chrono::steady_clock::now();
  if (left <= Duration::zero()) return now;
  return std::min(deadline, now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(left));
}

std::unique_ptr<ChangeFeed::Place> TakeLongPollPlace(const ControlPlane& cp, httplib::Response& res) {
  const RequestContext& ctx = t_request;
  // Named as its audit entries name it ("user max"): a user's tokens share its places.
  auto place = cp.feed().TakePlace(ctx.active ? ctx.caller.Actor() : "(in process)",
                                   ctx.active && ctx.caller.via == Caller::Via::kApiToken);
  if (place.ok()) return std::move(*place);
  res.set_header("Retry-After", "5");
  SendStatus(res, place.status());
  return nullptr;
}

void AddGovernanceRoutes(RouteTable& t, ControlPlane& cp) {
  // ---- tokens
  t.Post("/api/v1/tokens", AnyUser("token-create", "token"),
         [&cp](const httplib::Request& req, httplib::Response& res) {
    std::optional<json> parsed = ActionBodyOr400(req, res, {"user", "description", "expires"},
                                                 R"({"user": "...", "description": "...", "expires": "30d"}, each optional)");
    if (!parsed) return;
    json body = std::move(*parsed);
    auto ttl = ParseTtl(body);
    if (!ttl.ok()) return SendStatus(res, ttl.status());
    Result<std::string> user = StringField(body, "user");  // a user sent as a number is refused, not "me"
    if (!user.ok()) return SendStatus(res, user.status());
    Result<std::string> description = StringField(body, "description");
    if (!description.ok()) return SendStatus(res, description.status());
    Send(res, IssuedTokenJson(cp.governance().IssueToken(RequestPrincipal(), *user, *description, *ttl,
                                                         CurrentRequest())),
         201);
  });
  t.Get("/api/v1/tokens", AnyUser(), [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, TokenListJson(cp.governance().ListTokens(RequestPrincipal(), Param(req, "user"))));
  });
  t.Post("/api/v1/tokens/rotate-admin", AdminTokenRotation(),
         [&cp](const httplib::Request& req, httplib::Response& res) {
    // No field is read, but a body sent is checked like any other: a malformed request never
    // rotates the token.
    if (!ActionBodyOr400(req, res, {}, "{} or no body")) return;
    Send(res, RotatedAdminTokenJson(cp.governance().RotateAdminToken(RequestPrincipal(), CurrentRequest())));
  });
  t.Delete(R"(/api/v1/tokens/([^/]+))", AnyUser("token-revoke", "token"),
           [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, TokenViewJson(cp.governance().RevokeToken(RequestPrincipal(), req.matches[1], CurrentRequest())));
  });

  // ---- users and policies: documents through apply (POST: http_server.cc); reads filtered
  t.Get("/api/v1/users", AnyUser(), [&cp](const httplib::Request&, httplib::Response& res) {
    Send(res, UserListJson(cp.governance().ListUsers(RequestPrincipal())));
  });
  t.Get(R"(/api/v1/users/([^/]+))", AnyUser(), [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, UserViewJson(cp.governance().GetUser(RequestPrincipal(), req.matches[1])));
  });
  t.Delete(R"(/api/v1/users/([^/]+))", AnyUser("user-delete", "user"),
           [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, DeletedJson(cp.governance().DeleteUser(RequestPrincipal(), req.matches[1], CurrentRequest())));
  });
  t.Get("/api/v1/policies", AnyUser(), [&cp](const httplib::Request&, httplib::Response& res) {
    Send(res, PolicyListJson(cp.governance().ListPolicies(RequestPrincipal())));
  });
  t.Get(R"(/api/v1/policies/([^/]+))", AnyUser(), [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, PolicyJson(cp.governance().GetPolicy(RequestPrincipal(), req.matches[1])));
  });
  t.Delete(R"(/api/v1/policies/([^/]+))", AnyUser("policy-delete", "policy"),
           [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, DeletedJson(cp.governance().DeletePolicy(RequestPrincipal(), req.matches[1], CurrentRequest())));
  });

  // ---- secrets (server/secrets.h): values go in, never out
  t.Post("/api/v1/secrets", AnyUser("secret-create", "secret"),
         [&cp](const httplib::Request& req, httplib::Response& res) {
    std::optional<json> parsed = JsonBodyOr400(req, res);
    if (!parsed) return;
    Send(res, SecretViewJson(cp.secrets().Create(RequestPrincipal(), *parsed, CurrentRequest())), 201);
  });
  t.Post("/api/v1/secrets/reencrypt", AnyUser("secret-reencrypt", "secret"),
         [&cp](const httplib::Request& req, httplib::Response& res) {
    if (!ActionBodyOr400(req, res, {}, "{} or no body")) return;
    Send(res, SecretsReencryptedJson(cp.secrets().Reencrypt(RequestPrincipal(), CurrentRequest())));
  });
  t.Get("/api/v1/secrets", AnyUser(), [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, SecretListJson(cp.secrets().List(RequestPrincipal(), Param(req, "project"), Param(req, "tenant"))));
  });
  t.Get(R"(/api/v1/secrets/([^/]+))", AnyUser(), [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, SecretViewJson(cp.secrets().Get(RequestPrincipal(), req.matches[1], Param(req, "project"), Param(req, "tenant"))));
  });
  t.Delete(R"(/api/v1/secrets/([^/]+))", AnyUser("secret-delete", "secret"),
           [&cp](const httplib::Request& req, httplib::Response& res) {
    Send(res, SecretDeletedJson(cp.secrets().Delete(RequestPrincipal(), req.matches[1], Param(req, "project"),
                                                    Param(req, "tenant"), CurrentRequest())));
  });

  // ---- audit: JSON lines (the caller's tenants only, for a tenant-admin), or ?verify=1
  t.Get("/api/v1/audit", AnyUser(), [&cp](const httplib::Request& req, httplib::Response& res) {
    if (Status st = OnlyParams(req, {"verify", "after", "limit", "since"}); !st.ok()) return SendStatus(res, st);
    const govern::Principal& who = RequestPrincipal();
    Governance& gov = cp.governance();
    std::string verify = Param(req, "verify");
    if (!verify.empty() && verify != "0" && verify != "false") {
      if (Status st = govern::Authorize(who, Action::kAuditRead, Resource::ForCluster("audit", "")); !st.ok()) {
        return SendStatus(res, st);
      }
      auto report = gov.VerifyAudit();
      if (!report.ok()) return SendStatus(res, report.status());
      json out = {{"ok", report->ok}, {"entries", report->checked}, {"reason", report->reason},
                  {"anchors", report->anchors}, {"anchoredSeq", report->anchored_seq}};
      if (!report->ok) out["firstBadSeq"] = report->first_bad_seq;
      return Send(res, out);
    }
    if (who.kind != govern::Principal::Kind::kUser || (!who.HasRole(Role::kAdmin) && !who.HasRole(Role::kTenantAdmin))) {
      return SendStatus(res, govern::Authorize(who, Action::kAuditRead, Resource::ForCluster("audit", "")));
    }
    AuditQuery q;
    Result<int64_t> after = IntParam(req, "after", 0, 0, std::numeric_limits<int64_t>::max());
    if (!after.ok()) return SendStatus(res, after.status());
    Result<int64_t> limit = IntParam(req, "limit", 0, 0, std::numeric_limits<int64_t>::max());  // 0: all
    if (!limit.ok()) return SendStatus(res, limit.status());
    q.after_seq = *after;
    q.limit = static_cast<size_t>(*limit);
    if (std::string since = Param(req, "since"); !since.empty()) {
      auto t = ParseTimeSpec(since, gov.clock().Now());  // "24h": the last day (common/time_spec.h)
      if (!t.ok()) return SendError(res, 400, "invalid_argument", "since: " + t.status().message());
      q.since = *t;
    }
    auto entries = gov.ReadAudit(q);
    if (!entries.ok()) return SendStatus(res, entries.status());
    std::string out;
    for (const auto& e : *entries) {
      Resource r = Resource::ForTenantObject("audit", std::to_string(e.seq), e.record.tenant);
      if (!govern::Authorize(who, Action::kAuditRead, r).ok()) continue;
      out += govern::AuditEntryToJson(e).dump();
      out += '\n';
    }
    res.status = 200;
    res.set_content(out, "application/x-ndjson");
  });
}

}  // namespace abacus::server
