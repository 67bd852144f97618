#include "sim/packing.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "sched/scheduler.h"
#include "sim/packing_report.h"
#include "sim/svg_plot.h"

namespace abacus::sim {
namespace {

TraceNode Node(std::string name, int64_t cpu, int32_t gpus, std::string model = "G2") {
  return {std::move(name), cpu, 65536, gpus, gpus > 0 ? std::move(model) : ""};
}

TracePod Pod(std::string name, int64_t cpu, int32_t gpus, int32_t milli) {
  TracePod p;
  p.name = std::move(name);
  p.cpu_milli = cpu;
  p.memory_mib = 0;
  p.num_gpu = gpus;
  p.gpu_milli = milli;
  return p;
}

// Two nodes (2 GPUs + 1 GPU, 3000 milli in all) and three pod shapes: one whole GPU, half a GPU,
// two whole GPUs. Arrivals: whole, half, two (does not fit), whole.
class HandMadeTrace : public ::testing::Test {
 protected:
  void SetUp() override {
    PackingOptions o;
    o.arrival = 1.0;
    auto x = PackingExperiment::Create({Node("n1", 8000, 2), Node("n2", 8000, 1)},
                                       {Pod("one", 1000, 1, 1000), Pod("half", 1000, 1, 500), Pod("two", 1000, 2, 1000)}, o);
    ASSERT_TRUE(x.ok()) << x.status().ToString();
    x_.emplace(std::move(*x));
  }
  std::optional<PackingExperiment> x_;
};

TEST_F(HandMadeTrace, AllocationCurveComputedByHand) {
  std::vector<PackingExperiment::Decision> d;
  PackingRun run = x_->RunSequence(PackingPolicy::kBestFit, {0, 1, 2, 0}, &d);
  // 1st arrival (1000 = 33.3%): BestFit takes n2 (−(½·7/8 + ½·0/2) beats −(½·7/8 + ½·1/2)).
  // 2nd (1500 = 50%): the half goes to n1. 3rd (3500 = 116.7%): two whole GPUs fit nowhere, and
  // the run ends at 100%.
  ASSERT_EQ(run.curve.size(), 100u);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].node, 1);
  EXPECT_EQ(d[1].node, 0);
  EXPECT_EQ(d[2].node, -1);
  EXPECT_EQ(run.arrivals, 3);
  EXPECT_EQ(run.skipped, 1);
  for (const PackingPoint& p : run.curve) {
    SCOPED_TRACE(p.arrived_pct);
    if (p.arrived_pct <= 33) {
      EXPECT_NEAR(p.gpu_alloc_pct, 100.0 / 3, 1e-9);
      EXPECT_NEAR(p.frag_pct, 0, 1e-9);  // n1 idle, n2 full: every shape fits or nothing is free
    } else {
      EXPECT_NEAR(p.gpu_alloc_pct, 50.0, 1e-9);
      // n1 holds 500 + 1000 free: "one" cannot use the 500 (F = 500), "half" uses both (0),
      // "two" fits nowhere (1500): F(M) = (500 + 0 + 1500) / 3.
      EXPECT_NEAR(p.frag_pct, 100.0 * (2000.0 / 3) / 3000, 1e-9);
      EXPECT_NEAR(p.frag_ratio_pct, 100.0 * (2000.0 / 3) / 1500, 1e-9);
    }
  }
}

TEST_F(HandMadeTrace, FgdAvoidsTheFragment) {
  // After "half" sits on n1, another "half" should go next to it (FGD pairs shares), not to n2.
  std::vector<PackingExperiment::Decision> d;
  x_->RunSequence(PackingPolicy::kFgd, {1, 1}, &d);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].node, d[1].node);
  EXPECT_EQ(d[0].gpu_mask, d[1].gpu_mask);
}

std::vector<TraceNode> MixedNodes() {
  std::vector<TraceNode> nodes;
  for (int i = 0; i < 6; ++i) nodes.push_back(Node("g" + std::to_string(i), 32000, 8, "G2"));
  for (int i = 0; i < 4; ++i) nodes.push_back(Node("t" + std::to_string(i), 16000, 2, "T4"));
  nodes.push_back(Node("v0", 16000, 4, "V100M32"));
  return nodes;
}

std::vector<TracePod> MixedPods() {
  std::vector<TracePod> pods = {Pod("a", 4000, 1, 1000), Pod("b", 2000, 1, 500), Pod("c", 1000, 1, 250),
                                Pod("d", 8000, 4, 1000), Pod("e", 6000, 0, 0),    Pod("f", 3000, 2, 1000),
                                Pod("g", 2000, 1, 700)};
  pods[6].gpu_spec = {"T4", "V100M32"};
  return pods;
}

// kTraceOnce (the reference's workload tuning): every pod of the list arrives once, in a seeded
// shuffled order, before any is drawn again. Demand of the list: 1000 + 500 + 2000 = 3500 of
// 3000 capacity, so arrival 2.0 (6000) needs all three and then draws with replacement.
TEST(Packing, TraceOnceSamplingShowsEveryPodOnceFirst) {
  PackingOptions o;
  o.arrival = 2.0;
  auto x = PackingExperiment::Create({Node("n1", 8000, 2), Node("n2", 8000, 1)},
                                     {Pod("one", 1000, 1, 1000), Pod("half", 1000, 1, 500), Pod("two", 1000, 2, 1000)}, o);
  ASSERT_TRUE(x.ok());
  std::set<std::vector<int32_t>> orders;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::vector<PackingExperiment::Decision> d;
    x->Run(PackingPolicy::kBestFit, seed, &d);
    ASSERT_GT(d.size(), 3u);
    std::vector<int32_t> first = {d[0].pod, d[1].pod, d[2].pod};
    EXPECT_EQ(std::set<int32_t>(first.begin(), first.end()).size(), 3u) << "seed " << seed;
    orders.insert(first);
  }
  EXPECT_GT(orders.size(), 1u);  // the order depends on the seed
}

// kShuffledNodes: ties go to the first node of an order drawn once per run, so equal nodes fill
// one after another (as the reference's seeded node renaming does), not always node 0 and not a
// new random node per arrival. Three equal 2-GPU nodes, whole-GPU pods only: every placement
// has Δ = 0 (FGD score 50) on every node with a free GPU, so the tie rule alone decides. The
// first two pods share the run's first node; which node that is depends on the seed.
TEST(Packing, ShuffledTiesFillTheRunsFirstNodeFirst) {
  PackingOptions o;
  o.arrival = 1.0;
  o.ties = PackingTies::kShuffledNodes;
  auto x = PackingExperiment::Create({Node("n1", 8000, 2), Node("n2", 8000, 2), Node("n3", 8000, 2)},
                                     {Pod("one", 1000, 1, 1000)}, o);
  ASSERT_TRUE(x.ok());
  std::set<int32_t> first_nodes;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::vector<PackingExperiment::Decision> d;
    x->Run(PackingPolicy::kFgd, seed, &d);
    ASSERT_EQ(d.size(), 6u);
    EXPECT_EQ(d[0].node, d[1].node) << "seed " << seed;
    EXPECT_NE(d[2].node, d[0].node);
    EXPECT_EQ(d[2].node, d[3].node) << "seed " << seed;
    first_nodes.insert(d[0].node);
  }
  EXPECT_GT(first_nodes.size(), 1u);
}

TEST(Packing, SameSeedSameOutput) {
  auto x = PackingExperiment::Create(MixedNodes(), MixedPods());
  ASSERT_TRUE(x.ok());
  for (PackingPolicy p : {PackingPolicy::kRandom, PackingPolicy::kFgd, PackingPolicy::kClustering, PackingPolicy::kBinpack}) {
    SCOPED_TRACE(std::string(PackingPolicyName(p)));
    PackingSummary a = AveragePackingRuns(p, {x->Run(p, 7), x->Run(p, 8)});
    PackingSummary b = AveragePackingRuns(p, {x->Run(p, 7), x->Run(p, 8)});
    a.seconds = b.seconds = 0;
    EXPECT_EQ(PackingJson({a}).dump(), PackingJson({b}).dump());
    EXPECT_EQ(a.curve.size(), 130u);
    PackingSummary c = AveragePackingRuns(p, {x->Run(p, 9)});
    c.seconds = 0;
    EXPECT_NE(PackingJson({a}).dump(), PackingJson({c}).dump());
  }
}

TEST(Packing, EveryPolicyKeepsTheLedgerConsistent) {
  auto x = PackingExperiment::Create(MixedNodes(), MixedPods());
  ASSERT_TRUE(x.ok());
  for (PackingPolicy p : {PackingPolicy::kRandom, PackingPolicy::kDotProd, PackingPolicy::kClustering,
                          PackingPolicy::kPacking, PackingPolicy::kBestFit, PackingPolicy::kFgd, PackingPolicy::kFgdPack,
                          PackingPolicy::kFgdPlus, PackingPolicy::kBinpack,
                          PackingPolicy::kSpread, PackingPolicy::kSchedFgd,
                          PackingPolicy::kSchedFgdPlus}) {
    SCOPED_TRACE(std::string(PackingPolicyName(p)));
    std::vector<PackingExperiment::Decision> d;
    PackingRun r = x->Run(p, 42, &d);
    EXPECT_EQ(r.placed + r.skipped, r.arrivals);
    EXPECT_GT(r.placed, 0);
    // Allocation never decreases and never exceeds arrived demand.
    double last = 0;
    for (const auto& pt : r.curve) {
      EXPECT_GE(pt.gpu_alloc_pct, last - 1e-9);
      EXPECT_LE(pt.gpu_alloc_pct, 100.0);
      last = pt.gpu_alloc_pct;
    }
    // The model constraint of "g" holds.
    for (const auto& e : d) {
      if (e.pod == 6 && e.node >= 0) {
        EXPECT_GE(e.node, 6);
      }
    }
  }
}

// fgd-plus's inputs: pod "g" may run on T4 or V100M32 only, 12 of the cluster's 60 GPUs, so its
// popularity counts 60/12 = 5 times; the others keep theirs. The host need per GPU milli is the
// GPU pods' CPU over their GPU milli.
TEST(Packing, FgdPlusWeighsModelConstrainedPodsByTheirCapacity) {
  auto x = PackingExperiment::Create(MixedNodes(), MixedPods());
  ASSERT_TRUE(x.ok());
  ASSERT_EQ(x->plus_distribution().size(), x->distribution().size());
  for (size_t i = 0; i < x->distribution().size(); ++i) {
    const auto& plain = x->distribution()[i];
    const auto& weighted = x->plus_distribution()[i];
    EXPECT_EQ(weighted.shape, plain.shape);
    EXPECT_DOUBLE_EQ(weighted.popularity, plain.popularity * (plain.shape.allowed_models != 0 ? 5.0 : 1.0));
  }
  // CPU of the GPU pods a, b, c, d, f, g over their GPU milli.
  const double cpu = 4000 + 2000 + 1000 + 8000 + 3000 + 2000;
  const double gpu = 1000 + 500 + 250 + 4000 + 2000 + 700;
  EXPECT_DOUBLE_EQ(x->host_per_gpu().cpu_milli, cpu / gpu);
  EXPECT_EQ(x->host_per_gpu().memory_mib, 0);
}

// fgd-plus puts a CPU-only pod on the node whose GPUs are taken rather than on an idle node whose
// free GPUs its CPU would strand. Two 2-GPU nodes of 16 cores, n1 (G2) idle, n2 (T4) where the
// T4-only GPU pods go first; they bring 8000/1500 CPU milli per GPU milli, so n1 left with 8 cores
// could feed only 1500 of its 2000 free milli. FGD sees no fragment change on either node and
// takes the lower index (n1); fgd-plus takes n2.
TEST(Packing, FgdPlusKeepsCpuOnlyPodsOffNodesWithFreeGpus) {
  PackingOptions o;
  o.arrival = 1.0;
  o.ties = PackingTies::kLowestIndex;
  std::vector<TracePod> pods = {Pod("one", 2000, 1, 1000), Pod("share", 6000, 1, 500), Pod("cpu", 8000, 0, 0)};
  pods[0].gpu_spec = {"T4"};
  pods[1].gpu_spec = {"T4"};
  auto x = PackingExperiment::Create({Node("n1", 16000, 2, "G2"), Node("n2", 16000, 2, "T4")}, pods, o);
  ASSERT_TRUE(x.ok()) << x.status().ToString();
  for (auto [policy, cpu_node] : {std::pair{PackingPolicy::kFgd, 0}, std::pair{PackingPolicy::kFgdPlus, 1}}) {
    SCOPED_TRACE(std::string(PackingPolicyName(policy)));
    std::vector<PackingExperiment::Decision> d;
    x->RunSequence(policy, {0, 0, 2}, &d);
    ASSERT_EQ(d.size(), 3u);
    EXPECT_EQ(d[0].node, 1);
    EXPECT_EQ(d[1].node, 1);
    EXPECT_EQ(d[2].node, cpu_node);
  }
}

// The simulator's binpack/spread path and a run that calls sched::Schedule() once per arrival
// over a full Snapshot (as the server does) make the same placements.
TEST(Packing, PlacerPathMatchesSchedule) {
  auto x = PackingExperiment::Create(MixedNodes(), MixedPods());
  ASSERT_TRUE(x.ok());
  std::vector<int32_t> sequence;
  for (int i = 0; i < 60; ++i) sequence.push_back((i * 5 + i / 7) % 7);
  for (auto [policy, sp] : {std::pair{PackingPolicy::kBinpack, sched::ScoringPolicy::kBinpack},
                            std::pair{PackingPolicy::kSpread, sched::ScoringPolicy::kSpread}}) {
    SCOPED_TRACE(std::string(PackingPolicyName(policy)));
    std::vector<PackingExperiment::Decision> sim;
    x->RunSequence(policy, sequence, &sim);

    sched::Snapshot snap;
    snap.nodes = x->nodes();
    sched::QueueInfo q;
    q.name = "q";
    q.tenant = "t";
    q.quotas.push_back({ResourceKey::Cpu(), int64_t{1} << 50, std::nullopt, std::nullopt});
    q.quotas.push_back({ResourceKey::Memory(), int64_t{1} << 60, std::nullopt, std::nullopt});
    for (FlavorId f : x->flavor_order()) q.quotas.push_back({ResourceKey::Devices(f), int64_t{1} << 40, std::nullopt, std::nullopt});
    snap.queues.push_back(q);
    sched::SchedulerConfig cfg;
    cfg.policy = sp;
    cfg.enable_preemption = false;
    for (size_t i = 0; i < sim.size(); ++i) {
      SCOPED_TRACE(i);
      sched::WorkloadInfo w = x->PodWorkload(sim[i].pod);
      w.id = "a" + std::to_string(i);
      snap.workloads.push_back(w);
      sched::CycleResult r = sched::Schedule(snap, cfg);
      if (r.admissions.empty()) {
        EXPECT_EQ(sim[i].node, -1);
        snap.workloads.pop_back();
        continue;
      }
      ASSERT_EQ(r.admissions.size(), 1u);
      const auto& a = r.admissions[0];
      EXPECT_EQ(a.placements[0].node, sim[i].node);
      uint64_t mask = 0;
      for (const auto& dg : a.placements[0].devices) mask |= uint64_t{1} << dg.device;
      EXPECT_EQ(mask, sim[i].gpu_mask);
      auto& admitted = snap.workloads.back();
      admitted.admitted = true;
      admitted.group_flavors = a.group_flavors;
      admitted.placements = a.placements;
    }
  }
}

TEST(Packing, ParsesPoliciesAndSeeds) {
  auto p = ParsePackingPolicies("fgd,bestfit,dotproduct");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->size(), 3u);
  EXPECT_FALSE(ParsePackingPolicies("fgd,fgd").ok());
  EXPECT_FALSE(ParsePackingPolicies("worst").ok());
  auto s = ParseSeeds("42-51");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->size(), 10u);
  EXPECT_EQ(s->front(), 42u);
  EXPECT_EQ(*ParseSeeds("1,3"), (std::vector<uint64_t>{1, 3}));
  EXPECT_FALSE(ParseSeeds("9-3").ok());
  EXPECT_FALSE(ParseSeeds("x").ok());
}

TEST(Packing, RefusesClustersWithoutGpusOrPodsWithoutGpuDemand) {
  EXPECT_FALSE(PackingExperiment::Create({Node("c", 8000, 0)}, {Pod("a", 1000, 1, 1000)}).ok());
  EXPECT_FALSE(PackingExperiment::Create({Node("g", 8000, 2)}, {Pod("a", 1000, 0, 0)}).ok());
}

TEST(Packing, ReportsRender) {
  auto x = PackingExperiment::Create(MixedNodes(), MixedPods());
  ASSERT_TRUE(x.ok());
  PackingSummary s = AveragePackingRuns(PackingPolicy::kFgd, {x->Run(PackingPolicy::kFgd, 1)});
  auto j = PackingJson({s});
  ASSERT_TRUE(j["policies"].contains("fgd"));
  EXPECT_EQ(j["policies"]["fgd"]["curve"].size(), 130u);
  EXPECT_EQ(j["policies"]["fgd"]["curve"][0]["arrived_pct"], 1);
  for (const char* k : {"gpu_alloc_pct", "frag_pct", "frag_ratio_pct"}) EXPECT_TRUE(j["policies"]["fgd"]["curve"][0].contains(k));
  EXPECT_TRUE(j["policies"]["fgd"].contains("seconds"));
  EXPECT_NE(PackingTable({s}).find("fgd"), std::string::npos);
  EXPECT_EQ(PackingCsv({s}).substr(0, 16), "policy,arrived_p");
  std::string svg = PackingSvg("t <x>", {s});
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("t &lt;x&gt;"), std::string::npos);
  EXPECT_NE(svg.find("<polyline"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}

}  // namespace
}  // namespace abacus::sim
