#include "sched/fragmentation.h"

#include <algorithm>
#include <array>
#include <bitset>
#include <cmath>
#include <map>
#include <tuple>

#include "common/check.h"

namespace abacus::sched::frag {
namespace {

// Tolerance when two expected fragments are compared: they are sums of the same integers weighted
// by the same popularities, added in different orders.
constexpr double kDeltaEpsilon = 1e-9;

bool ModelAllowed(const GpuNodeFree& node, const TaskShape& task) {
  if (task.allowed_models == 0) return true;
  if (node.model_id >= kMaxGpuModels) return false;
  return ((task.allowed_models >> node.model_id) & 1u) != 0;
}

bool HostFits(const GpuNodeFree& node, const TaskShape& task) {
  return node.cpu_milli_free >= task.cpu_milli && node.memory_mib_free >= task.memory_mib;
}

int CountGpusWithAtLeast(const GpuNodeFree& node, int32_t milli) {
  int n = 0;
  for (int32_t free : node.gpu_free_milli) n += free >= milli ? 1 : 0;
  return n;
}

// A node with a private, writable copy of the free GPU list: the state after a trial placement.
struct TrialNode {
  explicit TrialNode(const GpuNodeFree& base, const TaskShape& task) : node(base) {
    const size_t n = base.gpu_free_milli.size();
    ABACUS_CHECK(n <= static_cast<size_t>(kMaxGpusPerNode), "node has more than 64 GPUs");
    std::copy(base.gpu_free_milli.begin(), base.gpu_free_milli.end(), free.begin());
    node.gpu_free_milli = std::span<const int32_t>(free.data(), n);
    node.cpu_milli_free -= task.cpu_milli;
    if (node.memory_mib_free != kUnlimitedMemory) node.memory_mib_free -= task.memory_mib;
  }
  TrialNode(const TrialNode&) = delete;
  TrialNode& operator=(const TrialNode&) = delete;

  std::array<int32_t, kMaxGpusPerNode> free{};
  GpuNodeFree node;
};

}  // namespace

std::vector<WeightedShape> BuildDistribution(std::span<const TaskShape> tasks) {
  struct Entry {
    TaskShape shape;
    size_t count = 0;
  };
  std::vector<Entry> entries;
  auto key = [](const TaskShape& t) {
    return std::tuple(t.cpu_milli, t.memory_mib, t.num_gpu, t.gpu_milli, t.allowed_models);
  };
  std::map<decltype(key(TaskShape{})), size_t> index;
  for (size_t i = 0; i < tasks.size(); ++i) {
    auto [it, inserted] = index.emplace(key(tasks[i]), entries.size());
    if (inserted) entries.push_back({tasks[i], 0});
    ++entries[it->second].count;
  }
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.count > b.count; });
  std::vector<WeightedShape> out;
  out.reserve(entries.size());
  for (const Entry& e : entries) {
    out.push_back({e.shape, static_cast<double>(e.count) / static_cast<double>(tasks.size())});
  }
  return out;
}

bool Fits(const GpuNodeFree& node, const TaskShape& task) {
  if (!HostFits(node, task)) return false;
  if (task.cpu_only()) return true;
  return ModelAllowed(node, task) && CountGpusWithAtLeast(node, task.gpu_milli) >= task.num_gpu;
}

int64_t FreeGpuMilli(const GpuNodeFree& node) {
  int64_t total = 0;
  for (int32_t free : node.gpu_free_milli) total += free;
  return total;
}

int64_t FragmentMilli(const GpuNodeFree& node, const TaskShape& task) {
  // One pass: the total free milli, and how much of it sits on GPUs too small for the task.
  int64_t total = 0;
  int64_t on_small_gpus = 0;
  int usable_gpus = 0;
  for (int32_t free : node.gpu_free_milli) {
    total += free;
    if (free >= task.gpu_milli) {
      ++usable_gpus;
    } else {
      on_small_gpus += free;
    }
  }
  if (task.cpu_only()) return total;  // the task cannot use any GPU
  if (!HostFits(node, task) || !ModelAllowed(node, task) || usable_gpus < task.num_gpu) return total;
  return on_small_gpus;
}

double ExpectedFragmentMilli(const GpuNodeFree& node, Distribution workload) {
  double sum = 0;
  for (const WeightedShape& w : workload) {
    sum += w.popularity * static_cast<double>(FragmentMilli(node, w.shape));
  }
  return sum;
}

uint64_t TightestGpus(const GpuNodeFree& node, const TaskShape& task) {
  if (task.cpu_only() || !Fits(node, task)) return 0;
  // Take num_gpu GPUs with enough free milli, least free first, lower index on ties. Repeated
  // scans keep this allocation-free; num_gpu and the GPU count are both small.
  uint64_t mask = 0;
  const int n = static_cast<int>(node.gpu_free_milli.size());
  for (int taken = 0; taken < task.num_gpu; ++taken) {
    int best = -1;
    for (int i = 0; i < n; ++i) {
      const int32_t free = node.gpu_free_milli[i];
      if (free < task.gpu_milli || (mask >> i) & 1u) continue;
      if (best < 0 || free < node.gpu_free_milli[best]) best = i;
    }
    ABACUS_DCHECK(best >= 0, "Fits() promised enough GPUs");
    mask |= uint64_t{1} << best;
  }
  return mask;
}

FgdChoice BestFgdPlacement(const GpuNodeFree& node, const TaskShape& task, Distribution workload) {
  // 1) A task that does not fit has no placement here.
  if (!Fits(node, task)) return {};
  const double before = ExpectedFragmentMilli(node, workload);
  TrialNode trial(node, task);

  // 2) CPU-only tasks change only CPU and memory.
  if (task.cpu_only()) {
    return {true, ExpectedFragmentMilli(trial.node, workload) - before, 0};
  }

  // 3) A share of one GPU: try every GPU it fits on, once per distinct free amount (GPUs with the
  //    same free milli lead to the same node state), and keep the smallest increase.
  if (task.num_gpu == 1 && task.gpu_milli < kMilliPerGpu) {
    std::bitset<kMilliPerGpu + 1> tried;
    FgdChoice best;
    int32_t best_free = 0;
    const int n = static_cast<int>(node.gpu_free_milli.size());
    for (int i = 0; i < n; ++i) {
      const int32_t free = node.gpu_free_milli[i];
      if (free < task.gpu_milli) continue;
      const size_t key = static_cast<size_t>(std::clamp(free, 0, kMilliPerGpu));
      if (tried.test(key)) continue;
      tried.set(key);
      trial.free[i] = free - task.gpu_milli;
      const double delta = ExpectedFragmentMilli(trial.node, workload) - before;
      trial.free[i] = free;
      const bool better = !best.feasible || delta < best.delta - kDeltaEpsilon ||
                          (std::abs(delta - best.delta) <= kDeltaEpsilon && free < best_free);
      if (better) {
        best = {true, delta, uint64_t{1} << i};
        best_free = free;
      }
    }
    return best;
  }

  // 4) Whole GPUs (or, beyond the paper, several shares): any choice among equally free GPUs
  //    leaves the same free multiset, so take the tightest ones.
  const uint64_t mask = TightestGpus(node, task);
  for (size_t i = 0; i < node.gpu_free_milli.size(); ++i) {
    if ((mask >> i) & 1u) trial.free[i] -= task.gpu_milli;
  }
  return {true, ExpectedFragmentMilli(trial.node, workload) - before, mask};
}

int FgdNodeScore(double delta, int levels) {
  const double score = static_cast<double>(levels) / (1.0 + std::exp(delta / 1000.0));
  return static_cast<int>(std::floor(score));
}

Placement FgdPackPlacement(const GpuNodeFree& node, const TaskShape& task, Distribution workload,
                           const ResourceScale& scale) {
  const FgdChoice c = BestFgdPlacement(node, task, workload);
  if (!c.feasible) return {};
  double left = 0;
  if (scale.cpu_milli > 0) {
    left += 0.5 * static_cast<double>(node.cpu_milli_free - task.cpu_milli) / static_cast<double>(scale.cpu_milli);
  }
  if (scale.gpu_milli > 0) {
    left += 0.5 * static_cast<double>(FreeGpuMilli(node) - task.total_gpu_milli()) / static_cast<double>(scale.gpu_milli);
  }
  return {true, FgdNodeScore(c.delta) + 0.5 * (1.0 - std::clamp(left, 0.0, 1.0)), c.gpu_mask};
}

HostPerGpu TypicalHostPerGpu(Distribution workload) {
  double gpu = 0, cpu = 0, memory = 0;
  for (const WeightedShape& w : workload) {
    if (w.shape.cpu_only()) continue;
    gpu += w.popularity * static_cast<double>(w.shape.total_gpu_milli());
    cpu += w.popularity * static_cast<double>(w.shape.cpu_milli);
    memory += w.popularity * static_cast<double>(w.shape.memory_mib);
  }
  if (gpu <= 0) return {};
  return {cpu / gpu, memory / gpu};
}

double StrandedGpuMilli(const GpuNodeFree& node, const HostPerGpu& need) {
  double fed = std::numeric_limits<double>::infinity();
  if (need.cpu_milli > 0) fed = static_cast<double>(std::max<int64_t>(node.cpu_milli_free, 0)) / need.cpu_milli;
  if (need.memory_mib > 0 && node.memory_mib_free != kUnlimitedMemory) {
    fed = std::min(fed, static_cast<double>(std::max<int64_t>(node.memory_mib_free, 0)) / need.memory_mib);
  }
  return std::max(0.0, static_cast<double>(FreeGpuMilli(node)) - fed);
}

std::vector<WeightedShape> ScarcityWeighted(Distribution workload, std::span<const int64_t> gpu_milli_by_model) {
  int64_t cluster = 0;
  for (int64_t c : gpu_milli_by_model) cluster += c;
  std::vector<WeightedShape> out(workload.begin(), workload.end());
  for (WeightedShape& w : out) {
    if (w.shape.cpu_only() || w.shape.allowed_models == 0) continue;
    int64_t usable = 0;
    for (size_t m = 0; m < gpu_milli_by_model.size() && m < static_cast<size_t>(kMaxGpuModels); ++m) {
      if ((w.shape.allowed_models >> m) & 1u) usable += gpu_milli_by_model[m];
    }
    if (usable > 0) w.popularity *= static_cast<double>(cluster) / static_cast<double>(usable);
  }
  return out;
}

FgdChoice BestFgdPlusPlacement(const GpuNodeFree& node, const TaskShape& task, Distribution weighted,
                               const HostPerGpu& need) {
  FgdChoice c = BestFgdPlacement(node, task, weighted);
  if (!c.feasible) return c;
  // Stranding depends on the node's totals only, not on which GPUs the task takes.
  TrialNode trial(node, task);
  const int32_t n = static_cast<int32_t>(node.gpu_free_milli.size());
  for (int32_t i = 0; i < n; ++i) {
    if ((c.gpu_mask >> i) & 1u) trial.free[i] -= task.gpu_milli;
  }
  c.delta += StrandedGpuMilli(trial.node, need) - StrandedGpuMilli(node, need);
  return c;
}

Placement BestFitPlacement(const GpuNodeFree& node, const TaskShape& task, const ResourceScale& scale) {
  if (!Fits(node, task)) return {};
  double left = 0;
  if (scale.cpu_milli > 0) {
    left += 0.5 * static_cast<double>(node.cpu_milli_free - task.cpu_milli) / static_cast<double>(scale.cpu_milli);
  }
  if (scale.gpu_milli > 0) {
    left += 0.5 * static_cast<double>(FreeGpuMilli(node) - task.total_gpu_milli()) /
            static_cast<double>(scale.gpu_milli);
  }
  return {true, -left, TightestGpus(node, task)};
}

Placement DotProductPlacement(const GpuNodeFree& node, const TaskShape& task, const ResourceScale& scale) {
  if (!Fits(node, task)) return {};
  double dot = 0;
  int dims = 0;
  auto add = [&](int64_t demand, int64_t free, int64_t norm) {
    if (norm <= 0) return;
    const double d = static_cast<double>(demand) / static_cast<double>(norm);
    const double f = static_cast<double>(free) / static_cast<double>(norm);
    dot += d * f;
    ++dims;
  };
  add(task.cpu_milli, node.cpu_milli_free, scale.cpu_milli);
  if (node.memory_mib_free != kUnlimitedMemory) add(task.memory_mib, node.memory_mib_free, scale.memory_mib);
  add(task.total_gpu_milli(), FreeGpuMilli(node), scale.gpu_milli);
  return {true, dims > 0 ? -dot / dims : 0.0, TightestGpus(node, task)};
}

Placement GpuPackingPlacement(const GpuNodeFree& node, const TaskShape& task) {
  if (!Fits(node, task)) return {};
  if (task.cpu_only()) return {true, 0.0, 0};
  const uint64_t mask = TightestGpus(node, task);
  int fully_free_taken = 0;
  int64_t left_on_taken = 0;
  bool node_in_use = false;
  const int n = static_cast<int>(node.gpu_free_milli.size());
  for (int i = 0; i < n; ++i) {
    const int32_t free = node.gpu_free_milli[i];
    if (free < kMilliPerGpu) node_in_use = true;
    if ((mask >> i) & 1u) {
      if (free >= kMilliPerGpu) ++fully_free_taken;
      left_on_taken += free - task.gpu_milli;
    }
  }
  double score;
  if (fully_free_taken == 0) {
    // (1) Only partly used GPUs: the less left on them afterwards, the better. Range (2, 3].
    score = 3.0 - static_cast<double>(left_on_taken) / (static_cast<double>(kMilliPerGpu) * task.num_gpu);
  } else if (node_in_use) {
    // (2) Fully free GPUs of a node already in use: fewer taken is better. Range (1, 1.5].
    score = 1.0 + 1.0 / (1.0 + fully_free_taken);
  } else {
    // (3) An idle node: a smaller node is better. Range (0, 0.5].
    score = 1.0 / (1.0 + n);
  }
  return {true, score, mask};
}

int ShapeClass(const TaskShape& task) {
  if (task.cpu_only()) return 0;
  if (task.gpu_milli < kMilliPerGpu) return 1 + (task.gpu_milli - 1) / 100;
  return std::min(10 + task.num_gpu, 63);
}

Placement GpuClusteringPlacement(const GpuNodeFree& node, const TaskShape& task, uint64_t classes_on_node) {
  if (!Fits(node, task)) return {};
  if (task.cpu_only()) return {true, 0.0, 0};
  const uint64_t classes = classes_on_node & ~uint64_t{1};  // CPU-only tasks use no GPU
  const uint64_t own = uint64_t{1} << ShapeClass(task);
  int tier;
  if ((classes & own) != 0) {
    tier = classes == own ? 3 : 2;
  } else {
    tier = classes == 0 ? 1 : 0;
  }
  const double capacity = static_cast<double>(kMilliPerGpu) * static_cast<double>(node.gpu_free_milli.size());
  const double used_fraction = 1.0 - static_cast<double>(FreeGpuMilli(node)) / capacity;  // < 1: the task fits
  return {true, tier + used_fraction, TightestGpus(node, task)};
}

Placement RandomPlacement(const GpuNodeFree& node, const TaskShape& task, uint64_t random_bits) {
  if (!Fits(node, task)) return {};
  const double uniform = static_cast<double>(random_bits >> 11) * 0x1.0p-53;
  return {true, uniform, TightestGpus(node, task)};
}

}  // namespace abacus::sched::frag
