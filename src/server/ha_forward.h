// Forwarder: a follower's HTTP client to the leader (HA). It replays a request it received —
// method, target (path and query as sent), body, and the end-to-end headers (the bearer token
// among them) — on the leader and copies the answer back, so that a client talking to a follower
// gets exactly what the leader said. Thread-safe; keeps a small pool of keep-alive connections
// to the current leader.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "common/status.h"

namespace httplib {
class ClientImpl;
struct Request;
struct Response;
}  // namespace httplib

namespace abacus::server {

struct ForwarderOptions {
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds read_timeout{60000};  // reports and logs may take a while
  // Pooled connections idle longer than this are dropped: the leader closes idle keep-alive
  // connections after 5 s, and a POST is never retried (it may have been applied).
  std::chrono::milliseconds max_idle{2000};
};

class Forwarder {
 public:
  explicit Forwarder(ForwarderOptions options = {});
  ~Forwarder();
  Forwarder(const Forwarder&) = delete;
  Forwarder& operator=(const Forwarder&) = delete;

  // Sends `req` to the leader at `leader_url` ("http://host:port") and fills `res` with its
  // answer (any HTTP status). Unavailable when the leader cannot be reached or did not answer;
  // `res` is then untouched. A connection that could not be opened is retried (twice: nothing was
  // sent); a pooled one found closed only for GET and HEAD (anything else may have been applied
  // before the answer was lost).
  Status Forward(const std::string& leader_url, const httplib::Request& req, httplib::Response& res);

 private:
  // Returns an idle pooled connection to `url` or a new one; net::MakeClient's InvalidArgument
  // (naming the URL and the expected form) when `url` is not http(s)://HOST:PORT.
  Result<std::unique_ptr<httplib::ClientImpl>> Borrow(const std::string& url);
  void GiveBack(const std::string& url, std::unique_ptr<httplib::ClientImpl> client);

  const ForwarderOptions options_;
  Mutex mu_;
  std::string pool_url_ GUARDED_BY(mu_);  // the leader the pool is for
  struct Idle {
    std::unique_ptr<httplib::ClientImpl> client;
    std::chrono::steady_clock::time_point since;
  };
  std::vector<Idle> idle_ GUARDED_BY(mu_);
};

// Returns whether a request header travels to the leader: not the hop-by-hop ones (Connection,
// Keep-Alive, Transfer-Encoding, ...), Host, Content-Length, Accept-Encoding, and not the
// pseudo-headers the HTTP server adds (REMOTE_ADDR, ...).
bool ForwardsRequestHeader(const std::string& name);
// Returns whether a response header travels back to the client (same rule, and not
// Content-Type, which comes with the body, nor Content-Encoding).
bool ForwardsResponseHeader(const std::string& name);

}  // namespace abacus::server
