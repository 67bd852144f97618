// GPU fragmentation after Weng et al., "Beware of Fragmentation: Scheduling GPU-Sharing Workloads
// with Fragmentation Gradient Descent", USENIX ATC 2023 (the "FGD paper"), and the baseline
// node scorers that paper compares against.
//
// Everything here is pure and allocation-free: a node is described by a view over its free GPU
// milli, a task by a small value type, and a workload by a span of weighted shapes. The scheduler's
// FGD scorer and the simulator's metrics call the same functions, so a simulated run and a live
// scheduler measure fragmentation the same way.
//
// Units: CPU in millicores, host memory in MiB (the openb trace's unit; callers with bytes divide
// by 1 MiB first, rounding demands up and free amounts down), GPU in milli-GPU: 1000 is one whole
// GPU. Nodes may have at most kMaxGpusPerNode GPUs (chosen GPUs come back as a 64-bit mask).
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace abacus::sched::frag {

inline constexpr int32_t kMilliPerGpu = 1000;
inline constexpr int kMaxGpusPerNode = 64;
inline constexpr int kMaxGpuModels = 64;
// Memory value that never limits a fit: pass it as memory_mib_free to ignore host memory.
inline constexpr int64_t kUnlimitedMemory = std::numeric_limits<int64_t>::max();

// What is still free on one node.
struct GpuNodeFree {
  int64_t cpu_milli_free = 0;
  int64_t memory_mib_free = kUnlimitedMemory;
  std::span<const int32_t> gpu_free_milli;  // one entry per GPU, each 0..1000; at most 64 GPUs
  uint16_t model_id = 0;                     // dense id of the node's GPU model (< 64 to be selectable)
};

// The resource shape of one task (one pod, one replica).
struct TaskShape {
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int32_t num_gpu = 0;    // 0 = CPU-only
  int32_t gpu_milli = 0;  // per GPU: 1..999 = a share of one GPU (num_gpu must be 1), 1000 = whole GPUs
  uint64_t allowed_models = 0;  // bit i set = GPU model id i allowed; 0 = any model

  // Returns true when the task asks for no GPU (num_gpu or gpu_milli is 0).
  bool cpu_only() const { return num_gpu <= 0 || gpu_milli <= 0; }
  // Returns the total GPU milli the task takes (num_gpu × gpu_milli, 0 for CPU-only tasks).
  int64_t total_gpu_milli() const { return cpu_only() ? 0 : int64_t{num_gpu} * gpu_milli; }
  bool operator==(const TaskShape&) const = default;
};

// One task shape of the target workload and how often it occurs. Popularities of a distribution
// should sum to 1; floating point is fine here: it weighs a score, it is not a quantity.
struct WeightedShape {
  TaskShape shape;
  double popularity = 0;
};
using Distribution = std::span<const WeightedShape>;

// Returns the distinct shapes of `tasks` with popularity = their share of the tasks, most popular
// first (ties in order of first appearance). Allocates; build it once per workload, not per call.
std::vector<WeightedShape> BuildDistribution(std::span<const TaskShape> tasks);

// Returns true when `task` fits on `node` now: CPU and memory suffice, the node's model is
// allowed, and num_gpu of its GPUs each have at least gpu_milli free.
bool Fits(const GpuNodeFree& node, const TaskShape& task);

// Returns the free GPU milli summed over the node's GPUs.
int64_t FreeGpuMilli(const GpuNodeFree& node);

// Returns F_n(m), the paper's fragment measure (§3, "fragmentation measure"): the free GPU milli
// on `node` that `task` cannot use.
//   - CPU-only task: it uses no GPU, so every free GPU milli is fragment to it.
//   - the task cannot run here (CPU or memory short, model not allowed, fewer than num_gpu GPUs
//     with gpu_milli free): every free GPU milli is fragment.
//   - otherwise: the free milli of the GPUs with less than gpu_milli free (for whole-GPU tasks,
//     the partially used GPUs).
int64_t FragmentMilli(const GpuNodeFree& node, const TaskShape& task);

// Returns F_n(M) = Σ popularity × F_n(m) over the shapes of `workload` (§3): the expected
// fragment of the node as seen by a task drawn from the workload.
double ExpectedFragmentMilli(const GpuNodeFree& node, Distribution workload);

// The GPUs a placement takes on one node (bit i = GPU i) and how it scores.
struct FgdChoice {
  bool feasible = false;
  double delta = 0;      // E[F] after placing the task minus E[F] before; lower is better
  uint64_t gpu_mask = 0;  // GPUs the task takes; 0 for CPU-only tasks
};

// Returns the FGD placement of `task` on `node` (§4, "fragmentation gradient descent"): among the
// ways to put the task on this node, the one that increases the node's expected fragmentation
// the least. A GPU share tries each GPU with enough free milli (ties go to the GPU with less free
// milli, then the lower index); whole-GPU tasks take the lowest-numbered fully free GPUs (all
// choices leave the same free multiset); CPU-only tasks take no GPU. feasible=false when the task
// does not fit. The scheduler picks the node with the smallest delta.
FgdChoice BestFgdPlacement(const GpuNodeFree& node, const TaskShape& task, Distribution workload);

// Returns FGD's node score as the authors' simulator computes it (a Kubernetes score plugin):
// ⌊100 · sigmoid(−delta/1000)⌋, an integer 0..100, higher is better. Deltas within a few tens of
// milli-GPU share a score, and the tie rule of the caller decides among them; on openb this
// quantisation is worth +0.6–0.8 points of allocation over comparing exact deltas (docs/simulator.md §4).
// `levels` (default 100, the reference) is the number of score steps: fewer levels make more
// nodes tie, so the caller's tie rule (a node order fixed for the run) packs more.
int FgdNodeScore(double delta, int levels = 100);

// ---- Beyond the paper. ----

// FGD-Pack (Abacus's own scorer): FGD's integer score (FgdNodeScore of BestFgdPlacement's delta),
// and among nodes with the same score the one the task leaves with the least resources, BestFit's
// measure ½·cpu_left/scale.cpu + ½·gpu_left/scale.gpu. score = FgdNodeScore + (1 − that)/2, so the
// fractional part only orders nodes whose FGD scores tie. Same GPUs as BestFgdPlacement.
struct ResourceScale;
struct Placement;
Placement FgdPackPlacement(const GpuNodeFree& node, const TaskShape& task, Distribution workload,
                           const ResourceScale& scale);

// FGD-Plus (Abacus's own scorer, docs/simulator.md §4 "Beyond the paper"): FGD with two
// additions that the paper's measure leaves out.
//  1. Host stranding: free GPUs whose node no longer has the CPU or memory a GPU task brings
//     along are fragment too. StrandedGpuMilli measures them against the typical task's host
//     demand per milli-GPU (TypicalHostPerGpu), in the same unit as F_n(M).
//  2. Model scarcity: a shape that may run only on some GPU models weighs, on each node, in
//     proportion to its popularity per unit of the capacity it may use (ScarcityWeighted), so
//     the few nodes a constrained shape can use are kept for it.

// CPU and host memory the typical GPU task brings per milli-GPU.
struct HostPerGpu {
  double cpu_milli = 0;   // CPU millicores per GPU milli; 0 = CPU never strands a GPU
  double memory_mib = 0;  // host memory MiB per GPU milli; 0 = memory never strands a GPU
};

// Returns Σ p·cpu / Σ p·gpu and Σ p·memory / Σ p·gpu over the GPU shapes of `workload`
// (CPU-only shapes are left out); zeros when no shape asks for a GPU.
HostPerGpu TypicalHostPerGpu(Distribution workload);

// Returns the free GPU milli of `node` that its free CPU and memory cannot feed at `need`:
// max(0, free GPU − min(cpu_free / need.cpu_milli, memory_free / need.memory_mib)); a zero need
// or kUnlimitedMemory leaves that resource out.
double StrandedGpuMilli(const GpuNodeFree& node, const HostPerGpu& need);

// Returns `workload` with each GPU shape that names models scaled by C / C_m, where C is the
// cluster's GPU milli (the sum of `gpu_milli_by_model`) and C_m that of the models the shape
// allows (index = model id); shapes without a model constraint, CPU-only shapes and shapes no
// model of the cluster serves (C_m = 0) keep their popularity. Not renormalised.
std::vector<WeightedShape> ScarcityWeighted(Distribution workload, std::span<const int64_t> gpu_milli_by_model);

// Returns FGD-Plus's placement of `task` on `node`: BestFgdPlacement against `weighted` (a
// ScarcityWeighted distribution), with delta increased by the change in StrandedGpuMilli at
// `need`. Same GPUs as BestFgdPlacement; score nodes with FgdNodeScore(delta) as FGD does.
FgdChoice BestFgdPlusPlacement(const GpuNodeFree& node, const TaskShape& task, Distribution weighted,
                               const HostPerGpu& need);

// ---- Baselines of the paper's evaluation (§6, "baselines"). ----

// A baseline's verdict for one task on one node: higher score is better, comparable across the
// nodes of one cluster for one task.
struct Placement {
  bool feasible = false;
  double score = 0;
  uint64_t gpu_mask = 0;  // GPUs the task takes; 0 for CPU-only tasks
};

// Normalisers: the capacity of the largest node of the cluster in each dimension, so that scores
// of different nodes compare. Zero dimensions are ignored.
struct ResourceScale {
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int64_t gpu_milli = 0;
};

// Returns the GPUs a packing placement takes: for a share, the feasible GPU with the least free
// milli (lowest index on ties); for whole GPUs, the lowest-numbered fully free ones; 0 when the
// task does not fit or takes no GPU. BestFit, DotProduct, GpuClustering and Random use it.
uint64_t TightestGpus(const GpuNodeFree& node, const TaskShape& task);

// BestFit: prefers the node that the task leaves with the least resources; score =
// −(½·(cpu_free − cpu)/scale.cpu + ½·(gpu_free − gpu)/scale.gpu), CPU and GPU only as in the paper.
Placement BestFitPlacement(const GpuNodeFree& node, const TaskShape& task, const ResourceScale& scale);

// DotProd (Tetris-style alignment as the paper uses it): prefers the node whose free vector has
// the smallest dot product with the task's demand; vectors (cpu, memory, gpu) normalised by
// `scale`, score = −(d·f)/dimensions.
Placement DotProductPlacement(const GpuNodeFree& node, const TaskShape& task, const ResourceScale& scale);

// GpuPacking: prefers, in order, (1) a share that fits on an already partly used GPU (least free
// milli left on it first), (2) fully free GPUs on a node that already runs GPU tasks (fewest
// fully free GPUs taken first), (3) an idle node (fewest GPUs first). CPU-only tasks score 0.
Placement GpuPackingPlacement(const GpuNodeFree& node, const TaskShape& task);

// Shape classes for GpuClustering: 0 = CPU-only, 1..10 = a share in 100-milli bands
// (1 = 1..100, …, 10 = 901..999), 11.. = whole GPUs, 10 + num_gpu (capped at 63).
int ShapeClass(const TaskShape& task);

// GpuClustering: prefers nodes whose GPUs already run tasks of the task's shape class; tiers from
// best: only that class (3), that class among others (2), no GPU task yet (1), other classes only
// (0); inside a tier, the node with less free GPU milli. `classes_on_node` has bit c set when a
// task of class c uses a GPU of the node. CPU-only tasks score 0.
Placement GpuClusteringPlacement(const GpuNodeFree& node, const TaskShape& task, uint64_t classes_on_node);

// Random: a feasible node scores a uniform value in [0, 1) taken from `random_bits` (the caller's
// RNG draw for this node), so the best score is a uniformly random feasible node.
Placement RandomPlacement(const GpuNodeFree& node, const TaskShape& task, uint64_t random_bits);

}  // namespace abacus::sched::frag
