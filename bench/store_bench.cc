// store_bench: durable commit throughput and latency through GroupCommitter, on a SQLite file
// and, when given a database URL, on PostgreSQL, side by side.
//   abacus_store_bench [DIR] [SECONDS] [POSTGRES_URL]
// POSTGRES_URL (or $ABACUS_BENCH_PG_URL) names a database this benchmark may erase, e.g. one
// from `scripts/pg-test.sh start /tmp/pgb --tcp --durable` (fsync and synchronous_commit on,
// as a production server). For 1, 8 and 64 submitting threads, each submitting one batch at a
// time, prints commits/s, p50/p99/max latency and the mean group size, for two batch shapes
// (one object; a submission: object + event + audit entry): SQLite with synchronous=full and
// normal, PostgreSQL with its defaults.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "store/group_commit.h"
#include "store/store.h"
#include "store/store_copy.h"

namespace {

using namespace abacus;
using Clock = std::chrono::steady_clock;

struct Row {
  double commits_per_s;
  double p50_ms, p99_ms, max_ms;
  double mean_group;
};

Row RunOne(const std::string& url, int threads, double seconds, bool submission_shaped) {
  auto store = OpenStore(url);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    std::exit(1);
  }
  if (url.starts_with("postgres")) {
    // Every run starts from an empty database, as every SQLite run starts from a new file.
    if (Status s = (*store)->copy_access()->Erase(); !s.ok()) {
      std::fprintf(stderr, "%s\n", s.ToString().c_str());
      std::exit(1);
    }
  }
  GroupCommitter committer(**store);
  const std::string payload(300, 'x');
  std::atomic<bool> stop{false};
  std::vector<std::vector<double>> latencies(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        std::string key = "w-" + std::to_string(t) + "-" + std::to_string(i);
        std::string json = R"({"name":")" + key + R"(","spec":")" + payload + R"("})";
        WriteBatch batch;
        batch.Put("workload", key, json, 0);
        if (submission_shaped) {
          batch.AppendEvent("workload", key, "Submitted", "{}", SystemClock::Get().Now());
          batch.AppendJournal("audit", R"({"verb":"submit","key":")" + key + R"("})",
                              SystemClock::Get().Now());
        }
        auto start = Clock::now();
        Status s = committer.Submit(batch);
        auto end = Clock::now();
        if (!s.ok()) {
          std::fprintf(stderr, "%s\n", s.ToString().c_str());
          std::exit(1);
        }
        latencies[t].push_back(std::chrono::duration<double, std::milli>(end - start).count());
      }
    });
  }
  auto begin = Clock::now();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& w : workers) w.join();
  double elapsed = std::chrono::duration<double>(Clock::now() - begin).count();
  committer.Shutdown();

  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) { return all[std::min(all.size() - 1, size_t(p * all.size()))]; };
  GroupCommitStats stats = committer.stats();
  return Row{all.size() / elapsed, pct(0.50), pct(0.99), all.back(),
             double(stats.batches) / double(std::max<int64_t>(stats.groups, 1))};
}

}  // namespace

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : "/tmp/abacus-store-bench";
  double seconds = argc > 2 ? std::atof(argv[2]) : 3.0;
  const char* env_pg = std::getenv("ABACUS_BENCH_PG_URL");
  std::string pg = argc > 3 ? argv[3] : env_pg ? env_pg : "";
  std::filesystem::create_directories(dir);
  std::printf("%-16s %-11s %7s %12s %8s %8s %8s %10s\n", "store", "batch", "threads", "commits/s",
              "p50_ms", "p99_ms", "max_ms", "mean_group");
  std::vector<std::pair<std::string, std::string>> stores = {{"sqlite-full", "full"},
                                                             {"sqlite-normal", "normal"}};
  if (!pg.empty()) stores.emplace_back("postgres", pg);
  for (const auto& [name, what] : stores) {
    for (bool submission : {false, true}) {
      for (int threads : {1, 8, 64}) {
        std::string url = what;
        if (name.starts_with("sqlite")) {
          std::string path = dir + "/bench.db";
          for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
          url = "sqlite://" + path + "?synchronous=" + what;
        }
        Row r = RunOne(url, threads, seconds, submission);
        std::printf("%-16s %-11s %7d %12.0f %8.2f %8.2f %8.2f %10.1f\n", name.c_str(),
                    submission ? "submission" : "object", threads, r.commits_per_s, r.p50_ms,
                    r.p99_ms, r.max_ms, r.mean_group);
        std::fflush(stdout);
      }
    }
  }
  if (pg.empty()) {
    std::printf("(no PostgreSQL: pass a database URL as the third argument or in "
                "ABACUS_BENCH_PG_URL)\n");
  }
}
