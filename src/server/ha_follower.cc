#include "server/ha_follower.h"

#include <httplib.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/log.h"
#include "net/http_transport.h"

namespace abacus::server {

namespace {

using nlohmann::json;

constexpr char kLeaderHeader[] = "X-Abacus-Leader";

void SendError(httplib::Response& res, int status, const char* code, const std::string& message,
               const std::string& leader) {
  json err = {{"code", code}, {"message", message}};
  if (!leader.empty()) {
    err["leader"] = leader;
    res.set_header(kLeaderHeader, leader);
  }
  res.status = status;
  res.set_content(json({{"error", err}}).dump(), "application/json");
}

}  // namespace

FollowerServer::FollowerServer(std::function<LeaseView()> view, Forwarder& forwarder, FollowerOptions options)
    : view_(std::move(view)),
      forwarder_(forwarder),
      options_(std::move(options)),
      svr_(net::MakeServer(options_.tls_cert_file, options_.tls_key_file)) {
  Routes();
}

FollowerServer::~FollowerServer() { Stop(); }

Status FollowerServer::Bind() {
  if (!svr_->is_valid()) return InvalidArgument("TLS: cannot load the certificate or the key");
  ABACUS_ASSIGN_OR_RETURN(port_, net::BindServer(*svr_, options_.host, options_.port));
  return Status::OK();
}

void FollowerServer::Serve() { net::ServeBound(*svr_); }

bool FollowerServer::serving() const { return net::IsServing(*svr_); }

void FollowerServer::Stop() {
  if (svr_) net::StopServer(*svr_);
}

std::string FollowerServer::Leader() const {
  LeaseView v = view_();
  return v.leader ? std::string() : v.leader_address;
}

void FollowerServer::Routes() {
  httplib::Server& s = *svr_;
  size_t threads = static_cast<size_t>(std::max(1, options_.threads));
  s.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  s.set_payload_max_length(options_.max_body_bytes);
  s.set_keep_alive_timeout(options_.keep_alive_seconds);
  s.set_keep_alive_max_count(1'000'000);  // httplib's default (5) makes busy clients reconnect
  s.set_tcp_nodelay(true);
  net::FrontOptions front;
  front.threads = threads;
  net::SetFrontOptions(s, front);

  s.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(json({{"status", "ok"}, {"role", "follower"}}).dump(), "application/json");
  });
  s.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    std::string leader = Leader();
    if (leader.empty()) {
      SendError(res, 503, "unavailable", "follower: no leader known yet", "");
      return;
    }
    res.set_header(kLeaderHeader, leader);
    res.set_content(json({{"status", "ready"}, {"role", "follower"}, {"leader", leader}}).dump(), "application/json");
  });
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content("# HELP abacus_ha_leader Whether this server holds the scheduling lease.\n"
                    "# TYPE abacus_ha_leader gauge\nabacus_ha_leader 0\n"
                    "# HELP abacus_ha_lease_token The fencing token of the current lease holder.\n"
                    "# TYPE abacus_ha_lease_token gauge\nabacus_ha_lease_token " +
                        std::to_string(view_().token) + "\n",
                    "text/plain; version=0.0.4");
  });
  auto forward = [this](const httplib::Request& req, httplib::Response& res) {
    std::string leader = Leader();
    if (leader.empty()) {
      res.set_header("Retry-After", "1");
      SendError(res, 503, "unavailable", "this server is a follower and no leader is known yet; retry", "");
      return;
    }
    if (req.path.starts_with("/api/v1/agent/")) {
      SendError(res, 421, "misdirected", "this server is a follower; agents talk to the leader at " + leader,
                leader);
      return;
    }
    Status s = forwarder_.Forward(leader, req, res);
    if (!s.ok()) {
      ABACUS_LOG_DEBUG("follower: {} {}: {}", req.method, req.path, s.message());
      res.headers.clear();
      res.set_header("Retry-After", "1");
      SendError(res, 503, "unavailable", "this server is a follower: " + s.message(), leader);
    }
  };
  s.Get(".*", forward);
  s.Post(".*", forward);
  s.Put(".*", forward);
  s.Patch(".*", forward);
  s.Delete(".*", forward);
  s.Options(".*", forward);
}

}  // namespace abacus::server
