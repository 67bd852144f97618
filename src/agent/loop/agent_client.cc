#include "agent/loop/agent_client.h"

#include <httplib.h>

#include "common/log.h"
#include "common/mutex.h"
#include "net/http_transport.h"

namespace abacus::agent {

using nlohmann::json;

struct AgentClient::Reply {
  int status = 0;
  json body;
};

namespace {

constexpr char kPrefix[] = "/api/v1/agent";

// The servers of `option` ("URL" or "URL1,URL2"); an unusable option keeps its one (bad) URL,
// which then fails every call with a message naming it.
ServerList ParseServers(const std::string& option) {
  auto list = ServerList::Parse(option);
  return list.ok() ? std::move(list).value() : ServerList({NormalizeServerUrl(option)});
}

// The leader a follower's answer names: the X-Abacus-Leader header, else error.leader.
std::string LeaderOf(const httplib::Response& r, const json& body) {
  std::string leader = r.get_header_value("X-Abacus-Leader");
  if (leader.empty() && body.is_object() && body.contains("error") && body["error"].is_object()) {
    const json& err = body["error"];
    if (err.contains("leader") && err["leader"].is_string()) leader = err["leader"].get<std::string>();
  }
  return leader;
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
    case 421: return Unavailable("misdirected (not the leader): " + message);
    default: break;
  }
  if (http_status >= 500) return Unavailable("server error " + std::to_string(http_status) + ": " + message);
  return Internal("unexpected HTTP " + std::to_string(http_status) + ": " + message);
}

AgentClient::AgentClient(AgentClientOptions options)
    : options_(std::move(options)), servers_(ParseServers(options_.server)) {}

std::string AgentClient::server() const {
  MutexLock lock(mu_);
  return servers_.current();
}

void AgentClient::Failed(const std::string& url, const std::string& leader) {
  MutexLock lock(mu_);
  std::string before = servers_.current();
  servers_.Failed(url, leader);
  if (servers_.current() != before) ABACUS_LOG_INFO("agent: calls go to {} now (after {})", servers_.current(), url);
}

AgentClient::~AgentClient() = default;

void AgentClient::SetNodeToken(const std::string& token) {
  MutexLock lock(mu_);
  node_token_ = token;
}

std::string AgentClient::NodeToken() const {
  MutexLock lock(mu_);
  return node_token_;
}

Result<std::unique_ptr<httplib::ClientImpl>> AgentClient::Borrow(const std::string& url) {
  std::unique_ptr<httplib::ClientImpl> c;
  MutexLock lock(mu_);
  // Connections to servers the agent has moved away from are closed here.
  std::erase_if(idle_, [&](const auto& idle) { return idle.first != url; });
  if (!idle_.empty()) {
    c = std::move(idle_.back().second);
    idle_.pop_back();
  } else {
    ABACUS_ASSIGN_OR_RETURN(c, net::MakeClient(url));
    c->set_connection_timeout(options_.connect_timeout);
    c->set_write_timeout(options_.request_timeout);
  }
  busy_.insert(c.get());
  return c;
}

void AgentClient::GiveBack(const std::string& url, std::unique_ptr<httplib::ClientImpl> c) {
  MutexLock lock(mu_);
  busy_.erase(c.get());
  if (!cancelled_ && url == servers_.current()) idle_.emplace_back(url, std::move(c));
}

void AgentClient::Cancel() {
  cancelled_ = true;
  MutexLock lock(mu_);
  for (httplib::ClientImpl* c : busy_) c->stop();
  idle_.clear();
}

Result<AgentClient::Reply> AgentClient::Call(const std::string& method, const std::string& path, const Query& query,
                                             const std::string& body, const std::string& token,
                                             std::chrono::milliseconds read_timeout, bool conflict_is_answer) {
  httplib::Params params(query.begin(), query.end());
  httplib::Headers headers;
  if (!token.empty()) headers.emplace("Authorization", "Bearer " + token);
  // A kept-alive connection the server has just closed fails at once; one retry on a fresh
  // connection hides that without hiding a server that is really gone. A follower's 421 naming
  // the leader is followed at once, once.
  bool retried = false, redirected = false;
  while (true) {
    if (cancelled_) return Unavailable("agent client cancelled");
    const std::string url = server();
    auto borrowed = Borrow(url);
    if (!borrowed.ok()) return borrowed.status();
    std::unique_ptr<httplib::ClientImpl> c = std::move(*borrowed);
    bool reused = c->is_socket_open() > 0;
    c->set_read_timeout(read_timeout);
    httplib::Result r = method == "GET" ? c->Get(path, params, headers)
                                        : c->Post(path.c_str(), headers, body, "application/json");
    if (!r) {
      httplib::Error err = r.error();
      {
        MutexLock lock(mu_);
        busy_.erase(c.get());
      }
      c.reset();  // the connection is broken; never reuse it
      bool retry = reused && !retried && !cancelled_ &&
                   (err == httplib::Error::Read || err == httplib::Error::Write);
      if (retry) {
        retried = true;
        continue;
      }
      if (!cancelled_) Failed(url, "");
      return Unavailable("cannot reach " + url + ": " + httplib::to_string(err));
    }
    Reply reply;
    reply.status = r->status;
    reply.body = json::parse(r->body, nullptr, false);
    std::string text = r->body;
    if (reply.status == 421 || reply.status == 503) {
      std::string leader = LeaderOf(*r, reply.body);
      GiveBack(url, std::move(c));
      Failed(url, leader);
      if (reply.status == 421 && !leader.empty() && !redirected) {
        redirected = true;
        continue;
      }
      return StatusFromHttp(reply.status, text);
    }
    GiveBack(url, std::move(c));
    if (reply.status == 409 && conflict_is_answer && reply.body.is_object()) return reply;
    if (reply.status < 200 || reply.status >= 300) return StatusFromHttp(reply.status, text);
    if (reply.body.is_discarded()) return Unavailable("server answered " + path + " with a body that is not JSON");
    return reply;
  }
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

Status AgentClient::ReportLeaving(const std::string& node) {
  std::string token = NodeToken();
  wire::StatusReport leaving{node, {}, true};
  return Call("POST", std::string(kPrefix) + "/status", {}, ToJson(leaving).dump(), token, options_.request_timeout)
      .status();
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
