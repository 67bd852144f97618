// AgentClient: the HTTP calls of the agent protocol (docs/agent-protocol.md) with timeouts and
// bearer tokens, answers parsed into structs. Errors come back as Status:
//   no answer (refused, timed out, cancelled)  Unavailable
//   401 Unauthenticated, 403 PermissionDenied, 404 NotFound, 400 InvalidArgument,
//   409 FailedPrecondition, 413/429 ResourceExhausted, 421 and 5xx Unavailable
// with the server's error message. Thread-safe: each call borrows a keep-alive connection from
// a small pool, so the long poll, status reports and heartbeats never wait for each other.
//
// HA: `server` may list several servers ("URL1,URL2"). Calls go to one of them; after no answer,
// a 503, or a 421 from a follower, the next call goes to the leader the answer named, else to the
// next URL (ServerList). A 421 naming the leader is retried there at once, once.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "agent/loop/protocol.h"
#include "agent/loop/server_list.h"
#include "common/mutex.h"
#include "common/status.h"

namespace httplib {
class ClientImpl;
}

namespace abacus::agent {

struct AgentClientOptions {
  std::string server;  // "http://host:port" (a bare "host:port" gets http://), or "URL1,URL2,..."
  std::chrono::milliseconds connect_timeout{5000};
  std::chrono::milliseconds request_timeout{30000};  // every call but the long poll
};

class AgentClient {
 public:
  explicit AgentClient(AgentClientOptions options);
  ~AgentClient();
  AgentClient(const AgentClient&) = delete;
  AgentClient& operator=(const AgentClient&) = delete;

  // The node credential sent by every call but Register.
  void SetNodeToken(const std::string& token);

  // POST /register with the join token.
  Result<RegisterAnswer> Register(const std::string& join_token, const RegisterRequest& request);
  // GET /assignments: long poll of at most `wait` (the read timeout is `wait` + 10 s).
  Result<Assignment> Assignments(const std::string& node, int64_t after, std::chrono::milliseconds wait);
  // POST /status; returns the task ids the server did not know.
  Result<std::vector<std::string>> ReportStatus(const std::string& node, const std::vector<TaskStatus>& tasks);
  // POST /status with no tasks and `leaving`: the agent shuts down; OK once the server took the
  // node out of placement.
  Status ReportLeaving(const std::string& node);
  // POST /heartbeat.
  Status Heartbeat(const HeartbeatRequest& request);
  // POST /logs; a 409 is an answer (not accepted, resend from server_size), not an error.
  Result<LogAck> SendLog(const LogChunk& chunk);

  // Aborts the calls in flight (they return Unavailable) and makes later calls fail at once.
  // For shutdown.
  void Cancel();

  // Returns the server calls go to now.
  std::string server() const;

 private:
  struct Reply;
  using Query = std::vector<std::pair<std::string, std::string>>;
  Result<Reply> Call(const std::string& method, const std::string& path, const Query& query, const std::string& body,
                     const std::string& token, std::chrono::milliseconds read_timeout,
                     bool conflict_is_answer = false);
  std::string NodeToken() const;
  // Returns an idle pooled connection to `url` or a new one; net::MakeClient's InvalidArgument
  // (naming the URL and the expected form) when `url` is not http(s)://HOST:PORT.
  Result<std::unique_ptr<httplib::ClientImpl>> Borrow(const std::string& url);
  void GiveBack(const std::string& url, std::unique_ptr<httplib::ClientImpl> client);
  // Moves on from `url` after a failed call (see ServerList::Failed).
  void Failed(const std::string& url, const std::string& leader);

  AgentClientOptions options_;
  std::atomic<bool> cancelled_{false};
  mutable Mutex mu_;
  std::string node_token_ GUARDED_BY(mu_);
  ServerList servers_ GUARDED_BY(mu_);
  // Kept-alive connections, with the server each one talks to.
  std::vector<std::pair<std::string, std::unique_ptr<httplib::ClientImpl>>> idle_ GUARDED_BY(mu_);
  std::set<httplib::ClientImpl*> busy_ GUARDED_BY(mu_);
};

// Returns the Status for an HTTP error answer: the code by HTTP status, the message from the
// JSON error body (or the raw text).
Status StatusFromHttp(int http_status, const std::string& body);

}  // namespace abacus::agent
