#include "server/run.h"

#include <pthread.h>
#include <signal.h>

#include <filesystem>
#include <iostream>
#include <thread>

#include "common/build_info.h"
#include "common/log.h"
#include "server/auth.h"
#include "server/ha_server.h"
#include "server/http_server.h"
#include "net/http_transport.h"

namespace abacus::server {

Result<std::pair<std::string, int>> ParseListen(const std::string& listen) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos) return InvalidArgument("expected HOST:PORT, got '" + listen + "'");
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  if (host.empty()) host = "127.0.0.1";
  int port = -1;
  try {
    size_t used = 0;
    port = std::stoi(listen.substr(colon + 1), &used);
    if (used != listen.size() - colon - 1) port = -1;
  } catch (...) {
  }
  if (port < 0 || port > 65535) return InvalidArgument("bad port in '" + listen + "' (0 to 65535)");
  return std::make_pair(host, port);
}

HttpOptions HttpOptionsFor(const RunOptions& options, const std::string& host, int port) {
  HttpOptions ho;
  ho.host = host;
  ho.port = port;
  ho.max_body_bytes = options.max_body_bytes;
  ho.threads = options.http_threads;
  ho.running = options.http_running;
  ho.header_timeout_seconds = options.header_timeout_seconds;
  ho.max_connections_per_client = options.max_connections_per_client;
  ho.tls_cert_file = options.tls_cert_file;
  ho.tls_key_file = options.tls_key_file;
  ho.rate_limit = options.rate_limit;
  ho.rate_burst = options.rate_burst;
  ho.tenant_rate_limit = options.tenant_rate_limit;
  ho.tenant_rate_burst = options.tenant_rate_burst;
  ho.max_tokens_per_user = options.max_tokens_per_user;
  return ho;
}

sigset_t BlockShutdownSignals() {
  // Blocked in every thread (threads started later inherit the mask); one thread sigwaits.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);  // a dropped terminal: the same clean shutdown, not the default death
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);
  return signals;
}

int RunServer(const RunOptions& options) {
  if (options.ha) return RunHaServer(options);
  auto addr = ParseListen(options.listen);
  if (!addr.ok()) {
    std::cerr << "abacus: --listen: " << addr.status().message() << "\n";
    return 2;
  }
  // A port another process holds refuses the start before the data folder is made or changed.
  if (addr->second != 0 && net::AddressInUse(addr->first, addr->second)) {
    std::cerr << "abacus: address " << options.listen << " is in use\n";
    return 1;
  }
  sigset_t signals = BlockShutdownSignals();

  ControlPlaneOptions cpo;
  cpo.data_dir = options.data_dir;
  cpo.store_url = options.store_url;
  cpo.heartbeat_interval = std::chrono::seconds(options.heartbeat_seconds);
  cpo.node_timeout = std::chrono::seconds(options.node_timeout_seconds);
  cpo.audit_key_file = options.audit_key_file;
  cpo.audit_anchor_file = options.audit_anchor_file;
  cpo.secrets_key_file = options.secrets_key_file;
  cpo.secrets_keyring_file = options.secrets_keyring_file;
  cpo.audit_check_every = options.audit_check_every;
  cpo.max_task_log_bytes = options.max_task_log_bytes;
  cpo.fencing = options.fencing;
  cpo.scheduler.fair_share_half_life = options.fair_share_half_life;
  cpo.health = options.health;
  auto cp = ControlPlane::Open(cpo);
  if (!cp.ok()) {
    std::cerr << "abacus: cannot start: " << cp.status().ToString() << "\n";
    return 1;
  }
  HttpOptions ho = HttpOptionsFor(options, addr->first, addr->second);
  HttpServer http(**cp, ho);
  Status bound = http.Bind();
  if (!bound.ok()) {
    std::cerr << "abacus: " << bound.message() << "\n";
    (*cp)->Shutdown();
    return 1;
  }
  std::string host = ho.host.find(':') != std::string::npos ? "[" + ho.host + "]" : ho.host;
  std::string url = http.scheme() + "://" + host + ":" + std::to_string(http.port());
  Status wrote = WritePrivateFile((std::filesystem::path(options.data_dir) / "server.url").string(), url + "\n");
  if (!wrote.ok()) ABACUS_LOG_WARN("{}", wrote.message());
  // One line at every start, whatever the log level (but off): where the server answers.
  if (spdlog::get_level() != spdlog::level::off) {
    std::cerr << "abacus server listening on " << url << " (version " << BuildVersion() << ", commit " << BuildCommit()
              << ", data " << options.data_dir << ", store " << (*cp)->store().Describe() << ")" << std::endl;
  }

  std::thread serve([&] { http.Serve(); });
  int code = 0;
  if (options.on_ready) {
    Status st = options.on_ready(**cp, url);
    if (!st.ok()) {
      std::cerr << "abacus: " << st.ToString() << "\n";
      code = 1;
    }
  }
  if (code == 0) {
    int sig = 0;
    sigwait(&signals, &sig);
    ABACUS_LOG_INFO("signal {}: shutting down", sig);
    std::cerr << "abacus: " << (sig == SIGINT ? "interrupt" : sig == SIGHUP ? "hangup" : "terminate")
              << ", shutting down\n";
  }
  if (options.on_stopping) options.on_stopping();
  http.Stop();
  serve.join();
  (*cp)->Shutdown();
  return code;
}

}  // namespace abacus::server
