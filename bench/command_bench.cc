// command_bench: operator commands against a control plane on SQLite (real fsync), without HTTP.
// N BatchJobs wait in a queue (no node takes them); C threads then cancel them all at once, and
// the same for hold; then N agents register (a fleet's restart). Prints commands per second, the latency percentiles, and how many store
// transactions (commit groups) carried them: a loop that waits inside each command's commit
// takes one transaction per command; one that hands the batch over and goes on lets commands
// queued together share one (issue 22.3). A benchmark: it never passes or fails.
//   abacus_command_bench [N] [C]
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "bench_org.h"
#include "common/percentile.h"
#include "common/log.h"
#include "server/control_plane.h"

namespace {

using namespace abacus;
using SteadyClock = std::chrono::steady_clock;

std::string Job(int i) {
  return R"({"kind":"BatchJob","name":"cmd-)" + std::to_string(i) +
         R"(","project":"bench/load","queue":"bench-q","spec":{"command":["true"],"taskGroups":[{"name":"main",)"
         R"("resources":{"cpu":"1","memory":"1Gi"}}],"tasks":1,"parallelism":1}})";
}

// Runs `command(i)` for i in [0, n) from `threads` threads; prints one line.
void Run(const char* name, server::ControlPlane& cp, int n, int threads, const std::function<bool(int)>& command) {
  const server::CommitterStats before = cp.governance().committer().stats();
  std::vector<std::vector<double>> took(threads);
  std::atomic<int> next{0};
  std::atomic<int> failed{0};
  auto start = SteadyClock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int i = next.fetch_add(1); i < n; i = next.fetch_add(1)) {
        auto s = SteadyClock::now();
        if (!command(i)) failed.fetch_add(1);
        took[t].push_back(std::chrono::duration<double, std::milli>(SteadyClock::now() - s).count());
      }
    });
  }
  for (auto& w : workers) w.join();
  const double seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  const server::CommitterStats after = cp.governance().committer().stats();
  std::vector<double> all;
  for (auto& v : took) all.insert(all.end(), v.begin(), v.end());
  std::printf("%-8s %8d %8d %10.0f %8.2f %8.2f %10lld %8d\n", name, n, threads, n / seconds, Percentile(all, 0.5),
              Percentile(all, 0.99), static_cast<long long>(after.groups - before.groups), failed.load());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::max(1, std::atoi(argv[1])) : 2000;
  const int threads = argc > 2 ? std::max(1, std::atoi(argv[2])) : 32;
  (void)InitLogging("warn");
  auto dir = std::filesystem::temp_directory_path() / ("abacus-command-bench-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  server::ControlPlaneOptions o;
  o.data_dir = dir.string();
  auto cp = server::ControlPlane::Open(o);
  if (!cp.ok()) {
    std::fprintf(stderr, "open: %s\n", cp.status().ToString().c_str());
    return 1;
  }
  if (auto applied = (*cp)->Apply(bench::kBenchOrg, false, "org.yaml", nullptr, {}, false, nullptr); !applied.ok()) {
    std::fprintf(stderr, "apply: %s\n", applied.status().ToString().c_str());
    return 1;
  }
  std::vector<std::string> ids;
  for (int i = 0; i < 2 * n; ++i) {
    auto r = (*cp)->Submit(Job(i), true, "job.json", nullptr, {}, false, nullptr);
    if (!r.ok()) {
      std::fprintf(stderr, "submit: %s\n", r.status().ToString().c_str());
      return 1;
    }
    ids.push_back(r->answer.submitted[0].id);
  }
  (*cp)->WaitForCycle();
  std::printf("%-8s %8s %8s %10s %8s %8s %10s %8s\n", "command", "n", "threads", "per_s", "p50_ms", "p99_ms",
              "store_tx", "failed");
  Run("hold", **cp, n, threads, [&](int i) {
    return (*cp)->ControlWorkload(ids[i], server::WorkloadControl::kHold, "bench", nullptr).ok();
  });
  Run("cancel", **cp, n, threads, [&](int i) { return (*cp)->Cancel(ids[n + i], "bench", {}, nullptr).ok(); });
  // A fleet's agents registering at once (a restart): n nodes of 8 GPUs, no task to reconcile.
  Run("register", **cp, n, threads, [&](int i) {
    nlohmann::json devices = nlohmann::json::array();
    for (int d = 0; d < 8; ++d) {
      devices.push_back({{"index", d}, {"flavor", "gpu/nvidia/A100-80G"}, {"memoryBytes", int64_t{80} << 30}});
    }
    nlohmann::json node = {{"name", "agent-" + std::to_string(i)},
                           {"cpuMilli", 64000},
                           {"memoryBytes", int64_t{512} << 30},
                           {"devices", devices}};
    return (*cp)->RegisterAgent(node, nullptr).ok();
  });
  cp->reset();
  std::filesystem::remove_all(dir);
  return 0;
}
