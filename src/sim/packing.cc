#include "sim/packing.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <tuple>

#include "common/check.h"
#include "sched/cluster_state.h"
#include "sched/place.h"

namespace abacus::sim {
namespace {

namespace frag = sched::frag;

constexpr int64_t kMiB = 1024 * 1024;
// Model id of a node without GPUs: never selectable by a task's model mask.
constexpr uint16_t kNoModel = frag::kMaxGpuModels;
// Mask bit for "a model this cluster does not have": no node carries it.
constexpr int kAbsentModelBit = frag::kMaxGpuModels - 1;
// Scores closer than this are equal (sums of the same terms in different orders).
constexpr double kScoreEpsilon = 1e-9;

struct PolicyName {
  PackingPolicy policy;
  std::string_view name;
};
constexpr PolicyName kPolicyNames[] = {
    {PackingPolicy::kRandom, "random"},       {PackingPolicy::kDotProd, "dotprod"},
    {PackingPolicy::kClustering, "clustering"}, {PackingPolicy::kPacking, "packing"},
    {PackingPolicy::kBestFit, "bestfit"},     {PackingPolicy::kFgd, "fgd"},
    {PackingPolicy::kFgdPack, "fgd-pack"},   {PackingPolicy::kFgdPlus, "fgd-plus"},
    {PackingPolicy::kBinpack, "binpack"},     {PackingPolicy::kSpread, "spread"},
    {PackingPolicy::kSchedFgd, "sched-fgd"},   {PackingPolicy::kSchedFgdPlus, "sched-fgd-plus"},
};

bool UsesPlacer(PackingPolicy p) {
  return p == PackingPolicy::kBinpack || p == PackingPolicy::kSpread || p == PackingPolicy::kSchedFgd ||
         p == PackingPolicy::kSchedFgdPlus;
}

// A uniform integer in [0, n) from `g`, by rejection (portable, unlike std distributions).
uint64_t UniformBelow(std::mt19937_64& g, uint64_t n) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t r;
  do {
    r = g();
  } while (r >= limit);
  return r % n;
}

Result<uint64_t> ParseU64(std::string_view s) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) {
    return InvalidArgument("expected a non-negative integer, got '" + std::string(s) + "'");
  }
  return v;
}

}  // namespace

std::string_view PackingPolicyName(PackingPolicy p) {
  for (const auto& e : kPolicyNames) {
    if (e.policy == p) return e.name;
  }
  return "fgd";
}

Result<PackingPolicy> ParsePackingPolicy(std::string_view text) {
  for (const auto& e : kPolicyNames) {
    if (e.name == text) return e.policy;
  }
  if (text == "dotproduct") return PackingPolicy::kDotProd;
  if (text == "gpuclustering") return PackingPolicy::kClustering;
  if (text == "gpupacking") return PackingPolicy::kPacking;
  return InvalidArgument("unknown policy '" + std::string(text) +
                         "' (expected random, dotprod, clustering, packing, bestfit, fgd, fgd-pack, fgd-plus, binpack, spread, "
                         "sched-fgd or sched-fgd-plus)");
}

Result<std::vector<PackingPolicy>> ParsePackingPolicies(std::string_view text) {
  std::vector<PackingPolicy> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = text.substr(start, comma - start);
    auto p = ParsePackingPolicy(item);
    if (!p.ok()) return p.status();
    if (std::find(out.begin(), out.end(), *p) != out.end()) {
      return InvalidArgument("policy '" + std::string(item) + "' listed twice");
    }
    out.push_back(*p);
    start = comma + 1;
  }
  return out;
}

std::vector<PackingPolicy> PaperPolicies() {
  return {PackingPolicy::kRandom,  PackingPolicy::kDotProd, PackingPolicy::kClustering,
          PackingPolicy::kPacking, PackingPolicy::kBestFit, PackingPolicy::kFgd};
}

Result<std::vector<uint64_t>> ParseSeeds(std::string_view text) {
  std::vector<uint64_t> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = text.substr(start, comma - start);
    size_t dash = item.find('-');
    if (dash == std::string_view::npos) {
      auto v = ParseU64(item);
      if (!v.ok()) return v.status().WithContext("seeds");
      out.push_back(*v);
    } else {
      auto lo = ParseU64(item.substr(0, dash));
      auto hi = ParseU64(item.substr(dash + 1));
      if (!lo.ok()) return lo.status().WithContext("seeds");
      if (!hi.ok()) return hi.status().WithContext("seeds");
      if (*hi < *lo) return InvalidArgument("seeds: range " + std::string(item) + " is empty");
      if (*hi - *lo >= 1000) return InvalidArgument("seeds: at most 1000 seeds");
      for (uint64_t s = *lo; s <= *hi; ++s) out.push_back(s);
    }
    if (out.size() > 1000) return InvalidArgument("seeds: at most 1000 seeds");
    start = comma + 1;
  }
  return out;
}

// ------------------------------------------------------------------ experiment

Result<PackingExperiment> PackingExperiment::Create(std::vector<TraceNode> nodes, const std::vector<TracePod>& pods,
                                                    const PackingOptions& options) {
  if (!(options.arrival > 0) || options.arrival > 100) {
    return InvalidArgument("arrival must be in (0, 100], got " + std::to_string(options.arrival));
  }
  if (!(options.typical_coverage > 0) || options.typical_coverage > 1) {
    return InvalidArgument("typical coverage must be in (0, 1]");
  }
  PackingExperiment x;
  x.options_ = options;
  std::map<std::string, uint16_t> model_ids;
  for (const TraceNode& tn : nodes) {
    sched::NodeInfo n;
    n.name = tn.name;
    n.cpu_milli = tn.cpu_milli;
    n.memory_bytes = tn.memory_mib * kMiB;
    uint16_t model = kNoModel;
    if (tn.gpus > 0) {
      if (tn.gpus > frag::kMaxGpusPerNode) {
        return InvalidArgument("node " + tn.name + " has " + std::to_string(tn.gpus) + " GPUs (at most 64)");
      }
      auto it = model_ids.find(tn.model);
      if (it == model_ids.end()) {
        if (model_ids.size() >= static_cast<size_t>(kAbsentModelBit)) {
          return InvalidArgument("more than 63 GPU models");
        }
        auto flavor = OpenbModelFlavor(tn.model);
        if (!flavor.ok()) return flavor.status().WithContext("node " + tn.name);
        it = model_ids.emplace(tn.model, static_cast<uint16_t>(model_ids.size())).first;
        x.model_flavor_.push_back(flavor->Intern());
        x.flavor_order_.push_back(x.model_flavor_.back());
      }
      model = it->second;
      for (int32_t d = 0; d < tn.gpus; ++d) {
        sched::DeviceInfo dev;
        dev.index = d;
        dev.flavor = x.model_flavor_[model];
        n.devices.push_back(dev);
      }
      x.total_gpu_milli_ += int64_t{tn.gpus} * frag::kMilliPerGpu;
    }
    x.scale_.cpu_milli = std::max(x.scale_.cpu_milli, tn.cpu_milli);
    x.scale_.memory_mib = std::max(x.scale_.memory_mib, tn.memory_mib);
    x.scale_.gpu_milli = std::max(x.scale_.gpu_milli, int64_t{tn.gpus} * frag::kMilliPerGpu);
    x.node_model_.push_back(model);
    x.nodes_.push_back(std::move(n));
  }
  if (x.total_gpu_milli_ == 0) return InvalidArgument("the node list has no GPU");

  // Pods → task shapes; distinct shapes get dense ids.
  std::map<std::tuple<int64_t, int64_t, int32_t, int32_t, uint64_t>, int32_t> shape_ids;
  int64_t pod_gpu_milli = 0;
  for (const TracePod& p : pods) {
    frag::TaskShape s;
    s.cpu_milli = p.cpu_milli;
    s.memory_mib = p.memory_mib;
    s.num_gpu = p.gpu_milli > 0 ? p.num_gpu : 0;
    s.gpu_milli = p.num_gpu > 0 ? p.gpu_milli : 0;
    std::vector<FlavorId> accepted;
    if (!s.cpu_only()) {
      for (const std::string& m : p.gpu_spec) {
        auto it = model_ids.find(m);
        if (it != model_ids.end()) s.allowed_models |= uint64_t{1} << it->second;
      }
      if (!p.gpu_spec.empty() && s.allowed_models == 0) s.allowed_models = uint64_t{1} << kAbsentModelBit;
      for (FlavorId f : x.flavor_order_) {
        uint16_t model = static_cast<uint16_t>(
            std::find(x.model_flavor_.begin(), x.model_flavor_.end(), f) - x.model_flavor_.begin());
        if (s.allowed_models == 0 || ((s.allowed_models >> model) & 1u)) accepted.push_back(f);
      }
    }
    pod_gpu_milli += s.total_gpu_milli();
    auto key = std::tuple(s.cpu_milli, s.memory_mib, s.num_gpu, s.gpu_milli, s.allowed_models);
    auto [it, inserted] = shape_ids.emplace(key, static_cast<int32_t>(x.shapes_.size()));
    if (inserted) {
      x.shapes_.push_back(s);
      x.shape_flavors_.push_back(std::move(accepted));
    }
    x.pod_shapes_.push_back(s);
    x.pod_shape_id_.push_back(it->second);
  }
  if (pod_gpu_milli == 0) return InvalidArgument("no pod asks for a GPU: the arrival target can never be reached");

  // The target workload M: shapes as the paper's simulator keys them (CPU, GPU count and milli,
  // allowed models; host memory is not part of a typical pod), most popular first, cut where
  // they cover `typical_coverage` of the pods, renormalised.
  std::vector<frag::TaskShape> keyed = x.pod_shapes_;
  for (auto& s : keyed) s.memory_mib = 0;
  std::vector<frag::WeightedShape> all = frag::BuildDistribution(keyed);
  double covered = 0;
  size_t keep = 0;
  while (keep < all.size() && covered < options.typical_coverage - 1e-12) covered += all[keep++].popularity;
  all.resize(keep);
  for (auto& w : all) w.popularity /= covered;
  x.distribution_ = std::move(all);

  // fgd-plus: M weighted by model scarcity, and the host resources of the list's GPU pods.
  std::vector<int64_t> gpu_milli_by_model(x.model_flavor_.size(), 0);
  for (size_t i = 0; i < x.nodes_.size(); ++i) {
    if (x.node_model_[i] < gpu_milli_by_model.size()) {
      gpu_milli_by_model[x.node_model_[i]] += static_cast<int64_t>(x.nodes_[i].devices.size()) * frag::kMilliPerGpu;
    }
  }
  x.plus_distribution_ = frag::ScarcityWeighted(x.distribution_, gpu_milli_by_model);
  x.host_per_gpu_ = frag::TypicalHostPerGpu(frag::BuildDistribution(x.pod_shapes_));
  return x;
}

sched::WorkloadInfo PackingExperiment::PodWorkload(int32_t pod) const {
  const int32_t id = pod_shape_id_[pod];
  const frag::TaskShape& s = shapes_[id];
  sched::WorkloadInfo w;
  w.id = "pod-" + std::to_string(pod);
  w.name = w.id;
  w.queue = 0;
  sched::TaskGroupRequest g;
  g.name = "pod";
  g.task.cpu_milli = s.cpu_milli;
  g.task.memory_bytes = s.memory_mib * kMiB;
  if (!s.cpu_only()) {
    g.task.flavors = shape_flavors_[id];
    g.task.flavor_pattern = "gpu/*";
    g.task.device_count = s.num_gpu;
    g.task.share_milli = s.gpu_milli < frag::kMilliPerGpu ? s.gpu_milli : 0;
  }
  w.groups.push_back(std::move(g));
  return w;
}

// ------------------------------------------------------------------ engine

// One run's state: the ledger (sched::ClusterState), a mirror of each node's free state laid
// out for the frag:: views, and the per-(shape, node) score cache.
class PackingEngine {
 public:
  PackingEngine(const PackingExperiment& x, PackingPolicy policy, uint64_t seed)
      : x_(x), policy_(policy), state_(x.nodes_), policy_rng_(seed ^ 0x9e3779b97f4a7c15ULL) {
    ties_ = x.options_.ties;
    if (ties_ == PackingTies::kAuto) {
      const bool fgd_family =
          policy == PackingPolicy::kFgd || policy == PackingPolicy::kFgdPack || policy == PackingPolicy::kFgdPlus;
      ties_ = fgd_family ? PackingTies::kShuffledNodes : PackingTies::kLowestIndex;
    }
    if (ties_ == PackingTies::kShuffledNodes) {
      // rank_[n]: node n's place in a seeded random order (Fisher–Yates on a separate stream).
      std::mt19937_64 g(seed ^ 0x5bd1e9955bd1e995ULL);
      std::vector<int32_t> order(x.nodes_.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
      for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[UniformBelow(g, i)]);
      rank_.resize(order.size());
      for (size_t i = 0; i < order.size(); ++i) rank_[order[i]] = static_cast<int32_t>(i);
    }
    fgd_exact_ = x.options_.fgd_exact_scores;
    fgd_levels_ = x.options_.fgd_levels;
    const size_t n = x.nodes_.size();
    cpu_free_.resize(n);
    mem_free_mib_.resize(n);
    gpu_base_.resize(n + 1);
    version_.assign(n, 1);
    classes_.assign(n, 0);
    node_frag_.assign(n, 0);
    for (size_t i = 0; i < n; ++i) gpu_base_[i + 1] = gpu_base_[i] + static_cast<int32_t>(x.nodes_[i].devices.size());
    gpu_free_.assign(gpu_base_[n], 0);
    for (size_t i = 0; i < n; ++i) Refresh(static_cast<sched::NodeIndex>(i), /*bump=*/false);
    if (UsesPlacer(policy)) {
      sched::ScoringPolicy sp = policy == PackingPolicy::kBinpack         ? sched::ScoringPolicy::kBinpack
                                : policy == PackingPolicy::kSpread        ? sched::ScoringPolicy::kSpread
                                : policy == PackingPolicy::kSchedFgdPlus ? sched::ScoringPolicy::kFgdPlus
                                                                          : sched::ScoringPolicy::kFgd;
      placer_.emplace(state_, std::vector<int32_t>(n, 0), std::vector<std::vector<uint8_t>>{{1}}, sp);
      // The server's FGD scores one flavor's devices at a time with model id 0: the model
      // constraint is already the flavor, so the distribution drops it.
      std::vector<frag::WeightedShape> d = x.distribution_;
      for (auto& w : d) w.shape.allowed_models = 0;
      placer_->SetFgdDistribution(std::move(d));
      reserved_by_.assign(n, sched::kNone);
      workloads_.resize(x.shapes_.size());
    } else {
      cache_.resize(x.shapes_.size() * n);
    }
  }

  // Places pod `pod`; returns the node (or -1 when skipped) and the GPUs taken.
  sched::NodeIndex Arrive(int32_t pod, uint64_t* gpu_mask) {
    const int32_t sid = x_.pod_shape_id_[pod];
    *gpu_mask = 0;
    sched::NodeIndex n = UsesPlacer(policy_) ? PlaceWithPlacer(pod, sid, gpu_mask) : PlaceWithScorer(sid, gpu_mask);
    if (n == sched::kNone) return n;
    const frag::TaskShape& s = x_.shapes_[sid];
    allocated_milli_ += s.total_gpu_milli();
    if (!s.cpu_only()) classes_[n] |= uint64_t{1} << frag::ShapeClass(s);
    Refresh(n, /*bump=*/true);
    return n;
  }

  PackingPoint Measure(int32_t pct) const {
    double frag_milli = 0;
    for (double f : node_frag_) frag_milli += f;
    const double total = static_cast<double>(x_.total_gpu_milli_);
    const double free = total - static_cast<double>(allocated_milli_);
    PackingPoint p;
    p.arrived_pct = pct;
    p.gpu_alloc_pct = 100.0 * static_cast<double>(allocated_milli_) / total;
    p.frag_pct = 100.0 * frag_milli / total;
    p.frag_ratio_pct = free > 0 ? 100.0 * frag_milli / free : 0.0;
    return p;
  }

  int64_t evaluations() const { return evaluations_; }

 private:
  struct Entry {
    uint32_t version = 0;  // node version the entry was computed at; 0 = never
    bool feasible = false;
    double score = 0;
    uint64_t mask = 0;
  };

  frag::GpuNodeFree View(sched::NodeIndex n) const {
    frag::GpuNodeFree v;
    v.cpu_milli_free = cpu_free_[n];
    v.memory_mib_free = mem_free_mib_[n];
    v.gpu_free_milli = std::span<const int32_t>(gpu_free_.data() + gpu_base_[n], gpu_base_[n + 1] - gpu_base_[n]);
    v.model_id = x_.node_model_[n];
    return v;
  }

  // Copies node n's free state from the ledger and recomputes its F_n(M).
  void Refresh(sched::NodeIndex n, bool bump) {
    cpu_free_[n] = state_.cpu_free(n);
    mem_free_mib_[n] = state_.memory_free(n) / kMiB;
    for (int32_t d = 0; d < gpu_base_[n + 1] - gpu_base_[n]; ++d) gpu_free_[gpu_base_[n] + d] = state_.device_free_milli(n, d);
    if (bump) ++version_[n];
    node_frag_[n] = frag::ExpectedFragmentMilli(View(n), x_.distribution_);
  }

  void Evaluate(sched::NodeIndex n, const frag::TaskShape& s, Entry* e) {
    ++evaluations_;
    const frag::GpuNodeFree v = View(n);
    e->version = version_[n];
    switch (policy_) {
      case PackingPolicy::kFgd:
      case PackingPolicy::kFgdPlus: {
        frag::FgdChoice c = policy_ == PackingPolicy::kFgd
                                ? frag::BestFgdPlacement(v, s, x_.distribution_)
                                : frag::BestFgdPlusPlacement(v, s, x_.plus_distribution_, x_.host_per_gpu_);
        e->feasible = c.feasible;
        // The reference scores a node by the integer FgdNodeScore; fgd_exact_ compares deltas.
        e->score = fgd_exact_ ? -c.delta : static_cast<double>(frag::FgdNodeScore(c.delta, fgd_levels_));
        e->mask = c.gpu_mask;
        return;
      }
      case PackingPolicy::kRandom:
        e->feasible = frag::Fits(v, s);
        e->score = 0;
        e->mask = 0;
        return;
      default: break;
    }
    frag::Placement p;
    switch (policy_) {
      case PackingPolicy::kBestFit: p = frag::BestFitPlacement(v, s, x_.scale_); break;
      case PackingPolicy::kFgdPack: p = frag::FgdPackPlacement(v, s, x_.distribution_, x_.scale_); break;
      case PackingPolicy::kDotProd: p = frag::DotProductPlacement(v, s, x_.scale_); break;
      case PackingPolicy::kPacking: p = frag::GpuPackingPlacement(v, s); break;
      case PackingPolicy::kClustering: p = frag::GpuClusteringPlacement(v, s, classes_[n]); break;
      default: ABACUS_CHECK(false, "not a frag:: scorer policy");
    }
    e->feasible = p.feasible;
    e->score = p.score;
    e->mask = p.gpu_mask;
  }

  // The paper's scorers: the best score over every node (ties to the lower index); Random takes
  // a uniform feasible node, which is what RandomPlacement's i.i.d. uniform scores amount to.
  sched::NodeIndex PlaceWithScorer(int32_t sid, uint64_t* gpu_mask) {
    const frag::TaskShape& s = x_.shapes_[sid];
    const sched::NodeIndex nodes = static_cast<sched::NodeIndex>(x_.nodes_.size());
    Entry* row = cache_.data() + static_cast<size_t>(sid) * static_cast<size_t>(nodes);
    sched::NodeIndex best = sched::kNone;
    double best_score = 0;
    int64_t feasible = 0;
    int64_t ties = 0;
    for (sched::NodeIndex n = 0; n < nodes; ++n) {
      Entry& e = row[n];
      if (e.version != version_[n]) Evaluate(n, s, &e);
      if (!e.feasible) continue;
      ++feasible;
      if (best == sched::kNone || e.score > best_score + kScoreEpsilon) {
        best = n;
        best_score = e.score;
        ties = 1;
      } else if (e.score >= best_score - kScoreEpsilon) {
        if (ties_ == PackingTies::kRandom) {
          // Kubernetes' selectHost: a uniformly random node among the best (reservoir sampling).
          if (UniformBelow(policy_rng_, static_cast<uint64_t>(++ties)) == 0) best = n;
        } else if (ties_ == PackingTies::kShuffledNodes && rank_[n] < rank_[best]) {
          best = n;
        }
      }
    }
    if (best == sched::kNone) return sched::kNone;
    if (policy_ == PackingPolicy::kRandom) {
      uint64_t k = UniformBelow(policy_rng_, static_cast<uint64_t>(feasible));
      for (sched::NodeIndex n = 0; n < nodes; ++n) {
        if (row[n].feasible && k-- == 0) {
          best = n;
          break;
        }
      }
      row[best].mask = frag::RandomPlacement(View(best), s, policy_rng_()).gpu_mask;
    }
    *gpu_mask = row[best].mask;
    sched::TaskPlacement p;
    p.node = best;
    p.cpu_milli = s.cpu_milli;
    p.memory_bytes = s.memory_mib * kMiB;
    if (!s.cpu_only()) {
      for (int i = 0; i < frag::kMaxGpusPerNode; ++i) {
        if ((*gpu_mask >> i) & 1u) p.devices.push_back({i, s.gpu_milli, 0});
      }
      ABACUS_CHECK(static_cast<int32_t>(p.devices.size()) == s.num_gpu, "scorer chose the wrong number of GPUs");
    }
    state_.Allocate(p);
    return best;
  }

  // Abacus's scorers: sched::Placer::Place, the accepted flavors tried in the queue's order and
  // the first that places wins (sched::Schedule's attempt for a queue without quota limits).
  sched::NodeIndex PlaceWithPlacer(int32_t pod, int32_t sid, uint64_t* gpu_mask) {
    sched::WorkloadInfo& w = workloads_[sid];
    if (w.groups.empty()) w = x_.PodWorkload(pod);
    std::vector<FlavorId> options = x_.shapes_[sid].cpu_only() ? std::vector<FlavorId>{kCpuFlavorId} : x_.shape_flavors_[sid];
    for (FlavorId f : options) {
      placements_.clear();
      if (!placer_->Place(w, 0, {f}, reserved_by_, &placements_, nullptr)) continue;
      const sched::TaskPlacement& p = placements_.front();
      for (const auto& d : p.devices) *gpu_mask |= uint64_t{1} << d.device;
      return p.node;
    }
    return sched::kNone;
  }

  const PackingExperiment& x_;
  PackingPolicy policy_;
  sched::ClusterState state_;
  std::optional<sched::Placer> placer_;
  std::vector<sched::WorkloadIndex> reserved_by_;
  std::vector<sched::WorkloadInfo> workloads_;  // per shape, built on first use
  std::vector<sched::TaskPlacement> placements_;
  std::mt19937_64 policy_rng_;
  std::vector<int64_t> cpu_free_, mem_free_mib_;
  std::vector<int32_t> gpu_base_, gpu_free_;
  std::vector<uint32_t> version_;
  std::vector<uint64_t> classes_;
  std::vector<double> node_frag_;
  std::vector<Entry> cache_;  // shape-major: cache_[shape × nodes + node]
  int64_t allocated_milli_ = 0;
  int64_t evaluations_ = 0;
  PackingTies ties_ = PackingTies::kLowestIndex;
  std::vector<int32_t> rank_;  // kShuffledNodes: node → place in the run's node order
  bool fgd_exact_ = false;
  int fgd_levels_ = 100;
};

namespace {

// Drives `engine` over arrivals from `next_pod` until the last curve point is taken.
template <typename NextPod>
PackingRun Drive(const PackingExperiment& x, PackingEngine& engine, NextPod next_pod,
                 std::vector<PackingExperiment::Decision>* decisions) {
  auto t0 = std::chrono::steady_clock::now();
  PackingRun run;
  const int32_t last_pct = static_cast<int32_t>(std::floor(x.options().arrival * 100.0 + 1e-9));
  const int64_t total = x.total_gpu_milli();
  int64_t arrived = 0;
  int32_t next_pct = 1;
  run.curve.reserve(static_cast<size_t>(std::max(0, last_pct)));
  while (next_pct <= last_pct) {
    std::optional<int32_t> pod = next_pod();
    if (!pod) break;
    uint64_t mask = 0;
    sched::NodeIndex n = engine.Arrive(*pod, &mask);
    ++run.arrivals;
    if (n == sched::kNone) {
      ++run.skipped;
    } else {
      ++run.placed;
    }
    if (decisions) decisions->push_back({*pod, n, mask});
    arrived += x.pod_shapes()[*pod].total_gpu_milli();
    while (next_pct <= last_pct && arrived * 100 >= int64_t{next_pct} * total) {
      run.curve.push_back(engine.Measure(next_pct));
      ++next_pct;
    }
  }
  run.score_evaluations = engine.evaluations();
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return run;
}

}  // namespace

PackingRun PackingExperiment::Run(PackingPolicy policy, uint64_t seed) const { return Run(policy, seed, nullptr); }

PackingRun PackingExperiment::Run(PackingPolicy policy, uint64_t seed, std::vector<Decision>* decisions) const {
  auto t0 = std::chrono::steady_clock::now();
  PackingEngine engine(*this, policy, seed);
  std::mt19937_64 rng(seed);
  const uint64_t n = pod_shapes_.size();
  // kTraceOnce: a Fisher–Yates shuffle drawn lazily (position i is fixed when it is reached), then
  // draws with replacement once every pod has arrived.
  std::vector<int32_t> order;
  if (options_.sampling == PackingSampling::kTraceOnce) {
    order.resize(n);
    for (uint64_t i = 0; i < n; ++i) order[i] = static_cast<int32_t>(i);
  }
  uint64_t next = 0;
  PackingRun run = Drive(
      *this, engine,
      [&]() -> std::optional<int32_t> {
        if (next < order.size()) {
          const uint64_t j = next + UniformBelow(rng, n - next);
          std::swap(order[next], order[j]);
          return order[next++];
        }
        return static_cast<int32_t>(UniformBelow(rng, n));
      },
      decisions);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return run;
}

PackingRun PackingExperiment::RunSequence(PackingPolicy policy, const std::vector<int32_t>& pods,
                                          std::vector<Decision>* decisions) const {
  PackingEngine engine(*this, policy, 0);
  size_t i = 0;
  return Drive(*this, engine, [&]() -> std::optional<int32_t> {
    if (i >= pods.size()) return std::nullopt;
    return pods[i++];
  }, decisions);
}

PackingSummary AveragePackingRuns(PackingPolicy policy, const std::vector<PackingRun>& runs) {
  PackingSummary s;
  s.policy = policy;
  s.seeds = static_cast<int32_t>(runs.size());
  if (runs.empty()) return s;
  size_t points = runs.front().curve.size();
  for (const auto& r : runs) points = std::min(points, r.curve.size());
  s.curve.resize(points);
  const double k = static_cast<double>(runs.size());
  for (size_t i = 0; i < points; ++i) {
    PackingPoint& p = s.curve[i];
    p.arrived_pct = runs.front().curve[i].arrived_pct;
    for (const auto& r : runs) {
      p.gpu_alloc_pct += r.curve[i].gpu_alloc_pct / k;
      p.frag_pct += r.curve[i].frag_pct / k;
      p.frag_ratio_pct += r.curve[i].frag_ratio_pct / k;
    }
  }
  for (const auto& r : runs) {
    s.seconds += r.seconds;
    s.arrivals += static_cast<double>(r.arrivals) / k;
    s.skipped += static_cast<double>(r.skipped) / k;
  }
  return s;
}

std::optional<PackingPoint> PointAt(const std::vector<PackingPoint>& curve, int32_t pct) {
  for (const auto& p : curve) {
    if (p.arrived_pct == pct) return p;
  }
  return std::nullopt;
}

}  // namespace abacus::sim
