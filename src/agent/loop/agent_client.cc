#include "agent/loop/agent_client.h"

#include <cstdlib>
#include <httplib.h>

#include "common/log.h"

namespace abacus::agent {

using nlohmann::json;

struct AgentClient::Reply {
  int status = 0;
  json body;
};

namespace {

constexpr char kPrefix[] = "/api/v1/agent";

std::string Normalize(std::string server) {
  while (!server.empty() && server.back() == '/') server.pop_back();
  if (server.find("://") == std::string::npos) server = "http://" + server;
  return server;
}

}  // namespace

Status StatusFromHttp(int http_status, const std::string& body) {
  std::string message;
  json j = json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("error") && j["error"].is_object()) {
    message = j["error"].value("message", "");
  }
  if (message.empty()) message = body.empty() ? "HTTP " + std::to_string(http_status) : body;
  switch (http_status) {
    case 400: return InvalidArgument(message);
    case 401: return Unauthenticated(message);
    case 403: return PermissionDenied(message);
    case 404: return NotFound(message);
    case 409: return FailedPrecondition(message);
    case 413:
    case 429: return ResourceExhausted(message);
    default: break;
  }
  if (http_status >= 500) return Unavailable("server error " + std::to_string(http_status) + ": " + message);
  return Internal("unexpected HTTP " + std::to_string(http_status) + ": " + message);
}

AgentClient::AgentClient(AgentClientOptions options) : options_(std::move(options)) {
  options_.server = Normalize(options_.server);
}

AgentClient::~AgentClient() = default;

void AgentClient::SetNodeToken(const std::string& token) {
  std::lock_guard lock(mu_);
  node_token_ = token;
}

std::string AgentClient::NodeToken() const {
  std::lock_guard lock(mu_);
  return node_token_;
}

std::unique_ptr<httplib::Client> AgentClient::Borrow() {
  std::unique_ptr<httplib::Client> c;
  std::lock_guard lock(mu_);
  if (!idle_.empty()) {
    c = std::move(idle_.back());
    idle_.pop_back();
  } else {
    c = std::make_unique<httplib::Client>(options_.server);
    c->set_keep_alive(true);
    c->set_tcp_nodelay(true);
    c->set_connection_timeout(options_.connect_timeout);
    c->set_write_timeout(options_.request_timeout);
    // HTTPS servers: the CA in $ABACUS_CA_CERT, else the system's.
    if (const char* ca = std::getenv("ABACUS_CA_CERT"); ca != nullptr && *ca != '\0') c->set_ca_cert_path(ca);
    c->enable_server_certificate_verification(true);
  }
  busy_.insert(c.get());
  return c;
}

void AgentClient::GiveBack(std::unique_ptr<httplib::Client> c) {
  std::lock_guard lock(mu_);
  busy_.erase(c.get());
  if (!cancelled_) idle_.push_back(std::move(c));
}

void AgentClient::Cancel() {
  cancelled_ = true;
  std::lock_guard lock(mu_);
  for (httplib::Client* c : busy_) c->stop();
  idle_.clear();
}

Result<AgentClient::Reply> AgentClient::Call(const std::string& method, const std::string& path, const Query& query,
                                             const std::string& body, const std::string& token,
                                             std::chrono::milliseconds read_timeout, bool conflict_is_answer) {
  httplib::Params params(query.begin(), query.end());
  httplib::Headers headers;
  if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
  // A kept-alive connection the server has just closed fails at once; one retry on a fresh
  // connection hides that without hiding a server that is really gone.
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (cancelled_) return Unavailable("agent client cancelled");
    std::unique_ptr<httplib::Client> c = Borrow();
    bool reused = c->is_socket_open() > 0;
    c->set_read_timeout(read_timeout);
    httplib::Result r = method == "GET" ? c->Get(path, params, headers)
                                        : c->Post(path.c_str(), headers, body, "application/json");
    if (!r) {
      httplib::Error err = r.error();
      {
        std::lock_guard lock(mu_);
        busy_.erase(c.get());
      }
      c.reset();  // the connection is broken; never reuse it
      bool retry = reused && attempt == 0 && !cancelled_ &&
                   (err == httplib::Error::Read || err == httplib::Error::Write);
      if (retry) continue;
      return Unavailable("cannot reach " + options_.server + ": " + httplib::to_string(err));
    }
    Reply reply;
    reply.status = r->status;
    reply.body = json::parse(r->body, nullptr, false);
    std::string text = r->body;
    GiveBack(std::move(c));
    if (reply.status == 409 && conflict_is_answer && reply.body.is_object()) return reply;
    if (reply.status < 200 || reply.status >= 300) return StatusFromHttp(reply.status, text);
    if (reply.body.is_discarded()) return Unavailable("server answered " + path + " with a body that is not JSON");
    return reply;
  }
  return Unavailable("cannot reach " + options_.server);
}

Result<RegisterAnswer> AgentClient::Register(const std::string& join_token, const RegisterRequest& request) {
  ABACUS_ASSIGN_OR_RETURN(Reply r, Call("POST", std::string(kPrefix) + "/register", {}, ToJson(request).dump(),
                                        join_token, options_.request_timeout));
  return ParseRegisterAnswer(r.body);
}

Result<Assignment> AgentClient::Assignments(const std::string& node, int64_t after, std::chrono::milliseconds wait) {
  std::string token = NodeToken();
  Query query = {{"node", node}, {"after", std::to_string(after)}, {"waitMs", std::to_string(wait.count())}};
  ABACUS_ASSIGN_OR_RETURN(Reply r, Call("GET", std::string(kPrefix) + "/assignments", query, "", token,
                                        wait + std::chrono::seconds(10)));
  return ParseAssignment(r.body);
}

Result<std::vector<std::string>> AgentClient::ReportStatus(const std::string& node,
                                                           const std::vector<TaskStatus>& tasks) {
  std::string token = NodeToken();
  ABACUS_ASSIGN_OR_RETURN(Reply r, Call("POST", std::string(kPrefix) + "/status", {},
                                        StatusReportJson(node, tasks).dump(), token, options_.request_timeout));
  std::vector<std::string> unknown;
  if (r.body.is_object() && r.body.contains("unknown") && r.body["unknown"].is_array()) {
    for (const auto& id : r.body["unknown"]) {
      if (id.is_string()) unknown.push_back(id.get<std::string>());
    }
  }
  return unknown;
}

Status AgentClient::Heartbeat(const HeartbeatRequest& request) {
  std::string token = NodeToken();
  return Call("POST", std::string(kPrefix) + "/heartbeat", {}, ToJson(request).dump(), token, options_.request_timeout)
      .status();
}

Result<LogAck> AgentClient::SendLog(const LogChunk& chunk) {
  std::string token = NodeToken();
  ABACUS_ASSIGN_OR_RETURN(Reply r, Call("POST", std::string(kPrefix) + "/logs", {}, ToJson(chunk).dump(), token,
                                        options_.request_timeout, /*conflict_is_answer=*/true));
  if (r.status != 409) return LogAck{};
  // {"error": {...}, "size": N}; the size may also sit inside the error object.
  const json* size = nullptr;
  if (r.body.contains("size")) size = &r.body["size"];
  else if (r.body.contains("error") && r.body["error"].is_object() && r.body["error"].contains("size")) size = &r.body["error"]["size"];
  if (size == nullptr || !size->is_number_integer()) return StatusFromHttp(409, r.body.dump());
  return LogAck{false, size->get<int64_t>()};
}

}  // namespace abacus::agent
