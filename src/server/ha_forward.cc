#include "server/ha_forward.h"

#include <httplib.h>
#include <strings.h>

#include "common/blocking_region.h"
#include "common/mutex.h"
#include "net/http_transport.h"

namespace abacus::server {

namespace {

bool Is(const std::string& name, const char* other) { return strcasecmp(name.c_str(), other) == 0; }

bool HopByHop(const std::string& name) {
  for (const char* h : {"Connection", "Keep-Alive", "Proxy-Connection", "Transfer-Encoding", "TE", "Trailer",
                        "Upgrade", "Content-Length"}) {
    if (Is(name, h)) return true;
  }
  return false;
}

}  // namespace

bool ForwardsRequestHeader(const std::string& name) {
  if (HopByHop(name) || Is(name, "Host") || Is(name, "Accept-Encoding")) return false;
  for (const char* pseudo : {"REMOTE_ADDR", "REMOTE_PORT", "LOCAL_ADDR", "LOCAL_PORT"}) {
    if (name == pseudo) return false;
  }
  return true;
}

bool ForwardsResponseHeader(const std::string& name) {
  return !HopByHop(name) && !Is(name, "Content-Type") && !Is(name, "Content-Encoding");
}

Forwarder::Forwarder(ForwarderOptions options) : options_(options) {}

Forwarder::~Forwarder() = default;

Result<std::unique_ptr<httplib::ClientImpl>> Forwarder::Borrow(const std::string& url) {
  {
    MutexLock lock(mu_);
    if (pool_url_ != url) {
      idle_.clear();  // the leader changed: its connections are useless
      pool_url_ = url;
    }
    const auto now = std::chrono::steady_clock::now();
    while (!idle_.empty()) {
      Idle idle = std::move(idle_.back());
      idle_.pop_back();
      if (now - idle.since < options_.max_idle) return std::move(idle.client);
    }
  }
  ABACUS_ASSIGN_OR_RETURN(std::unique_ptr<httplib::ClientImpl> c, net::MakeClient(url));
  c->set_url_encode(false);  // the target is forwarded as the client sent it
  c->set_connection_timeout(options_.connect_timeout);
  c->set_read_timeout(options_.read_timeout);
  c->set_write_timeout(options_.read_timeout);
  return c;
}

void Forwarder::GiveBack(const std::string& url, std::unique_ptr<httplib::ClientImpl> client) {
  MutexLock lock(mu_);
  if (pool_url_ == url && idle_.size() < 64) idle_.push_back({std::move(client), std::chrono::steady_clock::now()});
}

Status Forwarder::Forward(const std::string& leader_url, const httplib::Request& req, httplib::Response& res) {
  httplib::Request out;
  out.method = req.method;
  out.path = req.target.empty() ? req.path : req.target;
  out.body = req.body;
  for (const auto& [name, value] : req.headers) {
    if (ForwardsRequestHeader(name)) out.headers.emplace(name, value);
  }
  if (!req.remote_addr.empty()) out.headers.emplace("X-Forwarded-For", req.remote_addr);
  // A kept-alive connection the leader has just closed fails at once: a read is retried once on
  // a fresh one. A connection that could not be opened carried nothing: any request is retried.
  const bool idempotent = req.method == "GET" || req.method == "HEAD";
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto borrowed = Borrow(leader_url);
    if (!borrowed.ok()) return Unavailable("cannot forward to the leader: " + borrowed.status().message());
    std::unique_ptr<httplib::ClientImpl> c = std::move(*borrowed);
    const bool reused = c->is_socket_open() > 0;
    httplib::Result r = [&] {
      BlockingRegion waiting;  // the leader's answer
      return c->send(out);
    }();
    if (!r) {
      httplib::Error err = r.error();
      if (err == httplib::Error::Connection && attempt < 2) continue;
      if (idempotent && reused && attempt == 0 && (err == httplib::Error::Read || err == httplib::Error::Write)) {
        continue;
      }
      return Unavailable("cannot reach the leader at " + leader_url + ": " + httplib::to_string(err));
    }
    res.status = r->status;
    for (const auto& [name, value] : r->headers) {
      if (ForwardsResponseHeader(name)) res.headers.emplace(name, value);
    }
    std::string type = r->get_header_value("Content-Type");
    res.set_content(r->body, type.empty() ? "text/plain" : type.c_str());
    GiveBack(leader_url, std::move(c));
    return Status::OK();
  }
  return Unavailable("cannot reach the leader at " + leader_url);
}

}  // namespace abacus::server
