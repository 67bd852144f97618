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

}  // namespace
}  // namespace abacus::sched::frag
