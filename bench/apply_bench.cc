// apply_bench: one apply of N projects (one tenant, N Project documents in one YAML body) into a
// fresh control plane on SQLite, for N = 1k, 2k, 4k, 8k and 50k by default; meanwhile a reader
// thread lists queues and cohorts without pause. Prints the apply's seconds, how many reads were
// answered during it and the slowest; it never passes or fails (issue 21: apply was quadratic,
// 8,000 projects 15.2 s, and reads waited on the state lock).
//   abacus_apply_bench [N...]
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "common/log.h"
#include "server/control_plane.h"

namespace {

using namespace abacus;
using SteadyClock = std::chrono::steady_clock;

std::string ManyProjects(int n) {
  std::string out = "kind: Tenant\nname: bulk\n";
  for (int i = 0; i < n; ++i) out += "---\nkind: Project\nname: p" + std::to_string(i) + "\ntenant: bulk\n";
  return out;
}

double Since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::max(1, std::atoi(argv[i])));
  if (sizes.empty()) sizes = {1000, 2000, 4000, 8000, 50000};
  (void)InitLogging("warn");
  std::printf("%10s %10s %10s %14s %16s\n", "projects", "bytes", "apply_s", "reads_during", "slowest_read_ms");
  for (int n : sizes) {
    auto dir = std::filesystem::temp_directory_path() / ("abacus-apply-bench-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    server::ControlPlaneOptions o;
    o.data_dir = dir.string();
    auto cp = server::ControlPlane::Open(o);
    if (!cp.ok()) {
      std::fprintf(stderr, "open: %s\n", cp.status().ToString().c_str());
      return 1;
    }
    std::string body = ManyProjects(n);
    std::atomic<bool> applying{true};
    std::atomic<int> reads{0};
    double slowest = 0;
    std::thread reader([&] {
      while (applying.load()) {
        auto start = SteadyClock::now();
        (void)(*cp)->ListQueues();
        (void)(*cp)->ListConfig("cohort");
        double took = Since(start);
        if (applying.load()) {
          reads.fetch_add(1);
          slowest = std::max(slowest, took);
        }
      }
    });
    auto start = SteadyClock::now();
    auto applied = (*cp)->Apply(body, false, "bulk.yaml", nullptr, {}, false, nullptr);
    double seconds = Since(start);
    applying.store(false);
    reader.join();
    if (!applied.ok()) {
      std::fprintf(stderr, "apply of %d: %s\n", n, applied.status().ToString().substr(0, 300).c_str());
      return 1;
    }
    std::printf("%10d %10zu %10.3f %14d %16.1f\n", n, body.size(), seconds, reads.load(), slowest * 1000);
    std::fflush(stdout);
    cp->reset();
    std::filesystem::remove_all(dir);
  }
  return 0;
}
