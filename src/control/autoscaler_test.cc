#include "control/autoscaler.h"

#include <gtest/gtest.h>

#include "control/control_test_util.h"

namespace abacus::control {
namespace {

using namespace testing;  // NOLINT

InferenceSpec Spec(int32_t replicas = 2, int32_t stabilization = 120, int32_t cooldown = 300) {
  InferenceSpec s;
  s.replicas = replicas;
  s.min_replicas = 2;
  s.max_replicas = 8;
  s.autoscaling = Autoscaling{"queue_depth", Quantity::FromMilli(8000), stabilization, cooldown};
  return s;
}

// One sample of `value` per replica in `values`, at `t`.
std::vector<MetricSample> Load(std::vector<double> values, Time t, std::string metric = "queue_depth") {
  std::vector<MetricSample> out;
  for (size_t r = 0; r < values.size(); ++r) out.push_back({static_cast<int32_t>(r), metric, values[r], t});
  return out;
}

TEST(AutoscalerTest, ScalesUpAtOnceToSumOverTarget) {
  InferenceSpec spec = Spec();
  AutoscalerState s;
  AutoscaleResult r = Autoscale(spec, Load({20, 20}, T(10)), s, T(10));
  EXPECT_EQ(r.desired, 5);  // ceil(40 / 8)
  EXPECT_EQ(r.reporting, 2);
  EXPECT_DOUBLE_EQ(*r.average, 20);
  EXPECT_EQ(s.last_scale, T(10));
}

TEST(AutoscalerTest, StaysWithinTheTolerance) {
  InferenceSpec spec = Spec(4);
  AutoscalerState s;
  AutoscaleResult r = Autoscale(spec, Load({8.5, 8.5, 8.5, 8.5}, T(10)), s, T(10));
  EXPECT_EQ(r.desired, 4);
  EXPECT_EQ(r.held_by, "Tolerance");
}

TEST(AutoscalerTest, KeepsWithinMinAndMax) {
  InferenceSpec spec = Spec(4, 0, 0);
  AutoscalerState s;
  EXPECT_EQ(Autoscale(spec, Load({500, 500}, T(10)), s, T(10)).desired, 8);
  EXPECT_EQ(Autoscale(spec, Load({0, 0}, T(20)), s, T(20)).desired, 2);
  EXPECT_EQ(ClampReplicas(spec, 0), 2);
}

TEST(AutoscalerTest, ScaleDownWaitsForTheStabilizationWindow) {
  InferenceSpec spec = Spec(4, 120, 0);
  AutoscalerState s;
  EXPECT_EQ(Autoscale(spec, Load({8, 8, 8, 8}, T(0)), s, T(0)).desired, 4);
  AutoscaleResult low = Autoscale(spec, Load({2, 2, 2, 2}, T(10)), s, T(10));
  EXPECT_EQ(low.recommended, 2);
  EXPECT_EQ(low.desired, 4);
  EXPECT_EQ(low.held_by, "Stabilization");
  EXPECT_EQ(Autoscale(spec, Load({2, 2, 2, 2}, T(119)), s, T(119)).desired, 4);
  EXPECT_EQ(Autoscale(spec, Load({2, 2, 2, 2}, T(121)), s, T(121)).desired, 2);
}

TEST(AutoscalerTest, ScaleDownTakesTheHighestRecommendationOfTheWindow) {
  InferenceSpec spec = Spec(6, 120, 0);
  AutoscalerState s;
  Autoscale(spec, Load({8, 8, 8, 8, 8, 8}, T(0)), s, T(0));
  Autoscale(spec, Load({4, 4, 4, 4, 4, 4}, T(60)), s, T(60));  // recommends 3
  Autoscale(spec, Load({2, 2, 2, 2, 2, 2}, T(100)), s, T(100));  // recommends 2
  EXPECT_EQ(Autoscale(spec, Load({2, 2, 2, 2, 2, 2}, T(130)), s, T(130)).desired, 3);  // (60, 3) still in
  EXPECT_EQ(Autoscale(spec, Load({2, 2, 2, 2, 2, 2}, T(181)), s, T(181)).desired, 2);
}

TEST(AutoscalerTest, CooldownBlocksASecondScaleUp) {
  InferenceSpec spec = Spec(2, 0, 300);
  AutoscalerState s;
  EXPECT_EQ(Autoscale(spec, Load({20, 20}, T(0)), s, T(0)).desired, 5);
  AutoscaleResult second = Autoscale(spec, Load({16, 16, 16, 16, 16}, T(60)), s, T(60));
  EXPECT_EQ(second.recommended, 8);
  EXPECT_EQ(second.desired, 5);
  EXPECT_EQ(second.held_by, "Cooldown");
  EXPECT_EQ(Autoscale(spec, Load({16, 16, 16, 16, 16}, T(300)), s, T(300)).desired, 8);
}

TEST(AutoscalerTest, IgnoresStaleAndOtherMetricsAndUsesEachReplicasLatest) {
  InferenceSpec spec = Spec(2, 0, 0);
  AutoscalerState s;
  std::vector<MetricSample> samples = Load({100, 100}, T(0));            // stale at T(100)
  auto other = Load({100, 100}, T(100), "gpu_utilization");              // another metric
  samples.insert(samples.end(), other.begin(), other.end());
  AutoscaleResult r = Autoscale(spec, samples, s, T(100));
  EXPECT_EQ(r.held_by, "NoMetrics");
  EXPECT_EQ(r.desired, 2);
  samples.push_back({0, "queue_depth", 40, T(90)});
  samples.push_back({0, "queue_depth", 8, T(95)});  // latest of replica 0
  samples.push_back({1, "queue_depth", 8, T(95)});
  EXPECT_EQ(Autoscale(spec, samples, s, T(100)).desired, 2);
}

TEST(AutoscalerTest, WithoutAutoscalingFollowsTheSpec) {
  InferenceSpec spec = Spec(3);
  spec.autoscaling.reset();
  AutoscalerState s;
  EXPECT_EQ(Autoscale(spec, Load({100, 100, 100}, T(0)), s, T(0)).desired, 3);
  spec.replicas = 5;
  EXPECT_EQ(Autoscale(spec, {}, s, T(1)).desired, 5);
}

}  // namespace
}  // namespace abacus::control

namespace abacus::control {
namespace {

using namespace testing;  // NOLINT

// target: {requestsPerSecond: 50} with the defaults a user gets (stabilization 60 s, cooldown
// 300 s): up at once, down only after the cooldown and with the window's highest
// recommendation; samples of replicas beyond the desired ones (stopped) do not count.
TEST(AutoscalerTest, GatewayRequestsPerSecondWithTheDefaultWindows) {
  InferenceSpec spec;
  spec.replicas = 2;
  spec.min_replicas = 1;
  spec.max_replicas = 6;
  spec.autoscaling = Autoscaling{kRequestsPerSecond, Quantity::FromMilli(50'000)};
  AutoscalerState s;
  EXPECT_EQ(Autoscale(spec, Load({120, 120}, T(10), kRequestsPerSecond), s, T(10)).desired, 5);  // ceil(240 / 50)
  // Load falls: held by the 300 s cooldown; then down to the highest recommendation of the last
  // 60 s (3 at T(290)), not to what the latest sample alone asks (1).
  AutoscaleResult r = Autoscale(spec, Load({0, 0, 0, 0, 0}, T(100), kRequestsPerSecond), s, T(100));
  EXPECT_EQ(r.desired, 5);
  EXPECT_EQ(r.held_by, "Cooldown");
  r = Autoscale(spec, Load({30, 30, 30, 30, 30}, T(290), kRequestsPerSecond), s, T(290));
  EXPECT_EQ(r.recommended, 3);
  EXPECT_EQ(r.held_by, "Cooldown");
  r = Autoscale(spec, Load({0, 0, 0, 0, 0}, T(320), kRequestsPerSecond), s, T(320));
  EXPECT_EQ(r.recommended, 1);
  EXPECT_EQ(r.desired, 3);
  // A stale high sample of replica 4, stopped since, does not count.
  auto samples = Load({60}, T(400), kRequestsPerSecond);
  samples.push_back({4, kRequestsPerSecond, 500, T(399)});
  EXPECT_EQ(Autoscale(spec, samples, s, T(400)).recommended, 2);  // ceil(60 / 50)
}

// A latency does not add up over replicas: the replicas there are, times average / target.
TEST(AutoscalerTest, P99LatencyScalesTheCurrentReplicasByTheRatio) {
  InferenceSpec spec;
  spec.replicas = 2;
  spec.min_replicas = 1;
  spec.max_replicas = 8;
  spec.autoscaling = Autoscaling{kP99LatencyMs, Quantity::FromMilli(200'000), 0, 0};
  AutoscalerState s;
  EXPECT_EQ(Autoscale(spec, Load({400, 400}, T(10), kP99LatencyMs), s, T(10)).desired, 4);  // 2 × 400 / 200
  EXPECT_EQ(Autoscale(spec, Load({210, 210, 210, 210}, T(20), kP99LatencyMs), s, T(20)).desired, 4);  // tolerance
  EXPECT_EQ(Autoscale(spec, Load({50, 50, 50, 50}, T(30), kP99LatencyMs), s, T(30)).desired, 1);
}

}  // namespace
}  // namespace abacus::control
