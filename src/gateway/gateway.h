// `abacus gateway` (docs/gateway.md): a stable address for InferenceServices. It starts HAProxy
// as a child on the listen address (haproxy_config.h), then follows each service's endpoints on
// the server (a long poll, GET …/endpoints?waitChange=REVISION) and changes HAProxy's servers
// through its runtime API (server_plan.h) — no reload, so no connection is cut. HAProxy
// balances, retries a request whose connection failed on another replica and health-checks the
// replicas on the readiness probe's path. When that path changes (HAProxy 2.6 cannot change a
// check at run time) the gateway reloads HAProxy gracefully: a new process with the current
// servers in its config takes the listening sockets over the runtime API (-x) and the old one
// finishes its open requests (-sf).
//
// One gateway per listen address: a second one is refused (a lock file, and a bind test, since
// HAProxy's SO_REUSEPORT would share the port silently).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/mutex.h"
#include "common/status.h"
#include "gateway/haproxy_stats.h"
#include "gateway/latency_log.h"
#include "gateway/runtime_api.h"
#include "gateway/server_plan.h"

namespace abacus::gateway {

struct GatewayOptions {
  std::string listen = "127.0.0.1:8080";  // host:port
  std::vector<std::string> services;      // names or ids; the first is the default backend
  std::string haproxy = "/usr/sbin/haproxy";
  std::string run_dir;                    // private (0700): haproxy.cfg, admin.sock, haproxy.log
  std::string lock_dir = "/tmp";          // where the per-listen-address lock file goes
  int poll_timeout_seconds = 5;           // each long poll's timeoutSeconds
  int metrics_interval_seconds = 5;       // how often HAProxy's stats are posted (autoscaled services)
};

// Fetches the endpoints of `service` (GET /api/v1/services/{S}/endpoints), waiting up to
// `timeout_seconds` for a revision other than `known` ("": at once).
using EndpointsFetch =
    std::function<Result<nlohmann::json>(const std::string& service, const std::string& known, int timeout_seconds)>;
// Posts `body` ({"samples": [...]}) to POST /api/v1/workloads/{service_id}/metrics.
using MetricsPost = std::function<Status(const std::string& service_id, const nlohmann::json& body)>;

class Gateway {
 public:
  // `post` (may be empty: no metrics posted) sends the autoscaling signals HAProxy observes
  // for each service whose endpoints name one (docs/gateway.md "Autoscaling signals").
  Gateway(GatewayOptions options, EndpointsFetch fetch, MetricsPost post = {});
  ~Gateway();
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  // Takes the listen address's lock, reads each service's endpoints once (a service that does
  // not exist or is not visible fails here), writes the config, starts HAProxy, waits for its
  // runtime API, puts the servers in, and starts following. Fails with what went wrong and
  // what to do.
  Status Start();
  // Stops following and stops HAProxy (SIGUSR1: it finishes open requests; SIGKILL after 10 s).
  // Idempotent.
  void Stop();
  // True while the HAProxy child runs.
  bool HaproxyRunning();
  pid_t haproxy_pid() const { return haproxy_pid_; }
  // How many times servers were changed (tests, logs).
  int changes() const { return changes_.load(); }
  // How many graceful reloads of HAProxy there were (tests, logs).
  int reloads() const { return reloads_.load(); }
  // How many metric posts the server accepted (tests, logs).
  int metric_posts() const { return metric_posts_.load(); }
  const std::string& admin_socket() const { return admin_socket_; }

 private:
  struct Followed {
    std::string service;  // as given
    std::string backend;
    std::string host;     // the service's name: the Host header that picks this backend
    std::string health_path;  // the HTTP readiness path HAProxy checks ("": none)
    bool health_checks = false;
    std::string revision;
    ServerSet have;
    // Under metrics_mu_: what the metrics loop needs from the latest endpoints.
    std::string service_id;
    std::string metric;                         // requestsPerSecond | p99LatencyMs | "" (none)
    std::map<std::string, int32_t> replicas;    // server name → replica number
    StatsRead stats;                            // the previous read (metrics loop only)
  };
  Status TakeLock();
  // Writes "GATEWAY_PID [HAPROXY_PID]" into the held lock file, so that the next gateway on this
  // address stops a HAProxy this one leaves behind when killed with -9.
  void NoteHaproxy(pid_t haproxy);
  // Writes haproxy.cfg from followed_ (with each backend's current servers).
  Status WriteConfig();
  // Starts HAProxy on the config; `previous` > 0: takes its listeners and soft-stops it.
  Result<pid_t> SpawnHaproxy(pid_t previous);
  // A graceful reload for a changed health-check path (holds reload_mu_ exclusively).
  Status Reload();
  Status Apply(Followed& f, const nlohmann::json& endpoints);
  void Follow(size_t index);
  void PostMetrics();

  GatewayOptions options_;
  EndpointsFetch fetch_;
  MetricsPost post_;
  Mutex metrics_mu_;
  std::atomic<int> metric_posts_{0};
  std::vector<Followed> followed_;
  std::string admin_socket_;
  RuntimeApi api_{""};
  LatencyListener latency_;  // HAProxy's per-request times (p99LatencyMs)
  int lock_fd_ = -1;
  bool stopped_orphan_ = false;  // TakeLock stopped the HAProxy a killed predecessor left
  pid_t haproxy_pid_ = -1;
  std::atomic<bool> stopping_{false};
  std::atomic<int> changes_{0};
  std::atomic<int> reloads_{0};
  SharedMutex reload_mu_;   // runtime API changes: shared; a reload: exclusive
  Mutex wait_mu_;
  std::vector<pid_t> old_pids_ GUARDED_BY(wait_mu_);  // reloaded-away HAProxy processes finishing their requests
  std::vector<std::thread> threads_;
  bool stopped_ = false;
};

}  // namespace abacus::gateway
