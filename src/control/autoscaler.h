// The InferenceService autoscaler, after the Kubernetes HPA: replicas = ceil(Σ metric / target)
// over the replicas' latest fresh samples (for p99LatencyMs, not additive: ceil(current ×
// average / target)), within [minReplicas, maxReplicas]; no change inside
// a ±10% tolerance; a scale-down takes the highest recommendation of the stabilization window;
// no scaling at all within cooldownSeconds of the last one.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "control/view.h"
#include "workload/workload.h"

namespace abacus::control {

struct Recommendation {
  Time time{};
  int32_t replicas = 0;
  bool operator==(const Recommendation&) const = default;
};

// Kept across calls, inside InferenceState.
struct AutoscalerState {
  int32_t desired = 0;  // 0: not yet set (starts at spec.replicas)
  Time last_scale{};    // epoch: never scaled
  std::vector<Recommendation> history;  // recommendations within the stabilization window
  bool operator==(const AutoscalerState&) const = default;
};

struct AutoscaleOptions {
  Duration metric_max_age = std::chrono::seconds(60);  // older samples are ignored
  double tolerance = 0.1;
};

struct AutoscaleResult {
  int32_t desired = 0;      // after this call
  int32_t recommended = 0;  // what the metric alone asks for now (clamped)
  std::optional<double> average;  // per reporting replica
  int32_t reporting = 0;    // replicas with a fresh sample
  std::string held_by;      // why desired did not follow: "", NoMetrics, Tolerance, Stabilization, Cooldown
};

// Returns `replicas` within the spec's [minReplicas, maxReplicas].
int32_t ClampReplicas(const InferenceSpec& spec, int32_t replicas);

// Updates `state` from `samples` at `now` and returns the desired replicas. Without
// autoscaling in the spec, desired follows spec.replicas (clamped).
AutoscaleResult Autoscale(const InferenceSpec& spec, const std::vector<MetricSample>& samples, AutoscalerState& state,
                          Time now, const AutoscaleOptions& o = {});

}  // namespace abacus::control
