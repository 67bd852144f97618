#include "sched/fragmentation.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace abacus::sched::frag {
namespace {

// The running example: GPUs {1000, 1000, 300, 0}, 10 cores free, memory not limiting.
class FragmentationTest : public ::testing::Test {
 protected:
  GpuNodeFree Node(const std::vector<int32_t>& gpus, int64_t cpu = 10000, int64_t mem = kUnlimitedMemory,
                   uint16_t model = 0) {
    gpus_ = gpus;
    return GpuNodeFree{cpu, mem, gpus_, model};
  }
  static TaskShape Share(int32_t milli, int64_t cpu = 1000) { return TaskShape{cpu, 0, 1, milli, 0}; }
  static TaskShape Whole(int32_t n, int64_t cpu = 1000) { return TaskShape{cpu, 0, n, kMilliPerGpu, 0}; }
  static TaskShape CpuOnly(int64_t cpu) { return TaskShape{cpu, 0, 0, 0, 0}; }

  std::vector<int32_t> gpus_;
};

TEST_F(FragmentationTest, FragmentOfEachShapeOnTheExampleNode) {
  const GpuNodeFree node = Node({1000, 1000, 300, 0});
  EXPECT_EQ(FreeGpuMilli(node), 2300);
  // The 300 left on GPU 2 is too small for a 500 share and for whole GPUs.
  EXPECT_EQ(FragmentMilli(node, Share(500)), 300);
  EXPECT_EQ(FragmentMilli(node, Whole(1)), 300);
  EXPECT_EQ(FragmentMilli(node, Whole(2)), 300);
  // A 200 share can use every GPU with free milli; the empty GPU holds no fragment.
  EXPECT_EQ(FragmentMilli(node, Share(200)), 0);
  // Three whole GPUs do not fit: everything free is fragment.
  EXPECT_EQ(FragmentMilli(node, Whole(3)), 2300);
  // A CPU-only task can use no GPU at all.
  EXPECT_EQ(FragmentMilli(node, CpuOnly(1000)), 2300);
}

TEST_F(FragmentationTest, HostShortageOrModelMakesAllFreeGpuFragment) {
  const GpuNodeFree node = Node({1000, 1000, 300, 0}, /*cpu=*/10000, /*mem=*/4096, /*model=*/2);
  EXPECT_EQ(FragmentMilli(node, Share(500, /*cpu=*/20000)), 2300);
  TaskShape big_memory = Share(500);
  big_memory.memory_mib = 8192;
  EXPECT_EQ(FragmentMilli(node, big_memory), 2300);
  TaskShape other_model = Share(500);
  other_model.allowed_models = uint64_t{1} << 1;
  EXPECT_EQ(FragmentMilli(node, other_model), 2300);
  EXPECT_FALSE(Fits(node, other_model));
  TaskShape this_model = Share(500);
  this_model.allowed_models = (uint64_t{1} << 1) | (uint64_t{1} << 2);
  EXPECT_EQ(FragmentMilli(node, this_model), 300);
  EXPECT_TRUE(Fits(node, this_model));
}

TEST_F(FragmentationTest, NodeWithoutGpusHasNoFragment) {
  const GpuNodeFree node = Node({});
  EXPECT_EQ(FragmentMilli(node, Share(500)), 0);
  EXPECT_EQ(FragmentMilli(node, CpuOnly(100)), 0);
  EXPECT_TRUE(Fits(node, CpuOnly(100)));
  EXPECT_FALSE(Fits(node, Whole(1)));
}

TEST_F(FragmentationTest, ExpectedFragmentWeighsShapesByPopularity) {
  const GpuNodeFree node = Node({1000, 1000, 300, 0});
  const std::vector<WeightedShape> workload = {{Share(500), 0.5}, {Whole(1), 0.3}, {Whole(2), 0.2}};
  EXPECT_DOUBLE_EQ(ExpectedFragmentMilli(node, workload), 300.0);
  const std::vector<WeightedShape> with_cpu = {{Share(500), 0.5}, {CpuOnly(8000), 0.5}};
  EXPECT_DOUBLE_EQ(ExpectedFragmentMilli(node, with_cpu), 0.5 * 300 + 0.5 * 2300);
}

TEST_F(FragmentationTest, DistributionCountsDistinctShapes) {
  const std::vector<TaskShape> tasks = {Share(500), Whole(1), Share(500), Whole(2), Share(500), Whole(1)};
  const std::vector<WeightedShape> d = BuildDistribution(tasks);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].shape, Share(500));
  EXPECT_DOUBLE_EQ(d[0].popularity, 0.5);
  EXPECT_EQ(d[1].shape, Whole(1));
  EXPECT_DOUBLE_EQ(d[1].popularity, 2.0 / 6);
  EXPECT_EQ(d[2].shape, Whole(2));
  EXPECT_DOUBLE_EQ(d[2].popularity, 1.0 / 6);
  EXPECT_TRUE(BuildDistribution({}).empty());
}

TEST_F(FragmentationTest, FgdPlacesEachShapeOfTheExample) {
  const GpuNodeFree node = Node({1000, 1000, 300, 0});
  const std::vector<WeightedShape> workload = {{Share(500), 0.5}, {Whole(1), 0.3}, {Whole(2), 0.2}};

  // Share 500: only a full GPU fits; {500,1000,300,0} gives F = 300, 800, 1800 → E = 750.
  FgdChoice share = BestFgdPlacement(node, Share(500), workload);
  ASSERT_TRUE(share.feasible);
  EXPECT_EQ(share.gpu_mask, 0b0001u);
  EXPECT_DOUBLE_EQ(share.delta, 450.0);

  // Share 300 fits GPU 2 exactly: {1000,1000,0,0} has no fragment left (delta −300); on GPU 0 it
  // would give {700,1000,300,0}, E = 850 (delta +550).
  FgdChoice exact = BestFgdPlacement(node, Share(300), workload);
  ASSERT_TRUE(exact.feasible);
  EXPECT_EQ(exact.gpu_mask, 0b0100u);
  EXPECT_DOUBLE_EQ(exact.delta, -300.0);

  // Whole 1: {0,1000,300,0} gives F = 300, 300, 1300 → E = 500.
  FgdChoice one = BestFgdPlacement(node, Whole(1), workload);
  ASSERT_TRUE(one.feasible);
  EXPECT_EQ(one.gpu_mask, 0b0001u);
  EXPECT_DOUBLE_EQ(one.delta, 200.0);

  // Whole 2: {0,0,300,0} gives F = 300 for every shape → E = 300.
  FgdChoice two = BestFgdPlacement(node, Whole(2), workload);
  ASSERT_TRUE(two.feasible);
  EXPECT_EQ(two.gpu_mask, 0b0011u);
  EXPECT_DOUBLE_EQ(two.delta, 0.0);

  EXPECT_FALSE(BestFgdPlacement(node, Whole(3), workload).feasible);
}

TEST_F(FragmentationTest, FgdCountsCpuThatATaskLeavesBehind) {
  const GpuNodeFree node = Node({1000, 1000, 300, 0}, /*cpu=*/10000);
  const std::vector<WeightedShape> workload = {{Share(500, 1000), 0.5}, {CpuOnly(8000), 0.5}};
  // A CPU-only task that leaves 6 cores: nothing changes for either shape.
  FgdChoice cpu = BestFgdPlacement(node, CpuOnly(4000), workload);
  ASSERT_TRUE(cpu.feasible);
  EXPECT_EQ(cpu.gpu_mask, 0u);
  EXPECT_DOUBLE_EQ(cpu.delta, 0.0);
  // A share that leaves 0.5 cores: the 500 share no longer fits, all 1800 free milli is fragment.
  FgdChoice hungry = BestFgdPlacement(node, Share(500, 9500), workload);
  ASSERT_TRUE(hungry.feasible);
  EXPECT_DOUBLE_EQ(hungry.delta, 1800.0 - 1300.0);
  EXPECT_FALSE(BestFgdPlacement(node, CpuOnly(20000), workload).feasible);
}

TEST_F(FragmentationTest, FgdBreaksTiesTowardsTheTighterGpu) {
  const GpuNodeFree node = Node({1000, 600, 600});
  const std::vector<WeightedShape> workload = {{Share(500), 1.0}};
  FgdChoice choice = BestFgdPlacement(node, Share(100), workload);
  ASSERT_TRUE(choice.feasible);
  EXPECT_DOUBLE_EQ(choice.delta, 0.0);
  EXPECT_EQ(choice.gpu_mask, 0b010u);  // 600 beats 1000; GPU 1 beats GPU 2
}

TEST_F(FragmentationTest, FgdShareMatchesBruteForceOnRandomNodes) {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int> gpu_count(1, 8);
  std::uniform_int_distribution<int> milli(0, 10);
  const std::vector<WeightedShape> workload = {
      {Share(250), 0.3}, {Share(500), 0.2}, {Share(700), 0.1}, {Whole(1), 0.25}, {Whole(2), 0.1}, {CpuOnly(2000), 0.05}};
  for (int round = 0; round < 200; ++round) {
    std::vector<int32_t> gpus(gpu_count(rng));
    for (auto& g : gpus) g = milli(rng) * 100;
    const GpuNodeFree node = Node(gpus);
    for (int32_t request : {100, 300, 500, 800}) {
      const TaskShape task = Share(request);
      double best = 0;
      bool any = false;
      for (size_t i = 0; i < gpus.size(); ++i) {
        if (gpus[i] < request) continue;
        std::vector<int32_t> after = gpus;
        after[i] -= request;
        GpuNodeFree trial{node.cpu_milli_free - task.cpu_milli, kUnlimitedMemory, after, 0};
        const double delta = ExpectedFragmentMilli(trial, workload) - ExpectedFragmentMilli(node, workload);
        if (!any || delta < best) best = delta;
        any = true;
      }
      const FgdChoice choice = BestFgdPlacement(node, task, workload);
      ASSERT_EQ(choice.feasible, any);
      if (any) {
        EXPECT_NEAR(choice.delta, best, 1e-6);
        EXPECT_EQ(__builtin_popcountll(choice.gpu_mask), 1);
      }
      for (const auto& w : workload) EXPECT_LE(FragmentMilli(node, w.shape), FreeGpuMilli(node));
    }
  }
}

TEST_F(FragmentationTest, TightestGpusPicksLeastFreeFirst) {
  const GpuNodeFree node = Node({1000, 1000, 300, 0});
  EXPECT_EQ(TightestGpus(node, Share(300)), 0b0100u);
  EXPECT_EQ(TightestGpus(node, Share(500)), 0b0001u);
  EXPECT_EQ(TightestGpus(node, Whole(2)), 0b0011u);
  EXPECT_EQ(TightestGpus(node, Whole(3)), 0u);
  EXPECT_EQ(TightestGpus(node, CpuOnly(1)), 0u);
}

TEST_F(FragmentationTest, BestFitPrefersTheFullerNode) {
  const ResourceScale scale{20000, 0, 4000};
  const GpuNodeFree node = Node({1000, 1000, 300, 0}, /*cpu=*/10000);
  // left = ½·9000/20000 + ½·1300/4000 = 0.3875
  Placement p = BestFitPlacement(node, Whole(1), scale);
  ASSERT_TRUE(p.feasible);
  EXPECT_DOUBLE_EQ(p.score, -0.3875);
  EXPECT_EQ(p.gpu_mask, 0b0001u);
  EXPECT_EQ(BestFitPlacement(node, Share(300), scale).gpu_mask, 0b0100u);

  std::vector<int32_t> idle = {1000, 1000, 1000, 1000};
  const GpuNodeFree empty{20000, kUnlimitedMemory, idle, 0};
  EXPECT_LT(BestFitPlacement(empty, Whole(1), scale).score, p.score);
  EXPECT_FALSE(BestFitPlacement(node, Whole(3), scale).feasible);
}

TEST_F(FragmentationTest, DotProductPrefersTheSmallestAlignment) {
  const ResourceScale scale{20000, 128000, 4000};
  // Memory unlimited: two dimensions. d = (0.05, 0.25), f = (0.5, 0.575): dot = 0.16875.
  Placement two_dims = DotProductPlacement(Node({1000, 1000, 300, 0}), Whole(1), scale);
  ASSERT_TRUE(two_dims.feasible);
  EXPECT_DOUBLE_EQ(two_dims.score, -0.16875 / 2);
  // With memory: + 0.25 · 0.5 = 0.125 → 0.29375 over three dimensions.
  TaskShape task = Whole(1);
  task.memory_mib = 32000;
  Placement three_dims = DotProductPlacement(Node({1000, 1000, 300, 0}, 10000, 64000), task, scale);
  ASSERT_TRUE(three_dims.feasible);
  EXPECT_DOUBLE_EQ(three_dims.score, -0.29375 / 3);
  EXPECT_EQ(three_dims.gpu_mask, 0b0001u);
}

TEST_F(FragmentationTest, GpuPackingOrdersSharedThenUsedThenIdle) {
  const GpuNodeFree used = Node({1000, 1000, 300, 0});
  Placement exact = GpuPackingPlacement(used, Share(300));
  EXPECT_DOUBLE_EQ(exact.score, 3.0);
  EXPECT_EQ(exact.gpu_mask, 0b0100u);
  EXPECT_DOUBLE_EQ(GpuPackingPlacement(used, Share(200)).score, 2.9);
  EXPECT_DOUBLE_EQ(GpuPackingPlacement(used, Whole(1)).score, 1.5);
  EXPECT_DOUBLE_EQ(GpuPackingPlacement(used, Whole(2)).score, 1.0 + 1.0 / 3);
  EXPECT_DOUBLE_EQ(GpuPackingPlacement(used, CpuOnly(100)).score, 0.0);
  EXPECT_FALSE(GpuPackingPlacement(used, Whole(3)).feasible);

  std::vector<int32_t> idle_gpus = {1000, 1000};
  const GpuNodeFree idle{10000, kUnlimitedMemory, idle_gpus, 0};
  Placement on_idle = GpuPackingPlacement(idle, Whole(1));
  EXPECT_DOUBLE_EQ(on_idle.score, 1.0 / 3);
  EXPECT_LT(on_idle.score, GpuPackingPlacement(used, Whole(1)).score);
  EXPECT_LT(GpuPackingPlacement(used, Whole(1)).score, GpuPackingPlacement(used, Share(200)).score);
}

TEST_F(FragmentationTest, ShapeClasses) {
  EXPECT_EQ(ShapeClass(CpuOnly(1)), 0);
  EXPECT_EQ(ShapeClass(Share(1)), 1);
  EXPECT_EQ(ShapeClass(Share(100)), 1);
  EXPECT_EQ(ShapeClass(Share(101)), 2);
  EXPECT_EQ(ShapeClass(Share(999)), 10);
  EXPECT_EQ(ShapeClass(Whole(1)), 11);
  EXPECT_EQ(ShapeClass(Whole(8)), 18);
  EXPECT_EQ(ShapeClass(Whole(60)), 63);
}

TEST_F(FragmentationTest, GpuClusteringTiers) {
  const GpuNodeFree node = Node({1000, 1000, 300, 0});  // 42.5% of its GPU milli in use
  const TaskShape task = Share(500);                    // class 5
  const uint64_t own = uint64_t{1} << 5;
  const uint64_t other = uint64_t{1} << 11;
  EXPECT_DOUBLE_EQ(GpuClusteringPlacement(node, task, own).score, 3.425);
  EXPECT_DOUBLE_EQ(GpuClusteringPlacement(node, task, own | 1).score, 3.425);  // CPU-only bit ignored
  EXPECT_DOUBLE_EQ(GpuClusteringPlacement(node, task, own | other).score, 2.425);
  EXPECT_DOUBLE_EQ(GpuClusteringPlacement(node, task, 0).score, 1.425);
  EXPECT_DOUBLE_EQ(GpuClusteringPlacement(node, task, other).score, 0.425);
  EXPECT_EQ(GpuClusteringPlacement(node, task, own).gpu_mask, 0b0001u);
  EXPECT_DOUBLE_EQ(GpuClusteringPlacement(node, CpuOnly(1), own).score, 0.0);
  EXPECT_FALSE(GpuClusteringPlacement(node, Whole(3), own).feasible);
}

TEST_F(FragmentationTest, RandomScoresFeasibleNodesUniformly) {
  const GpuNodeFree node = Node({1000, 1000, 300, 0});
  EXPECT_DOUBLE_EQ(RandomPlacement(node, Whole(1), 0).score, 0.0);
  Placement high = RandomPlacement(node, Whole(1), ~uint64_t{0});
  EXPECT_TRUE(high.feasible);
  EXPECT_LT(high.score, 1.0);
  EXPECT_GT(high.score, 0.99);
  EXPECT_FALSE(RandomPlacement(node, Whole(3), 7).feasible);
}

TEST_F(FragmentationTest, FgdNodeScoreIsTheReferencesIntegerSigmoid) {
  // ⌊100 / (1 + e^(Δ/1000))⌋: Δ = 0 → 50; Δ = −20 → ⌊50.49⌋ = 50 and Δ = −30 → ⌊50.74⌋ = 50, so
  // these three tie although the exact deltas differ (the caller's tie rule decides); Δ = −50 →
  // ⌊51.25⌋ = 51; Δ = +1 → ⌊49.97⌋ = 49; the extremes saturate at 0 and 100.
  EXPECT_EQ(FgdNodeScore(0), 50);
  EXPECT_EQ(FgdNodeScore(-20), 50);
  EXPECT_EQ(FgdNodeScore(-30), 50);
  EXPECT_EQ(FgdNodeScore(-50), 51);
  EXPECT_EQ(FgdNodeScore(1), 49);
  EXPECT_EQ(FgdNodeScore(-1e7), 100);
  EXPECT_EQ(FgdNodeScore(1e7), 0);
}

TEST_F(FragmentationTest, FewerFgdScoreLevelsTieMoreNodes) {
  // 30 levels: ⌊30 / (1 + e^(Δ/1000))⌋; Δ = 0 → 15, Δ = −50 → ⌊15.37⌋ = 15 (51 vs 50 at 100
  // levels), Δ = −100 → ⌊15.75⌋ = 15, Δ = −150 → ⌊16.12⌋ = 16.
  EXPECT_EQ(FgdNodeScore(0, 30), 15);
  EXPECT_EQ(FgdNodeScore(-50, 30), 15);
  EXPECT_EQ(FgdNodeScore(-100, 30), 15);
  EXPECT_EQ(FgdNodeScore(-150, 30), 16);
  EXPECT_EQ(FgdNodeScore(-1e7, 30), 30);
  EXPECT_EQ(FgdNodeScore(-50, 100), FgdNodeScore(-50));
}

TEST_F(FragmentationTest, FgdPackBreaksEqualFgdScoresTowardsTheFullerNode) {
  // Workload: whole GPUs only. A whole GPU taken from an idle node or from a half-used node
  // changes no fragment (Δ = 0, FGD score 50 on both), so FGD alone ties. FGD-Pack adds
  // (1 − BestFit's left-over)/2: with scale (cpu 10000, gpu 4000), the idle node {1000 ×4} keeps
  // ½·9000/10000 + ½·3000/4000 = 0.825 → 50.0875; the half-used {0, 0, 1000, 1000} keeps
  // ½·9000/10000 + ½·1000/4000 = 0.575 → 50.2125, and wins.
  const std::vector<WeightedShape> workload = {{Whole(1), 1.0}};
  const ResourceScale scale{10000, 0, 4000};
  std::vector<int32_t> idle = {1000, 1000, 1000, 1000};
  std::vector<int32_t> used = {0, 0, 1000, 1000};
  const GpuNodeFree a{10000, kUnlimitedMemory, idle, 0};
  const GpuNodeFree b{10000, kUnlimitedMemory, used, 0};
  EXPECT_EQ(FgdNodeScore(BestFgdPlacement(a, Whole(1), workload).delta), 50);
  EXPECT_EQ(FgdNodeScore(BestFgdPlacement(b, Whole(1), workload).delta), 50);
  const Placement pa = FgdPackPlacement(a, Whole(1), workload, scale);
  const Placement pb = FgdPackPlacement(b, Whole(1), workload, scale);
  EXPECT_DOUBLE_EQ(pa.score, 50.0875);
  EXPECT_DOUBLE_EQ(pb.score, 50.2125);
  EXPECT_EQ(pb.gpu_mask, 0b0100u);
  EXPECT_FALSE(FgdPackPlacement(b, Whole(3), workload, scale).feasible);
}


// ---- FGD-Plus ----

TEST_F(FragmentationTest, TypicalHostPerGpuWeighsGpuShapesByPopularity) {
  // 60 % of the tasks: one whole GPU with 8 cores and 32 GiB; 20 %: a 500 share with 2 cores
  // and 8 GiB; 20 %: CPU-only, which brings no GPU and is left out. Per GPU milli, CPU is
  // (0.6·8000 + 0.2·2000) / (0.6·1000 + 0.2·500), memory likewise.
  TaskShape whole = Whole(1, 8000);
  whole.memory_mib = 32768;
  TaskShape share = Share(500, 2000);
  share.memory_mib = 8192;
  const std::vector<WeightedShape> workload = {{whole, 0.6}, {share, 0.2}, {CpuOnly(64000), 0.2}};
  const HostPerGpu need = TypicalHostPerGpu(workload);
  EXPECT_DOUBLE_EQ(need.cpu_milli, (0.6 * 8000 + 0.2 * 2000) / (0.6 * 1000 + 0.2 * 500));
  EXPECT_DOUBLE_EQ(need.memory_mib, (0.6 * 32768 + 0.2 * 8192) / (0.6 * 1000 + 0.2 * 500));
  const std::vector<WeightedShape> cpu_only = {{CpuOnly(1000), 1.0}};
  EXPECT_EQ(TypicalHostPerGpu(cpu_only).cpu_milli, 0);
}

TEST_F(FragmentationTest, StrandedGpusAreTheOnesFreeCpuOrMemoryCannotFeed) {
  const HostPerGpu need{8.0, 32.768};  // 8 cores and 32 GiB (32768 MiB) per whole GPU
  // 3 GPUs free, 16 cores free: two GPUs can still be fed, one is stranded.
  EXPECT_DOUBLE_EQ(StrandedGpuMilli(Node({1000, 1000, 1000, 0}, 16000), need), 1000);
  // Enough CPU, but 48 GiB of memory feeds only 1.5 GPUs.
  EXPECT_NEAR(StrandedGpuMilli(Node({1000, 1000, 1000, 0}, 64000, 49152), need), 1500, 1e-6);
  // Enough of both: nothing stranded; no CPU left: everything free is stranded.
  EXPECT_DOUBLE_EQ(StrandedGpuMilli(Node({1000, 500}, 64000, 65536), need), 0);
  EXPECT_DOUBLE_EQ(StrandedGpuMilli(Node({1000, 500}, 0), need), 1500);
  // Unlimited memory and a zero need leave that resource out.
  EXPECT_DOUBLE_EQ(StrandedGpuMilli(Node({1000, 1000}, 8000), HostPerGpu{8.0, 0}), 1000);
  EXPECT_DOUBLE_EQ(StrandedGpuMilli(Node({1000, 1000}, 0), HostPerGpu{}), 0);
}

TEST_F(FragmentationTest, ScarcityWeightingScalesConstrainedShapesByTheCapacityTheyMayUse) {
  // Model 0 has 6000 milli, model 1 has 2000: a shape allowed only model 1 weighs 8000/2000 = 4×,
  // one allowed both models (all the capacity) and unconstrained shapes keep their popularity.
  const std::vector<int64_t> capacity = {6000, 2000};
  TaskShape only_1 = Whole(1);
  only_1.allowed_models = 0b10;
  TaskShape both = Share(300);
  both.allowed_models = 0b11;
  TaskShape absent = Whole(1);
  absent.allowed_models = uint64_t{1} << 5;  // a model no node has
  const std::vector<WeightedShape> workload = {
      {Whole(1), 0.4}, {only_1, 0.1}, {both, 0.2}, {CpuOnly(1000), 0.2}, {absent, 0.1}};
  const std::vector<WeightedShape> w = ScarcityWeighted(workload, capacity);
  ASSERT_EQ(w.size(), workload.size());
  EXPECT_DOUBLE_EQ(w[0].popularity, 0.4);
  EXPECT_DOUBLE_EQ(w[1].popularity, 0.4);
  EXPECT_DOUBLE_EQ(w[2].popularity, 0.2);
  EXPECT_DOUBLE_EQ(w[3].popularity, 0.2);
  EXPECT_DOUBLE_EQ(w[4].popularity, 0.1);
  EXPECT_EQ(w[1].shape, only_1);
}

TEST_F(FragmentationTest, FgdPlusKeepsCpuOffNodesWhoseGpusItWouldStrand) {
  // Typical tasks: one whole GPU with 4 cores. A 12-core CPU-only task on node A (GPUs all used,
  // 16 cores free) or on node B (two free GPUs, 16 cores free): it leaves 4 cores, enough for
  // the typical task on B, so FGD sees no fragment change on either node and ties. FGD-Plus sees
  // that 4 cores feed only one of B's two free GPUs: B's delta is +1000, A's 0.
  const std::vector<WeightedShape> workload = {{Whole(1, 4000), 1.0}};
  const HostPerGpu need = TypicalHostPerGpu(workload);
  std::vector<int32_t> used = {0, 0};
  std::vector<int32_t> idle = {1000, 1000};
  const GpuNodeFree a{16000, kUnlimitedMemory, used, 0};
  const GpuNodeFree b{16000, kUnlimitedMemory, idle, 0};
  EXPECT_DOUBLE_EQ(BestFgdPlacement(a, CpuOnly(12000), workload).delta, 0);
  EXPECT_DOUBLE_EQ(BestFgdPlacement(b, CpuOnly(12000), workload).delta, 0);
  const FgdChoice pa = BestFgdPlusPlacement(a, CpuOnly(12000), workload, need);
  const FgdChoice pb = BestFgdPlusPlacement(b, CpuOnly(12000), workload, need);
  EXPECT_TRUE(pa.feasible);
  EXPECT_DOUBLE_EQ(pa.delta, 0);
  EXPECT_DOUBLE_EQ(pb.delta, 1000);
  EXPECT_GT(FgdNodeScore(pa.delta), FgdNodeScore(pb.delta));
  EXPECT_FALSE(BestFgdPlusPlacement(a, CpuOnly(20000), workload, need).feasible);
}

TEST_F(FragmentationTest, FgdPlusSendsUnconstrainedTasksAwayFromScarceModels) {
  // Cluster: model 0 with 8000 milli, model 1 with 2000. M: 0.3 of the tasks need model 0, 0.2
  // need model 1, 0.5 take any. A whole GPU of any model, on a node of model 0 {1000, 1000} or of
  // model 1 {1000, 1000}: on the model-0 node it takes from the model-1 shape's fragment
  // (Δ = −0.2·1000), on the model-1 node from the model-0 shape's (Δ = −0.3·1000), so FGD picks
  // the scarce model-1 node. Weighted by scarcity the model-1 shape weighs 0.2·10000/2000 = 1.0 and
  // the model-0 shape 0.3·10000/8000 = 0.375: Δ = −1000 on the model-0 node, −375 on model 1.
  TaskShape need_0 = Whole(1);
  need_0.allowed_models = 0b01;
  TaskShape need_1 = Whole(1);
  need_1.allowed_models = 0b10;
  const std::vector<WeightedShape> workload = {{need_0, 0.3}, {need_1, 0.2}, {Whole(1), 0.5}};
  const std::vector<int64_t> capacity = {8000, 2000};
  const std::vector<WeightedShape> weighted = ScarcityWeighted(workload, capacity);
  std::vector<int32_t> gpus_0 = {1000, 1000};
  std::vector<int32_t> gpus_1 = {1000, 1000};
  const GpuNodeFree common{16000, kUnlimitedMemory, gpus_0, 0};
  const GpuNodeFree scarce{16000, kUnlimitedMemory, gpus_1, 1};
  EXPECT_DOUBLE_EQ(BestFgdPlacement(common, Whole(1), workload).delta, -200);
  EXPECT_DOUBLE_EQ(BestFgdPlacement(scarce, Whole(1), workload).delta, -300);
  const HostPerGpu no_stranding{};
  EXPECT_DOUBLE_EQ(BestFgdPlusPlacement(common, Whole(1), weighted, no_stranding).delta, -1000);
  EXPECT_DOUBLE_EQ(BestFgdPlusPlacement(scarce, Whole(1), weighted, no_stranding).delta, -375);
  EXPECT_GT(FgdNodeScore(BestFgdPlusPlacement(common, Whole(1), weighted, no_stranding).delta),
            FgdNodeScore(BestFgdPlusPlacement(scarce, Whole(1), weighted, no_stranding).delta));
}

TEST_F(FragmentationTest, FgdPlusTakesTheSameGpusAsFgd) {
  // Stranding depends on the node's totals only, so the GPU choice inside a node is FGD's.
  const std::vector<WeightedShape> workload = {{Share(500), 0.5}, {Whole(1, 4000), 0.5}};
  const GpuNodeFree node = Node({1000, 600, 1000, 200}, 6000);
  const HostPerGpu need = TypicalHostPerGpu(workload);
  for (const TaskShape& t : {Share(500), Share(150), Whole(1, 2000), Whole(2, 2000)}) {
    const FgdChoice fgd = BestFgdPlacement(node, t, workload);
    const FgdChoice plus = BestFgdPlusPlacement(node, t, workload, need);
    EXPECT_EQ(plus.feasible, fgd.feasible);
    EXPECT_EQ(plus.gpu_mask, fgd.gpu_mask);
  }
}

}  // namespace
}  // namespace abacus::sched::frag
