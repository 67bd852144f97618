// `abacus gateway` (docs/gateway.md): a stable address for InferenceServices. It starts HAProxy
// as a child on the listen address (haproxy_config.h), then follows each service's endpoints on
// the server (a long poll, GET …/endpoints?waitChange=REVISION) and changes HAProxy's servers
// through its runtime API (server_plan.h) — never a reload, so no connection is cut. HAProxy
// balances, retries a request whose connection failed on another replica and health-checks the
// replicas on the readiness probe's path.
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
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
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
};

// Fetches the endpoints of `service` (GET /api/v1/services/{S}/endpoints), waiting up to
// `timeout_seconds` for a revision other than `known` ("": at once).
using EndpointsFetch =
    std::function<Result<nlohmann::json>(const std::string& service, const std::string& known, int timeout_seconds)>;

class Gateway {
 public:
  Gateway(GatewayOptions options, EndpointsFetch fetch);
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
  const std::string& admin_socket() const { return admin_socket_; }

 private:
  struct Followed {
    std::string service;  // as given
    std::string backend;
    bool health_checks = false;
    std::string revision;
    ServerSet have;
  };
  Status TakeLock();
  Status Apply(Followed& f, const nlohmann::json& endpoints);
  void Follow(size_t index);

  GatewayOptions options_;
  EndpointsFetch fetch_;
  std::vector<Followed> followed_;
  std::string admin_socket_;
  RuntimeApi api_{""};
  int lock_fd_ = -1;
  pid_t haproxy_pid_ = -1;
  std::atomic<bool> stopping_{false};
  std::atomic<int> changes_{0};
  std::mutex wait_mu_;
  std::vector<std::thread> threads_;
  bool stopped_ = false;
};

}  // namespace abacus::gateway
