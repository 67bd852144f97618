// abacus_api_bench (`make bench`): durable submissions per second and latency over loopback HTTP,
// against an in-process server or a running one. A benchmark, not a verb of the product: it
// prints numbers and never passes or fails.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <filesystem>
#include <iostream>
#include <memory>
#include <fstream>
#include <thread>
#include <unistd.h>

#include "bench_org.h"
#include "cli/client.h"
#include "cli/output.h"
#include "cli/tls_transport.h"
#include "cli/wire_client.h"
#include "common/cpu_steal.h"
#include "common/log.h"
#include "common/mutex.h"
#include "common/thread_name.h"
#include "net/http_transport.h"
#include "server/http_server.h"
#include "wire_load.h"

namespace abacus::bench {
namespace {

using nlohmann::json;
using cli::ApiClient;
using cli::ApiResponse;
using cli::ClientConfig;
using cli::kExitOk;
using cli::kExitRefused;
using cli::kExitUsage;
using cli::WireAnswer;
using cli::WireClient;

struct BenchApiOptions {
  std::string clients = "1,8,64";
  double seconds = 3;
  std::string server, token, output = "table";
  std::string data;
  std::string store;  // in-process server's store URL; empty: SQLite in the data folder
  std::string body = "json";  // json: what `abacus submit` sends; yaml: raw spec files
  std::string client = "wire";  // wire: the lean load generator; cli: the CLI's own client
};

// This invocation's mark in workload names, so that a second run against the same server never
// names a workload the first left active (409): the start time in milliseconds, base 36.
const std::string& RunTag() {
  static const std::string tag = [] {
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    std::string out;
    for (auto v = static_cast<uint64_t>(ms); v > 0; v /= 36) out.insert(out.begin(), "0123456789abcdefghijklmnopqrstuvwxyz"[v % 36]);
    return out;
  }();
  return tag;
}

// The canonical JSON form `abacus submit` sends (it validates YAML locally, with line numbers).
std::string JsonBody(int client, int64_t n) {
  return R"({"kind":"BatchJob","name":"load-)" + RunTag() + "-" + std::to_string(client) + "-" + std::to_string(n) +
         R"(","project":"bench/load","queue":"bench-q","spec":{"command":["true"],"taskGroups":[{"name":"main",)"
         R"("resources":{"cpu":"1","memory":"1Gi"}}],"tasks":1,"parallelism":1}})";
}

std::string Body(int client, int64_t n) {
  return "kind: BatchJob\nname: load-" + RunTag() + "-" + std::to_string(client) + "-" + std::to_string(n) +
         "\nproject: bench/load\nqueue: bench-q\nspec:\n  command: [\"true\"]\n  taskGroups:\n"
         "    - name: main\n      resources: {cpu: 1, memory: 1Gi}\n  tasks: 1\n  parallelism: 1\n";
}

struct Row {
  int clients = 0;
  int64_t ok = 0, errors = 0;
  double seconds = 0, rate = 0, p50_ms = 0, p99_ms = 0, max_ms = 0;
  std::optional<double> stolen_pct;  // the hypervisor's share of this machine's CPU meanwhile
};

// One client's connection through the CLI's client (--client cli, and HTTPS servers). Returns
// the status of one submission (0 when unanswered) and says why it failed.
class BenchConnection {
 public:
  explicit BenchConnection(const ClientConfig& cfg) : api_(std::make_unique<ApiClient>(cfg)) {}
  // Opens the connection before the clock starts.
  void Warm() { api_->Get("/healthz"); }
  int Submit(const std::string& body, const std::string& type, std::string* why) {
    ApiResponse r = api_->PostUnparsed("/api/v1/workloads", body, type);
    if (r.status != 201) *why = r.ErrorText();
    return r.status;
  }

 private:
  std::unique_ptr<ApiClient> api_;
};

// Fills the row's counts and percentiles from the latencies of its acknowledged submissions.
void Summarize(std::vector<double> all, int64_t errors, double seconds, Row& row) {
  std::sort(all.begin(), all.end());
  row.seconds = seconds;
  row.ok = static_cast<int64_t>(all.size());
  row.errors = errors;
  row.rate = static_cast<double>(row.ok) / row.seconds;
  if (!all.empty()) {
    row.p50_ms = all[all.size() / 2];
    row.p99_ms = all[std::min(all.size() - 1, all.size() * 99 / 100)];
    row.max_ms = all.back();
  }
}

// The request bodies of one row: client `c`'s n-th submission, unique across rows.
std::string RowBody(int run, int c, int64_t n, bool yaml) {
  return yaml ? Body(run * 1000 + c, n) : JsonBody(run * 1000 + c, n);
}

// --client wire: `clients` kept-alive connections driven by one thread (WireLoad).
Row RunWire(const net::ServerUrl& url, const std::string& token, int clients, double seconds, bool yaml, int run) {
  Row row;
  row.clients = clients;
  const std::string host = url.host + ":" + std::to_string(url.port);
  std::vector<int> fds;
  std::string connect_error;
  for (int c = 0; c < clients; ++c) {
    WireClient client(url.host, url.port);
    WireAnswer warm = client.RoundTrip(WireClient::Request("GET", "/healthz", host, "", "", ""));
    if (warm.status == 0 && connect_error.empty()) connect_error = warm.error;
    fds.push_back(client.ReleaseFd());
  }
  if (!connect_error.empty()) std::cerr << "bench: " << connect_error << "\n";
  const std::string type = yaml ? "application/yaml" : "application/json";
  WireLoad load(std::move(fds), [&](int c, int64_t n) {
    return WireClient::Request("POST", "/api/v1/workloads", host, token, type, RowBody(run, c, n, yaml));
  });
  StealMeter steal;
  auto start = std::chrono::steady_clock::now();
  WireLoadResult result = load.Run(std::chrono::duration<double>(seconds));
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  row.stolen_pct = steal.Percent();
  for (const auto& why : result.first_errors) std::cerr << "bench: request failed: " << why << "\n";
  Summarize(std::move(result.latencies_ms), result.errors, elapsed, row);
  return row;
}

Row RunOne(const ClientConfig& cfg, int clients, double seconds, bool yaml, bool wire) {
  static std::atomic<int> run_id{0};
  int run = run_id.fetch_add(1);
  if (wire) {
    auto url = net::ParseServerUrl(cfg.server);
    if (url.ok() && !url->tls) return RunWire(*url, cfg.token, clients, seconds, yaml, run);
  }
  std::vector<std::vector<double>> lat(clients);
  std::atomic<int64_t> errors{0};
  std::atomic<bool> go{false};
  std::atomic<int> ready{0};
  Mutex start_mu;  // clients connect first, then all start together
  std::condition_variable start_cv;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds + 0.2);
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      NameThisThread("abacus-bench");
      BenchConnection conn(cfg);
      conn.Warm();  // connect before the clock starts (keep-alive afterwards)
      {
        MutexLock lock(start_mu);
        ready.fetch_add(1);
        start_cv.notify_all();
        lock.Wait(start_cv, [&] { return go.load(); });
      }
      int64_t n = 0;
      while (std::chrono::steady_clock::now() < deadline) {
        auto start = std::chrono::steady_clock::now();
        std::string why;
        int status = conn.Submit(RowBody(run, c, n++, yaml), yaml ? "application/yaml" : "application/json", &why);
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        if (status == 201) {
          lat[c].push_back(ms);
        } else {
          // The first few failures say why (a refused write, a lost connection).
          if (errors.fetch_add(1) < 3) {
            MutexLock lock(start_mu);
            std::cerr << "bench: request failed after " << ms << " ms: " << why << "\n";
          }
        }
      }
    });
  }
  auto start = std::chrono::steady_clock::now();
  {
    MutexLock lock(start_mu);
    lock.Wait(start_cv, [&] { return ready.load() == clients; });
    deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    start = std::chrono::steady_clock::now();
    go = true;
  }
  StealMeter steal;
  start_cv.notify_all();
  for (auto& t : threads) t.join();
  Row row;
  row.clients = clients;
  row.stolen_pct = steal.Percent();
  std::vector<double> all;
  for (auto& l : lat) all.insert(all.end(), l.begin(), l.end());
  Summarize(std::move(all), errors.load(), std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
            row);
  return row;
}

int RunBenchApi(const BenchApiOptions& o) {
  std::vector<int> counts;
  for (const auto& part : CLI::detail::split(o.clients, ',')) {
    try {
      counts.push_back(std::stoi(part));
    } catch (...) {
      std::cerr << "error: --clients: expected numbers like 1,8,64\n";
      return kExitUsage;
    }
  }
  std::unique_ptr<server::ControlPlane> cp;
  std::unique_ptr<server::HttpServer> http;
  std::thread serve;
  ClientConfig cfg;
  std::string data;
  if (o.server.empty()) {
    // An in-process server on a fresh data folder: SQLite with synchronous=FULL, as shipped.
    data = o.data.empty() ? (std::filesystem::temp_directory_path() /
                             ("abacus-bench-" + std::to_string(::getpid()))).string()
                          : o.data;
    std::filesystem::remove_all(data);
    server::ControlPlaneOptions cpo;
    cpo.data_dir = data;
    cpo.store_url = o.store;
    auto opened = server::ControlPlane::Open(cpo);
    if (!opened.ok()) {
      std::cerr << "error: " << opened.status().ToString() << "\n";
      return kExitRefused;
    }
    cp = std::move(*opened);
    auto applied = cp->Apply(kBenchOrg, false, "bench-org.yaml", nullptr, {}, false, nullptr);
    if (!applied.ok()) {
      std::cerr << "error: " << applied.status().ToString() << "\n";
      return kExitRefused;
    }
    server::HttpOptions ho;
    ho.port = 0;
    ho.threads = std::max(16, *std::max_element(counts.begin(), counts.end()) + 8);
    http = std::make_unique<server::HttpServer>(*cp, ho);
    if (Status st = http->Bind(); !st.ok()) {
      std::cerr << "error: " << st.message() << "\n";
      return kExitRefused;
    }
    serve = std::thread([&] { http->Serve(); });
    cfg.server = "http://127.0.0.1:" + std::to_string(http->port());
    std::ifstream tok(data + "/admin.token");
    std::getline(tok, cfg.token);
  } else {
    cfg = cli::ResolveClientConfig(o.server, o.token);
    ApiClient api(cfg);
    ApiResponse r = api.Post("/api/v1/apply?filename=bench-org.yaml", kBenchOrg, "application/yaml");
    if (!r.ok()) {
      std::cerr << r.ErrorText() << "\n";
      return r.ExitCode();
    }
  }
  std::vector<Row> rows;
  for (int c : counts) rows.push_back(RunOne(cfg, c, o.seconds, o.body == "yaml", o.client == "wire"));
  if (http) {
    http->Stop();
    serve.join();
    cp->Shutdown();
    std::filesystem::remove_all(data);
  }
  if (o.output == "json") {
    json out = json::array();
    for (const auto& r : rows) {
      out.push_back({{"clients", r.clients}, {"acknowledged", r.ok}, {"errors", r.errors}, {"seconds", r.seconds},
                     {"submissions_per_sec", r.rate}, {"p50_ms", r.p50_ms}, {"p99_ms", r.p99_ms}, {"max_ms", r.max_ms},
                     {"stolen_pct", r.stolen_pct ? json(*r.stolen_pct) : json(nullptr)}});
    }
    std::cout << json{{"benchmark", "api"}, {"server", o.server.empty() ? "in-process" : cfg.server}, {"runs", out}}.dump(2)
              << "\n";
    return kExitOk;
  }
  std::vector<std::vector<std::string>> table;
  char buf[5][32];
  for (const auto& r : rows) {
    std::snprintf(buf[0], 32, "%.0f", r.rate);
    std::snprintf(buf[1], 32, "%.2f", r.p50_ms);
    std::snprintf(buf[2], 32, "%.2f", r.p99_ms);
    std::snprintf(buf[3], 32, "%.1f", r.max_ms);
    std::snprintf(buf[4], 32, "%.0f", r.stolen_pct.value_or(0));
    table.push_back({std::to_string(r.clients), std::to_string(r.ok), std::to_string(r.errors), buf[0], buf[1], buf[2],
                     buf[3], r.stolen_pct ? buf[4] : "-"});
  }
  cli::PrintTable(std::cout, {"CLIENTS", "ACKNOWLEDGED", "ERRORS", "SUBMISSIONS/S", "P50 MS", "P99 MS", "MAX MS", "STOLEN %"},
             table);
  // A shared VM's host can take a share of its CPU: numbers from such a row are the host's.
  std::cout.flush();
  for (const auto& r : rows) {
    if (r.stolen_pct && *r.stolen_pct >= 5) {
      std::cerr << "note: the hypervisor took " << static_cast<int>(*r.stolen_pct + 0.5)
                << "% of this machine's CPU during the " << r.clients
                << "-client row (steal time, /proc/stat): its numbers are lower than the code's own\n";
    }
  }
  return kExitOk;
}

// The command line: the options `make bench` passes, with --help.
int Main(int argc, char** argv) {
  cli::RegisterTlsTransport();  // --server https://… (the CLI's client, as every verb)
  BenchApiOptions o;
  CLI::App app{
      "Durable workload submissions per second and p50/p99 latency over loopback HTTP, at several client "
             "counts. Without --server it runs an in-process server on a temporary data folder (SQLite, FULL sync). "
             "STOLEN % is the share of this machine's CPU its hypervisor gave to other guests during the row "
             "(steal time): on a shared VM, compare rows and builds only at similar values.\n"
             "Example: abacus_api_bench --clients 1,8,64 --seconds 5",
      "abacus_api_bench"};
  app.add_option("--clients", o.clients, "comma-separated client counts")->capture_default_str();
  app.add_option("--seconds", o.seconds, "seconds per client count")->capture_default_str();
  app.add_option("--server", o.server, "benchmark this server instead (it gets a bench tenant and queue)");
  app.add_option("--token", o.token, "token for --server");
  app.add_option("--body", o.body, "request bodies: json (what `abacus submit` sends) or yaml")
      ->capture_default_str()
      ->check(CLI::IsMember({"json", "yaml"}));
  app.add_option("--client", o.client,
                  "wire: a minimal HTTP/1.1 load generator, as wrk: one thread drives every client's kept-alive "
                  "connection with epoll, one write per request, answers counted, not parsed; cli: a thread per "
                  "client with the client every abacus verb uses. HTTPS servers always get cli")
      ->capture_default_str()
      ->check(CLI::IsMember({"wire", "cli"}));
  app.add_option("--data", o.data, "data folder of the in-process server (removed afterwards)");
  app.add_option("--store", o.store,
                  "store of the in-process server, e.g. postgres://abacus@127.0.0.1:5432/bench (an empty "
                  "database; default: SQLite in the data folder)");
  app.add_option("-o,--output", o.output, "table or json")->capture_default_str()->check(CLI::IsMember({"table", "json"}));
  std::string log_level = "warn";  // as every abacus command: the in-process server's logs to stderr
  app.add_option("--log-level", log_level, "trace, debug, info, warn, error or off")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  if (Status st = InitLogging(log_level); !st.ok()) {
    std::cerr << "error: --log-level: " << st.message() << "\n";
    return kExitUsage;
  }
  return RunBenchApi(o);
}

}  // namespace
}  // namespace abacus::bench

int main(int argc, char** argv) { return abacus::bench::Main(argc, argv); }
