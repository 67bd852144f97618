// cli_bench: what one `abacus` process per command costs, as users script it in shell loops
// (issue 23, "A CLI that starts fast"): `abacus --version` alone, then `abacus submit -f JOB`
// one process per submission against a real `abacus server` on loopback, from 1 and 8 loops at
// once. Prints the CPU time of each process (user + system, from wait4), submissions per second
// and p50/p99 latency per process; it never passes or fails. Compare with `sbatch` the same way
// (docs/cli.md, "Start cost").
//   abacus_cli_bench ABACUS_BINARY [SUBMISSIONS_PER_ROW=200]
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench_org.h"
#include "common/percentile.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using abacus::Percentile;
using SteadyClock = std::chrono::steady_clock;

// One finished process: wall milliseconds, CPU milliseconds, exit status.
struct Run {
  double wall_ms = 0;
  double cpu_ms = 0;
  int status = -1;
};

// Runs `argv` with `env` (plus this process's environment), output to /dev/null; waits.
Run Spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  std::vector<std::string> envs = env;
  for (char** e = environ; *e != nullptr; ++e) envs.emplace_back(*e);
  std::vector<char*> a, v;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  for (const auto& s : envs) v.push_back(const_cast<char*>(s.c_str()));
  v.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  Run run;
  auto start = SteadyClock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, a[0], &fa, nullptr, a.data(), v.data()) != 0) {
    posix_spawn_file_actions_destroy(&fa);
    return run;
  }
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  rusage ru{};
  while (::wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
  }
  run.wall_ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count();
  auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  run.cpu_ms = ms(ru.ru_utime) + ms(ru.ru_stime);
  run.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return run;
}

// The absolute path of `name` found in $PATH, "" when none.
std::string FindInPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  for (size_t pos = 0; pos <= dirs.size();) {
    size_t end = dirs.find(':', pos);
    if (end == std::string::npos) end = dirs.size();
    fs::path candidate = fs::path(dirs.substr(pos, end - pos)) / name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    pos = end + 1;
  }
  return "";
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

void PrintRow(const char* what, int loops, const std::vector<Run>& runs, double seconds) {
  std::vector<double> wall, cpu;
  int failed = 0;
  for (const auto& r : runs) {
    wall.push_back(r.wall_ms);
    cpu.push_back(r.cpu_ms);
    if (r.status != 0) ++failed;
  }
  std::printf("%-18s %5d %9zu %6d %10.1f %8.2f %8.2f %11.2f\n", what, loops, runs.size(), failed,
              static_cast<double>(runs.size()) / seconds, Percentile(wall, 0.5), Percentile(wall, 0.99),
              Percentile(cpu, 0.5));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: abacus_cli_bench ABACUS_BINARY [SUBMISSIONS_PER_ROW]\n");
    return 2;
  }
  const std::string bin = fs::absolute(argv[1]).string();
  const int per_row = argc > 2 ? std::max(10, std::atoi(argv[2])) : 200;
  fs::path dir = fs::temp_directory_path() / ("abacus-cli-bench-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "jobs");
  fs::path data = dir / "data";

  // A real server on a free loopback port (SQLite, FULL sync, as shipped).
  std::vector<std::string> server_argv = {bin, "server", "--data", data.string(), "--listen", "127.0.0.1:0", "--config", ""};
  std::vector<char*> a;
  for (auto& s : server_argv) a.push_back(s.data());
  a.push_back(nullptr);
  pid_t server = 0;
  posix_spawn_file_actions_t log;
  posix_spawn_file_actions_init(&log);
  const std::string log_path = (dir / "server.log").string();
  posix_spawn_file_actions_addopen(&log, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&log, 1, 2);
  int spawned = posix_spawn(&server, a[0], &log, nullptr, a.data(), environ);
  posix_spawn_file_actions_destroy(&log);
  if (spawned != 0) {
    std::fprintf(stderr, "cannot start %s server\n", bin.c_str());
    return 1;
  }
  std::string url, token;
  for (int i = 0; i < 300 && (url.empty() || token.empty()); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    url = Slurp(data / "server.url");
    token = Slurp(data / "admin.token");
  }
  auto stop_server = [&] {
    ::kill(server, SIGTERM);
    int st = 0;
    ::waitpid(server, &st, 0);
    fs::remove_all(dir);
  };
  if (url.empty() || token.empty()) {
    std::fprintf(stderr, "the server wrote no %s/server.url within 30 s\n", data.c_str());
    stop_server();
    return 1;
  }
  const std::vector<std::string> env = {"ABACUS_SERVER=" + url, "ABACUS_TOKEN=" + token};
  {
    std::ofstream(dir / "org.yaml") << abacus::bench::kBenchOrg;
    Run applied = Spawn({bin, "apply", "-f", (dir / "org.yaml").string()}, env);
    if (applied.status != 0) {
      std::fprintf(stderr, "abacus apply of the bench organisation failed (exit %d)\n", applied.status);
      stop_server();
      return 1;
    }
  }

  // Slurm beside it, where a controller answers (scripts/slurm-local.sh starts one on this
  // machine): the same rows with `sbatch`, interleaved with Abacus's so that both see the same load.
  const std::string sbatch = FindInPath("sbatch"), scontrol = FindInPath("scontrol");
  const bool slurm = !sbatch.empty() && !scontrol.empty() && Spawn({scontrol, "ping"}, {}).status == 0;
  std::printf("%-18s %5s %9s %6s %10s %8s %8s %11s\n", "COMMAND", "LOOPS", "PROCESSES", "FAILED", "PER SECOND",
              "P50 MS", "P99 MS", "CPU MS P50");
  // One row: `loops` shell-like loops run argv_of(n) for n = 0..per_row-1 between them.
  auto row = [&](const char* label, int loops, const std::function<std::vector<std::string>(int)>& argv_of) {
    std::vector<Run> runs;
    std::mutex mu;
    std::atomic<int> next{0};
    auto start = SteadyClock::now();
    std::vector<std::thread> threads;
    for (int t = 0; t < loops; ++t) {
      threads.emplace_back([&] {
        for (int n = next.fetch_add(1); n < per_row; n = next.fetch_add(1)) {
          Run r = Spawn(argv_of(n), env);
          std::lock_guard lock(mu);
          runs.push_back(r);
        }
      });
    }
    for (auto& th : threads) th.join();
    PrintRow(label, loops, runs, std::chrono::duration<double>(SteadyClock::now() - start).count());
  };
  row("abacus --version", 1, [&](int) { return std::vector<std::string>{bin, "--version"}; });
  if (slurm) row("sbatch --version", 1, [&](int) { return std::vector<std::string>{sbatch, "--version"}; });
  int round = 0;
  for (int loops : {1, 8}) {
    ++round;
    row("abacus submit -f", loops, [&](int n) {
      fs::path job = dir / "jobs" / ("job-" + std::to_string(round) + "-" + std::to_string(n) + ".yaml");
      std::ofstream(job) << "kind: BatchJob\nname: cli-" << round << "-" << n
                         << "\nproject: bench/load\nqueue: bench-q\nspec:\n  command: [\"true\"]\n"
                            "  tasks: 1\n  taskGroups:\n    - name: main\n      resources: {cpu: 1, memory: 1Gi}\n";
      return std::vector<std::string>{bin, "submit", "-f", job.string()};
    });
    if (slurm) {
      row("sbatch --wrap", loops, [&](int n) {
        return std::vector<std::string>{sbatch, "-Q", "-J", "cli-" + std::to_string(round) + "-" + std::to_string(n),
                                        "-o", "/dev/null", "--wrap", "true"};
      });
    }
  }
  if (!slurm) std::printf("(no sbatch rows: no Slurm controller answers `scontrol ping`; scripts/slurm-local.sh start)\n");
  stop_server();
  return 0;
}
