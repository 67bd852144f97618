#include "cli/sim.h"

#include "cli/health_flags.h"
#include "cli/measure.h"
#include "cli/number_flags.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "common/duration_parse.h"
#include "sim/events.h"
#include "sim/events_report.h"
#include "sim/fault_schedule.h"
#include "sim/openb_trace.h"
#include "sim/packing.h"
#include "sim/packing_report.h"

namespace abacus::cli {
namespace {

constexpr const char* kDefaultNodeFile = "openb_node_list_gpu_node.csv";

Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  if (!f) return InvalidArgument("cannot write " + path);
  f << text;
  f.close();
  if (!f) return InvalidArgument("cannot write " + path);
  return Status::OK();
}

// A progress line on stderr, rewritten in place when stderr is a terminal.
class Progress {
 public:
  explicit Progress(bool quiet) : enabled_(!quiet && isatty(STDERR_FILENO) != 0) {}
  void Update(const std::string& line) {
    if (!enabled_) return;
    std::cerr << "\r\033[K" << line << std::flush;
    shown_ = true;
  }
  // Clears the line (before other output on stderr).
  void Clear() {
    if (shown_) std::cerr << "\r\033[K" << std::flush;
    shown_ = false;
  }
  ~Progress() { Clear(); }

 private:
  bool enabled_;
  bool shown_ = false;
};

// Reports skipped rows of a trace read with --skip-bad-rows.
template <typename Table>
void ReportSkipped(const std::string& path, const Table& t) {
  if (t.skipped_rows == 0) return;
  std::cerr << path << ": skipped " << t.skipped_rows << " bad row(s)";
  if (!t.diagnostics.empty()) std::cerr << "; first: " << t.diagnostics.front().ToString();
  std::cerr << "\n";
}

struct PackingOptionsCli {
  std::string nodes;
  std::string pods;
  std::string policy = "random,dotprod,clustering,packing,bestfit,fgd";
  double arrival = 1.3;
  std::string seeds = "42";
  std::string output = "table";
  std::string plot;
  bool skip_bad_rows = false;
  bool quiet = false;
  double coverage = 0.95;
  std::string sampling = "trace";
  bool fgd_exact = false;
  int fgd_levels = 100;
  std::string ties = "auto";
};

int RunPacking(const PackingOptionsCli& o) {
  auto policies = sim::ParsePackingPolicies(o.policy);
  if (!policies.ok()) {
    std::cerr << "abacus sim packing: --policy: " << policies.status().message() << "\n";
    return 2;
  }
  auto seeds = sim::ParseSeeds(o.seeds);
  if (!seeds.ok()) {
    std::cerr << "abacus sim packing: --" << seeds.status().message() << "\n";
    return 2;
  }
  std::string nodes_path = o.nodes;
  if (nodes_path.empty()) {
    nodes_path = (std::filesystem::path(o.pods).parent_path() / kDefaultNodeFile).string();
  }
  sim::TraceReadOptions ro;
  ro.skip_bad_rows = o.skip_bad_rows;
  auto nodes = sim::ReadOpenbNodes(nodes_path, ro);
  if (!nodes.ok()) {
    std::cerr << nodes.status().message() << "\n";
    return 1;
  }
  ReportSkipped(nodes_path, *nodes);
  auto pods = sim::ReadOpenbPods(o.pods, ro);
  if (!pods.ok()) {
    std::cerr << pods.status().message() << "\n";
    return 1;
  }
  ReportSkipped(o.pods, *pods);
  sim::PackingOptions po;
  po.arrival = o.arrival;
  po.typical_coverage = o.coverage;
  po.sampling = o.sampling == "replacement" ? sim::PackingSampling::kReplacement : sim::PackingSampling::kTraceOnce;
  po.fgd_exact_scores = o.fgd_exact;
  po.fgd_levels = o.fgd_levels;
  po.ties = o.ties == "random"     ? sim::PackingTies::kRandom
            : o.ties == "shuffled" ? sim::PackingTies::kShuffledNodes
            : o.ties == "lowest"   ? sim::PackingTies::kLowestIndex
                                   : sim::PackingTies::kAuto;
  const size_t node_count = nodes->rows.size();  // counted before the rows move into the experiment
  auto x = sim::PackingExperiment::Create(std::move(nodes->rows), pods->rows, po);
  if (!x.ok()) {
    std::cerr << "abacus sim packing: " << x.status().message() << "\n";
    return 1;
  }
  Progress progress(o.quiet);
  std::vector<sim::PackingSummary> results;
  size_t done = 0;
  const size_t total = policies->size() * seeds->size();
  for (sim::PackingPolicy p : *policies) {
    std::vector<sim::PackingRun> runs;
    for (uint64_t seed : *seeds) {
      progress.Update("sim packing: " + std::string(sim::PackingPolicyName(p)) + " seed " + std::to_string(seed) + " (" +
                      std::to_string(done + 1) + "/" + std::to_string(total) + ")");
      runs.push_back(x->Run(p, seed));
      ++done;
    }
    results.push_back(sim::AveragePackingRuns(p, runs));
  }
  if (!o.plot.empty()) {
    std::string title = "Packing: " + std::filesystem::path(o.pods).filename().string() + " on " +
                        std::filesystem::path(nodes_path).filename().string() + ", " + std::to_string(seeds->size()) +
                        " seed(s)";
    Status st = WriteFile(o.plot, sim::PackingSvg(title, results));
    if (!st.ok()) {
      std::cerr << "abacus sim packing: " << st.message() << "\n";
      return 1;
    }
  }
  if (o.output == "json") {
    std::cout << sim::PackingJson(results).dump() << "\n";
  } else if (o.output == "csv") {
    std::cout << sim::PackingCsv(results);
  } else {
    std::cout << node_count << " nodes, " << x->total_gpu_milli() / 1000 << " GPUs; " << pods->rows.size()
              << " pods in " << x->distribution().size() << " typical shapes; arrival " << o.arrival << "\n";
    std::cout << sim::PackingTable(results);
    std::cout << "peak RSS " << static_cast<int64_t>(PeakRssMb()) << " MB\n";
  }
  return 0;
}

struct EventsOptionsCli {
  std::string trace;
  std::string config;
  std::string nodes;
  std::string queue = "default";
  std::string output = "table";
  std::string plot;
  std::string policy = "binpack";
  bool skip_bad_rows = false;
  bool quiet = false;
  bool workloads = false;
  bool full_cycles = false;
  bool ignore_placement_rules = false;
  std::string until;  // empty: the trace's last arrival or departure
  std::string fair_share_half_life = "7d";
  std::string faults;             // fault schedule file
  double fault_rate = 0;          // random faults per device-day
  std::string fault_repair = "4h";
  uint64_t seed = 42;
  std::shared_ptr<HealthFlags> health = std::make_shared<HealthFlags>();
};

// The device faults the options ask for: the schedule file's and the random ones, in time order.
Result<std::vector<sim::FaultEvent>> EventFaults(const EventsOptionsCli& o, const sim::EventInput& input,
                                                 const sim::EventSimOptions& so) {
  std::vector<sim::FaultEvent> faults;
  if (!o.faults.empty()) {
    auto file = sim::LoadFaultSchedule(o.faults, input.cluster.nodes);
    if (!file.ok()) return file.status();
    faults = std::move(*file);
  }
  if (o.fault_rate > 0) {
    auto repair = ParseDurationSpec(o.fault_repair);
    if (!repair.ok()) return InvalidArgument("--fault-repair: " + repair.status().message());
    sim::FaultRateOptions fr;
    fr.per_device_day = o.fault_rate;
    fr.repair = *repair;
    fr.seed = o.seed;
    fr.to_s = so.until_s ? *so.until_s : sim::TraceHorizon(input);
    fr.from_s = fr.to_s;
    for (const auto& j : input.jobs) fr.from_s = std::min(fr.from_s, j.submit_s);
    faults = sim::MergeFaults(std::move(faults), sim::RandomFaults(input.cluster.nodes, fr));
  }
  return faults;
}

int RunEvents(const EventsOptionsCli& o) {
  sim::EventInputOptions io;
  io.trace = o.trace;
  io.config = o.config;
  io.nodes = o.nodes;
  io.openb_queue = o.queue;
  io.skip_bad_rows = o.skip_bad_rows;
  auto input = sim::LoadEventInput(io);
  if (!input.ok()) {
    std::cerr << input.status().message() << "\n";
    return 1;
  }
  for (const auto& w : input->warnings) std::cerr << "warning: " << w << "\n";
  auto policy = sched::ParseScoringPolicy(o.policy);
  if (!policy.ok()) {
    std::cerr << "abacus sim events: --policy: " << policy.status().message() << "\n";
    return 2;
  }
  sim::EventSimOptions so;
  if (!o.until.empty()) {
    auto until = ParseDurationSpec(o.until);
    if (!until.ok()) {
      std::cerr << "abacus sim events: --until: " << until.status().message() << "\n";
      return 2;
    }
    so.until_s = std::chrono::duration_cast<std::chrono::seconds>(*until).count();
  }
  auto half_life = ParseDurationSpec(o.fair_share_half_life);
  if (!half_life.ok()) {
    std::cerr << "abacus sim events: --fair-share-half-life: " << half_life.status().message()
              << " (a duration such as 7d, 12h or 0 to turn fair share off)\n";
    return 2;
  }
  so.config.fair_share_half_life = *half_life;
  so.config.policy = *policy;
  so.incremental = !o.full_cycles;
  so.placement_rules = !o.ignore_placement_rules;
  auto health = ResolveHealthFlags(*o.health);
  if (!health.ok()) {
    std::cerr << "abacus sim events: " << health.status().message() << "\n";
    return 2;
  }
  so.health = *health;
  auto faults = EventFaults(o, *input, so);
  if (!faults.ok()) {
    std::cerr << "abacus sim events: " << faults.status().message() << "\n";
    return faults.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  so.faults = std::move(*faults);
  Progress progress(o.quiet);
  so.progress = [&](const std::string& line) { progress.Update(line); };
  sim::EventSimResult result = sim::RunEventSim(*input, so);
  progress.Clear();
  for (const auto& w : result.warnings) std::cerr << "warning: " << w << "\n";
  if (!o.plot.empty()) {
    Status st = WriteFile(o.plot, sim::EventsSvg("Events: " + std::filesystem::path(o.trace).filename().string(), result));
    if (!st.ok()) {
      std::cerr << "abacus sim events: " << st.message() << "\n";
      return 1;
    }
  }
  if (o.output == "json") {
    std::cout << sim::EventsJson(result, o.workloads).dump() << "\n";
  } else if (o.output == "csv") {
    std::cout << sim::EventsCsv(result);
  } else {
    std::cout << sim::EventsTable(result);
  }
  return 0;
}

}  // namespace

void AddSimCommand(CLI::App& app, int* exit_code) {
  CLI::App* sim = app.add_subcommand("sim", "Trace-driven simulation over the scheduler (docs/simulator.md)");
  sim->require_subcommand(1);

  auto po = std::make_shared<PackingOptionsCli>();
  CLI::App* p = sim->add_subcommand(
      "packing",
      "The ATC'23 'Beware of Fragmentation' packing experiment: pods arrive (sampled with replacement) until their GPU "
      "demand reaches --arrival x cluster GPU capacity; none leave. Prints the GPU allocation ratio and fragmentation "
      "per policy as functions of arrived demand, averaged over the seeds.\n"
      "Example: abacus sim packing --pods ../shared/traces/openb/openb_pod_list_default.csv --policy fgd,bestfit "
      "--arrival 1.3 --seeds 42-51 -o json\n"
      "Example: abacus sim packing --pods ../shared/traces/openb/openb_pod_list_gpuspec33.csv --policy fgd,fgd-plus "
      "--seeds 42-51 -q");
  p->add_option("--nodes", po->nodes,
                "openb node list (default: openb_node_list_gpu_node.csv next to the pod list, the paper's cluster)");
  p->add_option("--pods", po->pods, "openb pod list (openb_pod_list_*.csv)")->required();
  p->add_option("--policy", po->policy,
                "comma-separated: random, dotprod, clustering, packing, bestfit, fgd (the paper's), fgd-pack (Abacus's "
                "FGD with packing tie-breaks), fgd-plus (Abacus's FGD that also counts GPUs stranded by used-up CPU or "
                "memory and weighs model-constrained shapes by the capacity they may use), binpack, spread, "
                "sched-fgd (Abacus's scorers through sched::Placer)")
      ->capture_default_str();
  p->add_option("--arrival", po->arrival, "stop when arrived GPU demand reaches this x cluster GPU capacity")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 100.0));
  p->add_option("--seeds,--seed", po->seeds, "seeds: N, A-B or a comma list; curves are averaged")->capture_default_str();
  p->add_option("--typical-coverage", po->coverage,
                "share of pods whose shapes form the target workload M of the fragmentation measure")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1.0));
  p->add_option("--sampling", po->sampling,
                "arrival sequence: trace (every pod once, shuffled, then draws with replacement: the authors' "
                "simulator) or replacement (independent uniform draws)")
      ->capture_default_str()
      ->check(CLI::IsMember({"trace", "replacement"}));
  p->add_flag("--fgd-exact", po->fgd_exact,
              "fgd, fgd-plus: compare exact fragmentation deltas instead of the reference's integer score "
              "floor(100 sigmoid(-delta/1000))");
  p->add_option("--fgd-levels", po->fgd_levels,
                "fgd, fgd-plus: steps of the node score floor(N sigmoid(-delta/1000)); 100 is the reference, fewer steps "
                "tie more nodes and pack them by the tie rule (e.g. 30: +4.8 points on gpuspec33 at 100%)")
      ->capture_default_str()
      ->check(CLI::Range(2, 1000000));
  p->add_option("--ties", po->ties,
                "which of the best nodes wins: lowest (node-file order), random (drawn per arrival, Kubernetes' "
                "selectHost), shuffled (first in a seeded node order fixed for the run) or auto (shuffled for fgd, "
                "fgd-pack and fgd-plus, lowest for the others)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "lowest", "random", "shuffled"}));
  p->add_option("-o,--output", po->output, "table, json or csv")->capture_default_str()->check(CLI::IsMember({"table", "json", "csv"}));
  p->add_option("--plot", po->plot, "write an SVG chart (allocation and fragmentation ratio vs arrived demand)");
  p->add_flag("--skip-bad-rows", po->skip_bad_rows, "skip malformed trace rows (counted) instead of stopping");
  p->add_flag("-q,--quiet", po->quiet, "no progress line on stderr");
  p->callback([po, exit_code] { *exit_code = RunPacking(*po); });

  auto eo = std::make_shared<EventsOptionsCli>();
  CLI::App* e = sim->add_subcommand(
      "events",
      "Replay a trace on virtual time through sched::Schedule: workloads arrive at their submit time, run for their "
      "duration and leave; queues, quotas, borrowing, preemption and gang apply as in the server.\n"
      "Example: abacus sim events --trace examples/traces/small-cluster.yaml --plot day.svg\n"
      "Example: abacus sim events --trace examples/traces/small-cluster.yaml --faults examples/traces/faults.txt\n"
      "Example: abacus sim events --trace ../shared/traces/openb/openb_pod_list_default.csv --fault-rate 0.01 "
      "--fault-repair 6h --seed 7 -q");
  e->add_option("--trace", eo->trace,
                "generic trace (.yaml file or folder with nodes.csv and workloads.csv) or an openb pod list (.csv)")
      ->required();
  e->add_option("--config", eo->config, "tenants, queues, quotas and priority classes (an `abacus apply` YAML file)");
  e->add_option("--nodes", eo->nodes, "openb node list for an openb pod list (default: the GPU node list next to it)");
  e->add_option("--queue", eo->queue, "queue for openb pods (they name none)")->capture_default_str();
  e->add_option("--policy", eo->policy, "scorer: binpack, spread, fgd or fgd-plus")->capture_default_str();
  e->add_option("-o,--output", eo->output, "table, json or csv")->capture_default_str()->check(CLI::IsMember({"table", "json", "csv"}));
  e->add_option("--plot", eo->plot, "write an SVG chart (utilization and queue length over time)");
  e->add_flag("--skip-bad-rows", eo->skip_bad_rows, "skip malformed trace rows (counted) instead of stopping");
  e->add_option("--until", eo->until,
                "the horizon, from the trace's start (e.g. 86400s, 7d): later events are not replayed and what runs "
                "then counts up to it (default: the trace's last arrival or departure)");
  e->add_option("--fair-share-half-life", eo->fair_share_half_life,
                "half-life of past usage for fair share, as the server's flag (docs/scheduler.md); 0s: off")
      ->capture_default_str();
  e->add_flag("--workloads", eo->workloads, "with -o json: each workload's first start, finish and nodes");
  e->add_flag("--full-cycles", eo->full_cycles,
              "one full cycle over every waiting workload at each instant instead of the server's incremental cycles "
              "(the slow reference)");
  e->add_flag("--ignore-placement-rules", eo->ignore_placement_rules,
              "schedule as if the trace had no maxPerNode, spread, antiAffinity nor extended requests, and only count "
              "what that breaks (the 'before' of a scheduler that cannot express them)");
  e->add_option("--faults", eo->faults,
                "device fault schedule, one event a line: 'TIME NODE DEVICE fault [REASON...]', 'TIME NODE DEVICE "
                "recover' or 'TIME NODE uncordon' (TIME: seconds from the trace's start or a duration such as 90m, 2h, "
                "1d; # comments); applied through the server's health rule (docs/simulator.md, \"Device faults\")");
  e->add_option("--fault-rate", eo->fault_rate,
                "random device faults per device-day (exponential healthy times from --seed), each device reported "
                "healthy again --fault-repair later; with --faults, both")
      ->check(AtLeast(0));
  e->add_option("--fault-repair", eo->fault_repair, "with --fault-rate: how long a faulted device stays unhealthy")
      ->capture_default_str();
  e->add_option("--seed", eo->seed, "with --fault-rate: the seed of the random faults")->capture_default_str();
  AddHealthFlags(e, eo->health);
  e->add_flag("-q,--quiet", eo->quiet, "no progress line on stderr");
  e->callback([eo, exit_code] { *exit_code = RunEvents(*eo); });
}

}  // namespace abacus::cli
