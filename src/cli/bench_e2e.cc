// `abacus bench e2e`: trivial one-task jobs through a real server and real agent processes on
// this machine: submitted/s, started/s, completed/s and submit-to-start latency (issue 6).
#include <CLI/CLI.hpp>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "cli/client.h"
#include "common/percentile.h"
#include "cli/verbs.h"
#include "server/http_server.h"

namespace abacus::cli {
namespace {

using nlohmann::json;

struct BenchE2eOptions {
  int agents = 4;
  int slots = 64;
  int jobs = 2000;
  int clients = 8;
  double timeout_seconds = 300;
  double rate = 0;  // jobs/s to submit at; 0: as fast as the clients can
  std::string output = "table";
};

std::string Org(int slots) {
  return "kind: Tenant\nname: bench\n---\nkind: Project\nname: e2e\ntenant: bench\n---\nkind: Queue\nname: e2e\n"
         "tenant: bench\nquotas:\n  - {resource: cpu, nominal: " +
         std::to_string(slots) + "}\n  - {resource: memory, nominal: 1Ti}\n";
}

std::string Job(int n) {
  return R"({"kind":"BatchJob","name":"e2e-)" + std::to_string(n) +
         R"(","project":"bench/e2e","queue":"e2e","spec":{"command":["true"],"taskGroups":[{"name":"main",)"
         R"("resources":{"cpu":"1","memory":"64Mi"}}],"tasks":1,"parallelism":1}})";
}

pid_t SpawnAgent(const std::string& url, const std::string& data, const std::string& name, const std::string& dir,
                 int cpus) {
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    std::vector<std::string> args = {self, "agent", "--server", url, "--token-file", data + "/join.token", "--name",
                                     name, "--work-dir", dir, "--no-real-devices", "--no-cgroups", "--cpus",
                                     std::to_string(cpus), "--memory", "64Gi", "--rediscover", "0"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

int RunBenchE2e(const BenchE2eOptions& o) {
  std::string data = (std::filesystem::temp_directory_path() / ("abacus-e2e-" + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(data);
  // The agents' work folders lie outside the server's data folder (0700): a root agent runs each
  // task as a uid of its own (docs/agent.md "Task users"), which must pass through them — the
  // default path users have is the one measured.
  std::string agents_dir = data + "-agents";
  std::filesystem::remove_all(agents_dir);
  std::filesystem::create_directories(agents_dir);
  std::filesystem::permissions(agents_dir, std::filesystem::perms(0711), std::filesystem::perm_options::replace);
  server::ControlPlaneOptions cpo;
  cpo.data_dir = data;
  auto opened = server::ControlPlane::Open(cpo);
  if (!opened.ok()) {
    std::cerr << "error: " << opened.status().ToString() << "\n";
    return kExitRefused;
  }
  std::unique_ptr<server::ControlPlane> cp = std::move(*opened);
  if (auto applied = cp->Apply(Org(o.slots), false, "bench-org.yaml", nullptr, {}, false, nullptr); !applied.ok()) {
    std::cerr << "error: " << applied.status().ToString() << "\n";
    return kExitRefused;
  }
  server::HttpOptions ho;
  ho.port = 0;
  ho.threads = o.clients + 4 * o.agents + 16;
  server::HttpServer http(*cp, ho);
  if (Status st = http.Bind(); !st.ok()) {
    std::cerr << "error: " << st.message() << "\n";
    return kExitRefused;
  }
  std::thread serve([&] { http.Serve(); });
  std::string url = "http://127.0.0.1:" + std::to_string(http.port());
  ClientConfig cfg{url, ""};
  std::ifstream(data + "/admin.token") >> cfg.token;

  // Agents, each advertising its share of the slots.
  std::vector<pid_t> agents;
  for (int i = 0; i < o.agents; ++i) {
    int cpus = o.slots / o.agents + (i < o.slots % o.agents ? 1 : 0);
    agents.push_back(
        SpawnAgent(url, data, "e2e-" + std::to_string(i), agents_dir + "/agent-" + std::to_string(i), cpus));
  }
  // Stops what the bench started and removes its folders: at the end, and when it cannot go on.
  auto stop_all = [&] {
    for (pid_t pid : agents) kill(pid, SIGTERM);
    for (pid_t pid : agents) waitpid(pid, nullptr, 0);
    http.Stop();
    serve.join();
    cp->Shutdown();
    std::filesystem::remove_all(data);
    std::filesystem::remove_all(agents_dir);
  };
  ApiClient api(cfg);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (true) {
    ApiResponse r = api.Get("/api/v1/nodes");
    if (r.ok() && static_cast<int>(r.body["items"].size()) == o.agents) break;
    if (std::chrono::steady_clock::now() > deadline) {
      std::cerr << "error: the agents did not register within 30 s\n";
      stop_all();
      return kExitRefused;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::cerr << "bench e2e: " << o.agents << " agents, " << o.slots << " slots, submitting " << o.jobs << " jobs from "
            << o.clients << " clients\n";

  // Submit as fast as the clients can.
  std::atomic<int> next{0}, errors{0};
  auto t0 = std::chrono::steady_clock::now();
  int64_t t0_us = ToMicros(SystemClock::Get().Now());
  std::vector<std::thread> clients;
  for (int c = 0; c < o.clients; ++c) {
    clients.emplace_back([&] {
      ApiClient client(cfg);
      for (int n = next++; n < o.jobs; n = next++) {
        if (o.rate > 0) std::this_thread::sleep_until(t0 + std::chrono::duration<double>(n / o.rate));
        if (!client.Post("/api/v1/workloads", Job(n), "application/json").ok()) errors++;
      }
    });
  }
  for (auto& t : clients) t.join();
  double submit_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  // Wait for every job to finish, showing progress.
  int done = 0;
  json items;
  auto limit = std::chrono::steady_clock::now() + std::chrono::duration<double>(o.timeout_seconds);
  int last_shown = -1;
  // Progress from /metrics (cheap), so that watching does not slow the server down.
  auto count_state = [](const std::string& metrics, const std::string& state) {
    std::string key = "abacus_workloads{state=\"" + state + "\"} ";
    size_t at = metrics.find(key);
    return at == std::string::npos ? 0 : std::atoi(metrics.c_str() + at + key.size());
  };
  while (std::chrono::steady_clock::now() < limit) {
    ApiResponse r = api.Get("/metrics");
    if (r.status == 200) {
      done = count_state(r.text, "Succeeded") + count_state(r.text, "Failed");
      if (done / 500 != last_shown) {
        last_shown = done / 500;
        std::cerr << "  " << done << "/" << o.jobs << " finished\n";
      }
      if (done >= o.jobs - errors.load()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  if (ApiResponse r = api.Get("/api/v1/workloads?limit=1000000"); r.ok()) items = r.body["items"];
  std::string cycle_stats;
  if (ApiResponse r = api.Get("/metrics"); r.status == 200) {
    auto value = [&](const std::string& key) {
      size_t at = r.text.find("\n" + key + " ");
      return at == std::string::npos ? 0.0 : std::atof(r.text.c_str() + at + key.size() + 2);
    };
    double cycles = value("abacus_scheduling_cycle_seconds_count");
    double secs = value("abacus_scheduling_cycle_seconds_sum");
    std::cerr << "  scheduler: " << cycles << " cycles, " << (cycles > 0 ? 1000 * secs / cycles : 0) << " ms each on average\n";
    // The loop's own commits (cycles, task reports): how many it went on past, how many it waited for.
    std::cerr << "  loop commits: " << value("abacus_loop_commits_total") << " settled, "
              << value("abacus_loop_commit_waits_total") << " waited for\n";
  }
  // Latencies from the ledger: submission, agent-reported start and end of each task.
  std::vector<double> start_ms, admit_to_start_ms, run_ms, finish_to_record_ms;
  int64_t last_start = t0_us, last_end = t0_us;
  int failed = 0;
  for (const auto& w : items) {
    if (w.value("state", "") == "Failed") failed++;
    if (!w.contains("placements") || w["placements"].empty()) continue;
    const json& p = w["placements"][0];
    int64_t submitted = w.value("submittedUs", int64_t{0});
    int64_t started = p.value("startedUs", int64_t{0});
    int64_t finished = p.value("finishedUs", int64_t{0});
    int64_t admitted = w.value("admittedUs", int64_t{0});
    int64_t recorded = w.value("finishedUs", int64_t{0});
    if (started > 0 && admitted > 0) admit_to_start_ms.push_back(static_cast<double>(started - admitted) / 1000.0);
    if (started > 0 && finished > 0) run_ms.push_back(static_cast<double>(finished - started) / 1000.0);
    if (finished > 0 && recorded > 0) finish_to_record_ms.push_back(static_cast<double>(recorded - finished) / 1000.0);
    if (started > 0) {
      start_ms.push_back(static_cast<double>(started - submitted) / 1000.0);
      last_start = std::max(last_start, started);
    }
    last_end = std::max(last_end, finished);
  }
  double start_s = static_cast<double>(last_start - t0_us) / 1e6;
  double end_s = static_cast<double>(last_end - t0_us) / 1e6;
  json result = {{"benchmark", "e2e"},
                 {"agents", o.agents},
                 {"slots", o.slots},
                 {"jobs", o.jobs},
                 {"submit_errors", errors.load()},
                 {"completed", done},
                 {"failed", failed},
                 {"submitted_per_sec", o.jobs / submit_s},
                 {"started_per_sec", start_s > 0 ? static_cast<double>(start_ms.size()) / start_s : 0},
                 {"completed_per_sec", end_s > 0 ? done / end_s : 0},
                 {"submit_to_start_p50_ms", Percentile(start_ms, 0.50)},
                 {"submit_to_start_p99_ms", Percentile(start_ms, 0.99)},
                 {"submit_to_start_max_ms", Percentile(start_ms, 1.0)},
                 {"admit_to_start_p50_ms", Percentile(admit_to_start_ms, 0.50)},
                 {"admit_to_start_p99_ms", Percentile(admit_to_start_ms, 0.99)},
                 {"run_p50_ms", Percentile(run_ms, 0.50)},
                 {"exit_to_recorded_p50_ms", Percentile(finish_to_record_ms, 0.50)},
                 {"exit_to_recorded_p99_ms", Percentile(finish_to_record_ms, 0.99)}};

  stop_all();

  if (o.output == "json") {
    std::cout << result.dump(2) << "\n";
  } else {
    std::printf("JOBS  AGENTS  SLOTS  SUBMITTED/S  STARTED/S  COMPLETED/S  START P50 MS  START P99 MS  FAILED\n");
    std::printf("%-5d %-7d %-6d %-12.0f %-10.0f %-12.0f %-13.1f %-13.1f %d\n", o.jobs, o.agents, o.slots,
                result["submitted_per_sec"].get<double>(), result["started_per_sec"].get<double>(),
                result["completed_per_sec"].get<double>(), result["submit_to_start_p50_ms"].get<double>(),
                result["submit_to_start_p99_ms"].get<double>(), failed);
  }
  return done >= o.jobs && failed == 0 ? kExitOk : kExitRefused;
}

}  // namespace

void AddBenchE2eCommand(CLI::App& app, int* exit_code) {
  CLI::App* bench = app.get_subcommand("bench");
  auto o = std::make_shared<BenchE2eOptions>();
  CLI::App* cmd = bench->add_subcommand(
      "e2e", "Run trivial one-task jobs (`true`) through an in-process server and real `abacus agent` processes on "
             "this machine; print submitted/s, started/s, completed/s and submit-to-start latency (from the "
             "agent-reported start times in the ledger).\n"
             "Example: abacus bench e2e --agents 4 --slots 64 --jobs 2000");
  cmd->add_option("--agents", o->agents, "agent processes")->check(CLI::Range(1, 64))->capture_default_str();
  cmd->add_option("--slots", o->slots, "CPU slots in all (each job takes one)")->check(CLI::Range(1, 4096))->capture_default_str();
  cmd->add_option("--jobs", o->jobs, "jobs to run")->check(CLI::Range(1, 1000000))->capture_default_str();
  cmd->add_option("--clients", o->clients, "concurrent submitting clients")->check(CLI::Range(1, 256))->capture_default_str();
  cmd->add_option("--rate", o->rate,
                  "submit at this many jobs/s (0: as fast as possible; then submit-to-start includes the backlog)")
      ->capture_default_str();
  cmd->add_option("--timeout", o->timeout_seconds, "give up after this many seconds")->capture_default_str();
  cmd->add_option("-o,--output", o->output, "table or json")->capture_default_str()->check(CLI::IsMember({"table", "json"}));
  cmd->callback([=] { *exit_code = RunBenchE2e(*o); });
}

}  // namespace abacus::cli
