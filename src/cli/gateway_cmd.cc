// `abacus gateway`: a stable address for InferenceServices, HAProxy driven by the endpoints the
// server publishes (gateway/gateway.h, docs/gateway.md).
#include <CLI/CLI.hpp>
#include <signal.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "cli/client.h"
#include "cli/verbs.h"
#include "gateway/gateway.h"

namespace abacus::cli {
namespace {

struct GatewayFlags {
  std::string server, token_file, listen = "127.0.0.1:8080", haproxy = "/usr/sbin/haproxy", run_dir;
  std::vector<std::string> services;
  int metrics_interval = 5;
};

// The first line of `file`, trimmed; NotFound/InvalidArgument naming the file.
Result<std::string> ReadToken(const std::string& file) {
  std::ifstream in(file);
  if (!in) return NotFound("cannot read --token-file " + file + ": " + std::strerror(errno));
  std::string token;
  std::getline(in, token);
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) token.pop_back();
  if (token.empty()) return InvalidArgument("--token-file " + file + " is empty");
  return token;
}

int RunGateway(const GatewayFlags& f) {
  std::string token;
  if (!f.token_file.empty()) {
    auto t = ReadToken(f.token_file);
    if (!t.ok()) {
      std::cerr << "abacus gateway: " << t.status().message() << "\n";
      return kExitUsage;
    }
    token = *t;
  }
  ClientConfig config = ResolveClientConfig(f.server, token);
  if (f.services.empty()) {
    std::cerr << "abacus gateway: no service to serve: give --service NAME (one or more)\n";
    return kExitUsage;
  }
  gateway::GatewayOptions o;
  o.listen = f.listen;
  o.services = f.services;
  o.haproxy = f.haproxy;
  if (f.metrics_interval < 1 || f.metrics_interval > 3600) {
    std::cerr << "abacus gateway: --metrics-interval: expected 1..3600 seconds, got " << f.metrics_interval << "\n";
    return kExitUsage;
  }
  o.metrics_interval_seconds = f.metrics_interval;
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  const std::string base = runtime != nullptr && *runtime != '\0' ? runtime : "/tmp";
  o.lock_dir = base;
  o.run_dir = !f.run_dir.empty() ? f.run_dir : base + "/abacus-gateway-" + std::to_string(::getpid());
  auto fetch = [config](const std::string& service, const std::string& known, int timeout) -> Result<nlohmann::json> {
    ApiClient api(config);
    std::string path = "/api/v1/services/" + UrlEncode(service) + "/endpoints";
    if (!known.empty()) path += "?waitChange=" + UrlEncode(known) + "&timeoutSeconds=" + std::to_string(timeout);
    ApiResponse r = api.Get(path);
    if (r.ok()) return r.body;
    if (r.status == 0) return Unavailable(r.error);
    std::string message = r.body.is_object() ? r.body.value("error", nlohmann::json::object()).value("message", r.text) : r.text;
    if (r.status == 404) return NotFound(message + " (check the name and that your token may see the service)");
    return FailedPrecondition(message);
  };
  // The autoscaling signals HAProxy observes, for services that scale on them.
  auto post = [config](const std::string& service_id, const nlohmann::json& body) -> Status {
    ApiClient api(config);
    ApiResponse r = api.Post("/api/v1/workloads/" + UrlEncode(service_id) + "/metrics", body.dump(), "application/json");
    if (r.ok()) return Status::OK();
    if (r.status == 0) return Unavailable(r.error);
    return FailedPrecondition("HTTP " + std::to_string(r.status) + ": " + r.text);
  };
  // SIGTERM/SIGINT are taken here, by sigtimedwait, not by a handler.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  gateway::Gateway gw(o, fetch, post);
  Status started = gw.Start();
  if (!started.ok()) {
    std::cerr << "abacus gateway: " << started.message() << "\n";
    gw.Stop();
    return started.code() == StatusCode::kUnavailable && started.message().find("server") != std::string::npos
               ? kExitUnreachable
               : kExitRefused;
  }
  std::cerr << "abacus gateway listening on " << f.listen << " (haproxy pid " << gw.haproxy_pid() << ", runtime API "
            << gw.admin_socket() << ")\n";
  timespec tick{0, 200'000'000};
  while (true) {
    int sig = sigtimedwait(&set, nullptr, &tick);
    if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) break;
    if (!gw.HaproxyRunning()) {
      std::cerr << "abacus gateway: haproxy exited (its log: " << o.run_dir << "/haproxy.log)\n";
      gw.Stop();
      return kExitRefused;
    }
  }
  gw.Stop();
  std::error_code ec;
  if (f.run_dir.empty()) std::filesystem::remove_all(o.run_dir, ec);
  return kExitOk;
}

}  // namespace

void AddGatewayCommand(CLI::App& app, int* exit_code) {
  auto f = std::make_shared<GatewayFlags>();
  CLI::App* cmd = app.add_subcommand("gateway", "Serve InferenceServices at a stable address through HAProxy");
  cmd->footer(
      "Starts HAProxy as a child on --listen and keeps its servers equal to each service's ready replicas "
      "(GET /api/v1/services/{S}/endpoints), weighted by the rollout, through HAProxy's runtime API (no "
      "reloads). A request whose connection failed is retried on another replica. The first --service is the "
      "default; the others are chosen by the Host header (their name). A service with spec.autoscaling.target "
      "requestsPerSecond or p99LatencyMs gets them from HAProxy's stats every --metrics-interval seconds. "
      "Details: docs/gateway.md.\n"
      "Example: abacus gateway --server http://127.0.0.1:8420 --token-file ~/.abacus/token --listen 127.0.0.1:8080 "
      "--service chat");
  cmd->add_option("--server", f->server, "server URL (else ABACUS_SERVER, else the client config)");
  cmd->add_option("--token-file", f->token_file, "file holding a token that may read the services (else ABACUS_TOKEN)");
  cmd->add_option("--listen", f->listen, "HOST:PORT to serve on (one gateway per address)")->capture_default_str();
  cmd->add_option("--service", f->services, "service name or id to serve (repeat for more)");
  cmd->add_option("--haproxy", f->haproxy, "the haproxy binary")->capture_default_str();
  cmd->add_option("--metrics-interval", f->metrics_interval,
                  "seconds between the autoscaling signals posted per service (requests/s, latency)")
      ->capture_default_str();
  cmd->add_option("--run-dir", f->run_dir,
                  "private folder for haproxy.cfg, the runtime API socket and haproxy.log (default: a new one under "
                  "$XDG_RUNTIME_DIR or /tmp, removed at exit)");
  cmd->callback([f, exit_code] { *exit_code = RunGateway(*f); });
}

}  // namespace abacus::cli
