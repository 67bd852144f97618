#include "server/ha_server.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <iostream>
#include <thread>
#include <vector>

#include "common/build_info.h"
#include "common/log.h"
#include "server/auth.h"
#include "server/ha_follower.h"
#include "server/ha_forward.h"
#include "server/ha_lease_keeper.h"
#include "server/http_server.h"

namespace abacus::server {

namespace {

constexpr char kLeaseName[] = "scheduler";
// How long a server whose takeover failed (the ledger could not load) leaves the lease to others.
constexpr Duration kPauseAfterFailedTakeover = std::chrono::seconds(5);

double MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// Calls `bind` until it succeeds or ~2 s passed: the port may still be held for a moment by the
// server this one replaces.
template <typename Server>
Status BindWithRetry(Server& server) {
  Status s;
  for (int attempt = 0; attempt < 100; ++attempt) {
    s = server.Bind();
    if (s.ok()) return s;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return s;
}

// Waits until `server` listens, so that a Stop() right after cannot be lost.
template <typename Server>
void WaitServing(const Server& server) {
  while (!server.serving()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// One server of an HA group: the lease keeper, and either the follower or the leader's API.
// Run() is the role loop; every member but the keeper's state is touched by its thread only.
class HaNode {
 public:
  explicit HaNode(const RunOptions& options) : options_(options) {}

  // Serves until `stop` is set; returns the exit code.
  int Run(const std::atomic<bool>& stop);

 private:
  Status Start();
  Status StartFollower();
  void StopFollower();
  void BecomeLeader(int64_t token);
  void StepDown();
  void Shutdown();
  // The lease as the follower uses it: no leader to forward to while this server takes over (the
  // holder's address is its own); once it serves as the leader, a retired follower's last
  // requests go to the API on this very address.
  LeaseView FollowerView() const;
  // Hands the follower to a thread that waits for its last connections, then destroys it.
  void RetireFollower();
  HttpOptions LeaderHttpOptions(int64_t token) const;

  const RunOptions& options_;
  std::string host_;
  int port_ = 0;
  std::string scheme_;
  std::string self_address_;
  std::unique_ptr<Store> lease_store_;
  std::unique_ptr<LeaseKeeper> keeper_;
  Forwarder forwarder_;
  std::unique_ptr<FollowerServer> follower_;
  std::thread follower_thread_;
  std::vector<std::thread> retired_;  // RetireFollower's threads, joined at Shutdown
  std::atomic<bool> serving_api_{false};  // this server's API serves on its address
  std::unique_ptr<ControlPlane> cp_;  // set while this server leads
  std::unique_ptr<HttpServer> http_;
  std::thread http_thread_;
  int64_t term_token_ = 0;
};

LeaseView HaNode::FollowerView() const {
  LeaseView v = keeper_ ? keeper_->view() : LeaseView{};
  if (v.leader_address == self_address_ && !serving_api_.load()) v.leader_address.clear();
  v.leader = false;  // the follower never answers as the leader
  return v;
}

void HaNode::RetireFollower() {
  if (!follower_) return;
  follower_->Stop();
  retired_.emplace_back([f = std::move(follower_), t = std::move(follower_thread_)]() mutable {
    if (t.joinable()) t.join();
    f.reset();
  });
}

Status HaNode::StartFollower() {
  FollowerOptions fo = HttpOptionsFor(options_, host_, port_);
  follower_ = std::make_unique<FollowerServer>([this] { return FollowerView(); }, forwarder_, fo);
  ABACUS_RETURN_IF_ERROR(port_ == 0 ? follower_->Bind() : BindWithRetry(*follower_));
  port_ = follower_->port();
  follower_thread_ = std::thread([f = follower_.get()] { f->Serve(); });
  WaitServing(*follower_);
  return Status::OK();
}

void HaNode::StopFollower() {
  RetireFollower();
  for (auto& t : retired_) t.join();
  retired_.clear();
}

HttpOptions HaNode::LeaderHttpOptions(int64_t token) const {
  HttpOptions ho = HttpOptionsFor(options_, host_, port_);
  ho.role = "leader";
  ho.lease_token = token;
  return ho;
}

void HaNode::BecomeLeader(int64_t token) {
  auto start = std::chrono::steady_clock::now();
  ControlPlaneOptions cpo;
  cpo.data_dir = options_.data_dir;
  cpo.store_url = options_.store_url;
  cpo.heartbeat_interval = std::chrono::seconds(options_.heartbeat_seconds);
  cpo.node_timeout = std::chrono::seconds(options_.node_timeout_seconds);
  cpo.max_task_log_bytes = options_.max_task_log_bytes;
  cpo.fencing = options_.fencing;
  cpo.scheduler.fair_share_half_life = options_.fair_share_half_life;
  cpo.health = options_.health;
  cpo.fence = LeaseFence{kLeaseName, token};
  cpo.audit_key_file = options_.audit_key_file;
  cpo.audit_anchor_file = options_.audit_anchor_file;
  cpo.secrets_key_file = options_.secrets_key_file;
  cpo.secrets_keyring_file = options_.secrets_keyring_file;
  cpo.audit_check_every = options_.audit_check_every;
  auto cp = ControlPlane::Open(cpo);  // the follower keeps answering meanwhile (503: taking over)
  if (!cp.ok()) {
    ABACUS_LOG_ERROR("HA: cannot take over: {}; leaving the lease to others for a while", cp.status().ToString());
    keeper_->Pause(kPauseAfterFailedTakeover);
    return;
  }
  const double load_ms = MillisSince(start);
  LeaseView now = keeper_->view();
  if (!now.leader || now.token != token) {
    ABACUS_LOG_WARN("HA: lost the lease (token {}) while loading the ledger", token);
    (*cp)->Shutdown();
    return;
  }
  // Swap the follower for the API on the same address: the follower's socket closes at once;
  // its requests in flight finish while the API already serves.
  RetireFollower();
  http_ = std::make_unique<HttpServer>(**cp, LeaderHttpOptions(token));
  if (Status bound = BindWithRetry(*http_); !bound.ok()) {
    ABACUS_LOG_ERROR("HA: cannot serve as the leader: {}", bound.ToString());
    http_.reset();
    (*cp)->Shutdown();
    keeper_->Pause(kPauseAfterFailedTakeover);
    if (Status s = StartFollower(); !s.ok()) ABACUS_LOG_ERROR("HA: cannot serve as a follower: {}", s.ToString());
    return;
  }
  http_thread_ = std::thread([h = http_.get()] { h->Serve(); });
  WaitServing(*http_);
  serving_api_ = true;
  cp_ = std::move(*cp);
  term_token_ = token;
  ABACUS_LOG_INFO("HA: leading with fencing token {}: ledger loaded in {:.0f} ms, serving after {:.0f} ms", token,
                  load_ms, MillisSince(start));
}

void HaNode::StepDown() {
  ABACUS_LOG_WARN("HA: stepping down (fencing token {} is no longer ours)", term_token_);
  cp_->StopLoop();  // no decision from here on; the ones in flight fail their fence
  http_->Stop();    // the socket closes at once; long polls answer now
  serving_api_ = false;
  if (Status s = StartFollower(); !s.ok()) ABACUS_LOG_ERROR("HA: cannot serve as a follower: {}", s.ToString());
  // The API's last requests (keep-alive connections idle out within their timeout) finish before
  // the ledger closes; their writes are refused by the fence.
  if (http_thread_.joinable()) http_thread_.join();
  http_.reset();
  cp_->Shutdown();
  cp_.reset();
  term_token_ = 0;
}

void HaNode::Shutdown() {
  if (cp_) {
    // The keeper goes on renewing while the requests in flight finish and the queued commits
    // land under our token; then the lease is released for a follower to take at once.
    serving_api_ = false;
    http_->Stop();
    if (http_thread_.joinable()) http_thread_.join();
    http_.reset();
    cp_->Shutdown();
    cp_.reset();
  }
  keeper_->Stop();
  if (Status s = keeper_->Release(); !s.ok()) ABACUS_LOG_WARN("HA: releasing the lease: {}", s.ToString());
  StopFollower();
}

Status HaNode::Start() {
  ABACUS_ASSIGN_OR_RETURN(auto addr, ParseListen(options_.listen));
  host_ = addr.first;
  port_ = addr.second;
  scheme_ = options_.tls_cert_file.empty() ? "http" : "https";
  ABACUS_ASSIGN_OR_RETURN(std::string url, PrepareDataDir(options_.data_dir, options_.store_url));
  if (!url.starts_with("postgres")) {
    ABACUS_LOG_WARN("HA on {}: servers can share it only on this machine; use PostgreSQL", url);
  }
  ABACUS_ASSIGN_OR_RETURN(lease_store_, OpenStore(url));
  ABACUS_RETURN_IF_ERROR(StartFollower());  // learns the port when --listen says 0
  std::string host = host_.find(':') != std::string::npos ? "[" + host_ + "]" : host_;
  self_address_ = AdvertisedUrl(options_.advertise, scheme_, host, port_);
  LeaseKeeperOptions ko;
  ko.name = kLeaseName;
  ko.holder = MakeLeaseHolderId();
  ko.address = self_address_;
  ko.ttl = options_.lease_ttl;
  ko.renew_every = options_.lease_renew;
  keeper_ = std::make_unique<LeaseKeeper>(*lease_store_, SystemClock::Get(), ko);
  keeper_->Tick();  // the follower knows the leader before server.url says this server listens
  std::string listening = scheme_ + "://" + host + ":" + std::to_string(port_);
  Status wrote =
      WritePrivateFile((std::filesystem::path(options_.data_dir) / "server.url").string(), listening + "\n");
  if (!wrote.ok()) ABACUS_LOG_WARN("{}", wrote.message());
  // One line at every start, whatever the log level (but off), as a server without --ha writes.
  if (spdlog::get_level() != spdlog::level::off) {
    std::cerr << "abacus server listening on " << listening << " (HA as " << ko.holder << ", advertised "
              << self_address_ << ", version " << BuildVersion() << ", commit " << BuildCommit() << ", store "
              << lease_store_->Describe() << ")" << std::endl;
  }
  keeper_->Start();
  return Status::OK();
}

int HaNode::Run(const std::atomic<bool>& stop) {
  if (Status s = Start(); !s.ok()) {
    std::cerr << "abacus: cannot start: " << s.ToString() << "\n";
    if (keeper_) keeper_->Stop();
    StopFollower();
    return 1;
  }
  uint64_t seen = 0;
  while (!stop.load()) {
    LeaseView v = keeper_->WaitForChange(seen, std::chrono::milliseconds(100));
    seen = v.changes;
    if (stop.load()) break;
    if (v.leader && !cp_) {
      BecomeLeader(v.token);
    } else if (cp_ && (!v.leader || v.token != term_token_)) {
      StepDown();
    }
  }
  Shutdown();
  return 0;
}

}  // namespace

std::string AdvertisedUrl(const std::string& advertise, const std::string& scheme, const std::string& host,
                          int port) {
  if (!advertise.empty()) {
    std::string url = advertise;
    while (!url.empty() && url.back() == '/') url.pop_back();
    return url.find("://") == std::string::npos ? scheme + "://" + url : url;
  }
  std::string name = host;
  if (host == "0.0.0.0" || host == "[::]" || host == "::") {
    char buf[256] = {0};
    name = gethostname(buf, sizeof(buf) - 1) == 0 && buf[0] != '\0' ? buf : "127.0.0.1";
  }
  return scheme + "://" + name + ":" + std::to_string(port);
}

int RunHaServer(const RunOptions& options) {
  if (auto addr = ParseListen(options.listen); !addr.ok()) {
    std::cerr << "abacus: --listen: " << addr.status().message() << "\n";
    return 2;
  }
  sigset_t signals = BlockShutdownSignals();
  std::atomic<bool> stop{false};
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    if (!stop.exchange(true)) {
      ABACUS_LOG_INFO("signal {}: shutting down", sig);
      std::cerr << "abacus: " << (sig == SIGINT ? "interrupt" : sig == SIGHUP ? "hangup" : "terminate")
                << ", shutting down\n";
    }
  });
  HaNode node(options);
  int code = node.Run(stop);
  if (!stop.exchange(true)) pthread_kill(waiter.native_handle(), SIGTERM);  // wakes the waiter
  waiter.join();
  return code;
}

}  // namespace abacus::server
