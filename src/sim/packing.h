// Packing mode: the arrivals-only experiment of Weng et al., "Beware of Fragmentation" (USENIX
// ATC 2023), over the src/sched ledger and scorers. docs/simulator.md §4 is the reference.
//
//   1. The cluster's free capacity lives in a sched::ClusterState (the scheduler's own ledger:
//      every placement goes through ClusterState::Allocate, which refuses double allocation).
//   2. Pods of the pod list are drawn with replacement (a seeded uniform draw is also a shuffled
//      order) until the arrived GPU demand reaches `arrival` × cluster GPU capacity.
//   3. Each arrival is placed by the policy, or skipped when no node can host it.
//   4. After each arrival the GPU allocation ratio, the fragmentation Σ_n F_n(M) and its ratio to
//      the free GPU milli are known; a curve point is taken at each whole percent of arrived
//      demand (the state right after the first arrival that reaches it).
//
// Policies and their code paths:
//   random, dotprod, clustering, packing, bestfit, fgd — the paper's scorers in
//     sched/fragmentation.h (RandomPlacement, DotProductPlacement, GpuClusteringPlacement,
//     GpuPackingPlacement, BestFitPlacement, BestFgdPlacement) over node views of the ledger;
//     the highest score wins, ties by PackingTies.
//   fgd-pack, fgd-plus — Abacus's own scorers on the same path (FgdPackPlacement,
//     BestFgdPlusPlacement against ScarcityWeighted M and TypicalHostPerGpu of the pod list).
//   binpack, spread, sched-fgd, sched-fgd-plus — Abacus's scorers through sched::Placer::Place on
//     the same ClusterState, flavors tried in the queue's order as sched::Schedule does.
// Speed: a score depends only on the node's free state and the task's shape, so each
// (shape, node) score is cached and recomputed only for nodes that changed since.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sched/fragmentation.h"
#include "sched/types.h"
#include "sim/openb_trace.h"

namespace abacus::sim {

enum class PackingPolicy : uint8_t {
  kRandom,
  kDotProd,
  kClustering,
  kPacking,
  kBestFit,
  kFgd,
  kFgdPack,   // Abacus's own: FGD's score, ties to the node left fullest (frag::FgdPackPlacement)
  kFgdPlus,   // Abacus's own: FGD plus host stranding and model scarcity (frag::BestFgdPlusPlacement)
  kBinpack,   // sched::Placer, ScoringPolicy::kBinpack
  kSpread,    // sched::Placer, ScoringPolicy::kSpread
  kSchedFgd,  // sched::Placer, ScoringPolicy::kFgd (per flavor, as the server scores)
  kSchedFgdPlus,  // sched::Placer, ScoringPolicy::kFgdPlus
};

// Returns "random", "dotprod", "clustering", "packing", "bestfit", "fgd", "fgd-pack", "fgd-plus",
// "binpack", "spread", "sched-fgd" or "sched-fgd-plus".
std::string_view PackingPolicyName(PackingPolicy p);
// Parses one policy name (also accepts the paper's spellings "dotproduct", "gpuclustering",
// "gpupacking", "bestfit", "fgd").
Result<PackingPolicy> ParsePackingPolicy(std::string_view text);
// Parses "fgd,bestfit,…" (no duplicates, at least one).
Result<std::vector<PackingPolicy>> ParsePackingPolicies(std::string_view text);
// The six policies of the paper's comparison, in its order.
std::vector<PackingPolicy> PaperPolicies();

// Parses "42", "42-51" or "1,5,9" into seeds (at most 1000).
Result<std::vector<uint64_t>> ParseSeeds(std::string_view text);

// One point of a curve: the state right after arrived demand first reached `arrived_pct`% of
// the cluster's GPU capacity.
struct PackingPoint {
  int32_t arrived_pct = 0;
  double gpu_alloc_pct = 0;   // allocated GPU milli / total GPU milli × 100
  double frag_pct = 0;        // Σ_n F_n(M) / total GPU milli × 100
  double frag_ratio_pct = 0;  // Σ_n F_n(M) / free GPU milli × 100 (0 when nothing is free)
  bool operator==(const PackingPoint&) const = default;
};

// How the arrival sequence is drawn from the pod list.
enum class PackingSampling : uint8_t {
  // Uniform draws with replacement (every arrival is an independent pick).
  kReplacement,
  // The authors' simulator (workload tuning with shuffled pods): every pod of the list once, in a
  // seeded shuffled order; if the list's demand runs out before the target, uniform draws with
  // replacement follow. A list with more demand than the target is cut where it is reached.
  kTraceOnce,
};

// Which of the best-scoring nodes a policy takes.
enum class PackingTies : uint8_t {
  kAuto,           // kShuffledNodes for fgd, fgd-pack and fgd-plus (the reference's FGD), kLowestIndex otherwise
  kLowestIndex,    // the first in node-file order
  kRandom,         // a uniformly random one, drawn anew at each arrival (Kubernetes' selectHost)
  kShuffledNodes,  // the first in a seeded random order of the nodes fixed for the run (the authors'
                   // simulator renames nodes with a seeded permutation prefix before scheduling)
};

struct PackingOptions {
  double arrival = 1.3;
  PackingSampling sampling = PackingSampling::kTraceOnce;  // stop when arrived GPU demand reaches arrival × capacity
  // The target workload M of the fragmentation measure: the most popular task shapes of the
  // pod list covering at least this share of pods, renormalised. 1 = every shape (the paper's
  // definition); the authors' simulator used 0.95, which drops the rare multi-GPU shapes.
  double typical_coverage = 0.95;
  // Ties between the best nodes.
  PackingTies ties = PackingTies::kAuto;
  // fgd scores nodes by frag::FgdNodeScore (the reference's integer ⌊100 · sigmoid(−Δ/1000)⌋, so
  // nearby deltas tie and `ties` decides); true = by the exact delta −Δ instead.
  bool fgd_exact_scores = false;
  // fgd's score steps (frag::FgdNodeScore levels): 100 is the reference; fewer steps tie more
  // nodes (docs/simulator.md §4, "coarser scores").
  int fgd_levels = 100;
};

// What one seed's run produced.
struct PackingRun {
  std::vector<PackingPoint> curve;  // arrived_pct = 1 .. ⌊arrival × 100⌋
  int64_t arrivals = 0;
  int64_t placed = 0;
  int64_t skipped = 0;               // arrivals no node could host
  int64_t score_evaluations = 0;     // per-node scorer calls (cache misses)
  double seconds = 0;
};

// A cluster and pod list prepared once for many runs.
class PackingExperiment {
 public:
  // Validates and indexes the inputs: node models become GPU flavors, pods become task shapes.
  // InvalidArgument when the cluster has no GPU, a node has more than 64 GPUs, or no pod asks
  // for a GPU (the arrival target would never be reached).
  static Result<PackingExperiment> Create(std::vector<TraceNode> nodes, const std::vector<TracePod>& pods,
                                          const PackingOptions& options = {});

  // Runs one seed under one policy.
  PackingRun Run(PackingPolicy policy, uint64_t seed) const;

  // Where each placed pod went, in arrival order, for tests: (pod index, node index or -1).
  struct Decision {
    int32_t pod = 0;
    int32_t node = -1;
    uint64_t gpu_mask = 0;
  };
  PackingRun Run(PackingPolicy policy, uint64_t seed, std::vector<Decision>* decisions) const;
  // Runs the given arrival sequence (pod indexes) instead of sampling.
  PackingRun RunSequence(PackingPolicy policy, const std::vector<int32_t>& pods,
                         std::vector<Decision>* decisions) const;

  int64_t total_gpu_milli() const { return total_gpu_milli_; }
  const std::vector<sched::NodeInfo>& nodes() const { return nodes_; }
  const std::vector<sched::frag::WeightedShape>& distribution() const { return distribution_; }
  const std::vector<sched::frag::WeightedShape>& plus_distribution() const { return plus_distribution_; }
  const sched::frag::HostPerGpu& host_per_gpu() const { return host_per_gpu_; }
  const std::vector<sched::frag::TaskShape>& pod_shapes() const { return pod_shapes_; }
  const std::vector<FlavorId>& flavor_order() const { return flavor_order_; }
  const PackingOptions& options() const { return options_; }
  // The sched::WorkloadInfo a pod becomes on the Placer path (one task group, one replica).
  sched::WorkloadInfo PodWorkload(int32_t pod) const;

 private:
  friend class PackingEngine;
  PackingExperiment() = default;

  PackingOptions options_;
  std::vector<sched::NodeInfo> nodes_;
  std::vector<uint16_t> node_model_;               // dense model id per node
  std::vector<FlavorId> model_flavor_;             // model id → flavor
  std::vector<FlavorId> flavor_order_;             // flavors in the order the queue lists them
  std::vector<sched::frag::TaskShape> pod_shapes_; // per pod
  std::vector<int32_t> pod_shape_id_;              // per pod: index into shapes_
  std::vector<sched::frag::TaskShape> shapes_;     // distinct shapes
  std::vector<std::vector<FlavorId>> shape_flavors_;  // accepted flavors per distinct shape
  std::vector<sched::frag::WeightedShape> distribution_;
  std::vector<sched::frag::WeightedShape> plus_distribution_;  // fgd-plus: distribution_, ScarcityWeighted
  sched::frag::HostPerGpu host_per_gpu_;                        // fgd-plus: of every pod of the list
  sched::frag::ResourceScale scale_;
  int64_t total_gpu_milli_ = 0;
};

// Average of several runs, point by point.
struct PackingSummary {
  PackingPolicy policy = PackingPolicy::kFgd;
  std::vector<PackingPoint> curve;
  double seconds = 0;        // total wall time of the runs
  double arrivals = 0;       // mean arrivals per run
  double skipped = 0;        // mean skipped arrivals per run
  int32_t seeds = 0;
};

// Averages `runs` point by point (they must have the same number of points).
PackingSummary AveragePackingRuns(PackingPolicy policy, const std::vector<PackingRun>& runs);

// Returns the point of `curve` at `pct`, or nullopt.
std::optional<PackingPoint> PointAt(const std::vector<PackingPoint>& curve, int32_t pct);

}  // namespace abacus::sim
