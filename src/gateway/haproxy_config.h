// The HAProxy configuration `abacus gateway` starts its HAProxy with (docs/gateway.md): one
// HTTP frontend on the listen address, one backend per service whose servers the gateway adds
// and removes at run time (server_plan.h), the runtime API on a private unix socket (which
// also hands the listening sockets to a reloaded HAProxy: `expose-fd listeners`), and the
// retry rules that send a request whose connection failed to another replica, and the request
// log line the gateway's latency listener reads (latency_log.h).
#pragma once

#include <string>
#include <vector>

#include "gateway/server_plan.h"

namespace abacus::gateway {

struct BackendConfig {
  std::string name;         // the backend's name (BackendName of the service)
  std::string host;         // requests whose Host header (without port) is this go here ("": none)
  std::string health_path;  // "": no HTTP health check (servers are checked by TCP connect)
  // Servers written into the file (a reload keeps what the runtime API had put in): drain as
  // weight 0, maint as disabled; health-checked when health_path is set.
  ServerSet servers;
};

struct HaproxyConfig {
  std::string listen;        // host:port
  std::string admin_socket;  // the runtime API's unix socket
  std::string pid_file;
  int max_connections = 4096;
  // "127.0.0.1:PORT": HAProxy logs each request's backend, server and time there (latency_log.h);
  // "": no request log.
  std::string latency_log;
  std::vector<BackendConfig> backends;  // the first is the default one
};

// Returns the backend name for service `name` ("svc_" and the name, other characters as '_').
std::string BackendName(const std::string& service);

// Returns the text of haproxy.cfg for `c`.
std::string RenderHaproxyConfig(const HaproxyConfig& c);

}  // namespace abacus::gateway
