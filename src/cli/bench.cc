#include "cli/bench.h"

#include "cli/measure.h"


#include <algorithm>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>

#include "sched/scheduler.h"
#include "sim/synthetic.h"

namespace abacus::cli {
namespace {

struct SchedulerBenchOptions {
  sim::SyntheticSpec spec;
  std::string output = "json";
  std::string policy = "binpack";
  int cycles = 1;
  bool fair_share = false;  // order by fair share over time, as the server does by default
  int reservations = 0;     // time-window reservations of 16 A100s each (half in force, half ahead)
};

int64_t Percentile(std::vector<int64_t>& v, double p) {
  if (v.empty()) return 0;
  size_t k = static_cast<size_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

int RunSchedulerBench(const SchedulerBenchOptions& o) {
  auto policy = sched::ParseScoringPolicy(o.policy);
  if (!policy.ok()) {
    std::cerr << "abacus bench scheduler: " << policy.status().message() << "\n";
    return 2;
  }
  std::cerr << "building " << o.spec.nodes << " nodes, " << o.spec.queues << " queues, " << o.spec.workloads
            << " pending workloads…\n";
  auto t0 = std::chrono::steady_clock::now();
  sched::Snapshot snapshot = sim::MakeSyntheticSnapshot(o.spec);
  if (o.fair_share) {
    // A past day of uneven use per queue (0–9 devices of the first accelerator flavor), read
    // with the server's default half-life: every queue gets a different fair-share factor.
    sched::UsageHistory history(sched::kDefaultFairShareHalfLife);
    const FlavorId f = Flavor::InternedCount() > 1 ? FlavorId{1} : kCpuFlavorId;
    for (size_t q = 0; q < snapshot.queues.size(); ++q) {
      history.Add(snapshot.queues[q].name, f, static_cast<int64_t>(q % 10) * 1000, snapshot.now - std::chrono::hours(48),
                  snapshot.now - std::chrono::hours(24));
    }
    sched::SetFairShare(history, &snapshot);
  }
  // Reservations of 16 gpu/nvidia/A100-80G each for queue i's tenant: even ones in force now,
  // odd ones starting in 2 h (work backfills them only with a maxRuntime that ends by then).
  for (int i = 0; i < o.reservations; ++i) {
    sched::WindowReservation r;
    r.name = "bench-" + std::to_string(i);
    r.flavor = Flavor::Parse("gpu/nvidia/A100-80G").value().Intern();
    r.devices = 16;
    r.tenant = snapshot.queues[static_cast<size_t>(i) % snapshot.queues.size()].tenant;
    r.start = snapshot.now + (i % 2 == 0 ? -std::chrono::hours(1) : std::chrono::hours(2));
    r.end = r.start + std::chrono::hours(4);
    snapshot.window_reservations.push_back(std::move(r));
  }
  auto t1 = std::chrono::steady_clock::now();
  sched::SchedulerConfig config;
  config.policy = *policy;
  std::cerr << "scheduling…\n";
  auto t2 = std::chrono::steady_clock::now();
  sched::CycleResult r = sched::Schedule(snapshot, config, /*measure=*/true);
  auto t3 = std::chrono::steady_clock::now();
  double cycle_s = std::chrono::duration<double>(t3 - t2).count();
  int64_t tasks = 0;
  for (const auto& a : r.admissions) tasks += static_cast<int64_t>(a.placements.size());
  std::vector<int64_t> ns = r.stats.decision_ns;
  std::vector<int64_t> ok_ns;
  nlohmann::json j;
  j["nodes"] = o.spec.nodes;
  j["queues"] = o.spec.queues;
  j["workloads"] = o.spec.workloads;
  j["gang"] = o.spec.gang;
  j["clusters"] = o.spec.clusters;
  j["policy"] = o.policy;
  j["fair_share"] = o.fair_share;
  j["reservations"] = o.reservations;
  j["admitted"] = r.stats.admitted;
  j["tasks_placed"] = tasks;
  j["pending"] = r.stats.pending;
  j["preempted"] = r.stats.preempted;
  j["victim_searches"] = r.stats.victim_searches;
  j["victim_searches_skipped"] = r.stats.victim_searches_skipped;
  j["attempts"] = r.stats.attempts;
  j["cycle_seconds"] = cycle_s;
  j["snapshot_build_seconds"] = std::chrono::duration<double>(t1 - t0).count();
  j["placements_per_sec"] = cycle_s > 0 ? static_cast<double>(r.stats.admitted) / cycle_s : 0;
  j["attempts_per_sec"] = cycle_s > 0 ? static_cast<double>(r.stats.attempts) / cycle_s : 0;
  j["decision_us"] = {{"p50", static_cast<double>(Percentile(ns, 0.50)) / 1000.0},
                      {"p99", static_cast<double>(Percentile(ns, 0.99)) / 1000.0},
                      {"max", ns.empty() ? 0.0 : static_cast<double>(*std::max_element(ns.begin(), ns.end())) / 1000.0}};
  j["peak_rss_mb"] = PeakRssMb();
  if (o.output == "json") {
    std::cout << j.dump() << "\n";
  } else {
    std::cout << "admitted " << r.stats.admitted << " of " << o.spec.workloads << " workloads (" << tasks
              << " tasks) in " << cycle_s << " s: " << j["placements_per_sec"].get<double>()
              << " placements/s; decision p50 " << j["decision_us"]["p50"].get<double>() << " us, p99 "
              << j["decision_us"]["p99"].get<double>() << " us; peak RSS " << j["peak_rss_mb"].get<double>() << " MB\n";
  }
  return 0;
}

}  // namespace

void AddBenchCommand(CLI::App& app, int* exit_code) {
  CLI::App* bench = app.add_subcommand(
      "bench",
      "Benchmarks that print numbers. The HTTP API load benchmark (durable submissions per second) is "
      "not a verb: it is build/release/bench/abacus_api_bench, run by `make bench` (docs/operations.md)");
  bench->require_subcommand(1);
  auto opts = std::make_shared<SchedulerBenchOptions>();
  CLI::App* s = bench->add_subcommand(
      "scheduler",
      "Scheduler scale benchmark on a synthetic heterogeneous cluster (A100/H100/T4 GPUs, Ascend NPUs, CPU "
      "nodes; 8 devices per accelerator node). One scheduling cycle over every pending workload.\n"
      "Example: abacus bench scheduler --nodes 10000 --workloads 100000 --queues 100 -o json");
  s->add_option("--nodes", opts->spec.nodes, "nodes in the cluster")->capture_default_str()->check(CLI::Range(1, 1'000'000));
  s->add_option("--workloads", opts->spec.workloads, "pending workloads")->capture_default_str()->check(CLI::Range(1, 10'000'000));
  s->add_option("--queues", opts->spec.queues, "queues (cohorts of 10)")->capture_default_str()->check(CLI::Range(1, 100'000));
  s->add_option("--gang", opts->spec.gang, "gang size: workloads of K tasks x 8 devices (0: single-device)")
      ->capture_default_str()->check(CLI::Range(0, 1024));
  s->add_option("--clusters", opts->spec.clusters, "clusters the nodes are spread over (each workload's tasks stay in one)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  s->add_option("--seed", opts->spec.seed, "random seed")->capture_default_str();
  s->add_option("--policy", opts->policy, "scorer: binpack, spread, fgd or fgd-plus")->capture_default_str();
  s->add_option("--reservations", opts->reservations,
                "time-window reservations of 16 A100s each, half in force, half starting in 2 h (docs/scheduler.md)")
      ->capture_default_str()
      ->check(CLI::Range(0, 10'000));
  s->add_flag("--fair-share", opts->fair_share,
              "give each queue a past day of usage and order by fair share over time (the server's default)");
  s->add_option("-o,--output", opts->output, "json or table")->capture_default_str()->check(CLI::IsMember({"json", "table"}));
  s->callback([opts, exit_code] { *exit_code = RunSchedulerBench(*opts); });
}

}  // namespace abacus::cli
