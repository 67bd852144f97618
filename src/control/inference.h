// InferenceService controller: desired replicas (spec or autoscaler), per-replica readiness
// and liveness from probes with restarts (crash-loop backoff), the canary rollout with
// promotion and rollback, and shortage intervals for metering. Its memory is InferenceState,
// which the server stores with the workload and passes back.
#pragma once

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>

#include "control/autoscaler.h"
#include "control/decision.h"
#include "control/rollout.h"
#include "control/shortage.h"
#include "control/view.h"

namespace abacus::control {

// Restarts of one replica, for the crash-loop backoff.
struct RestartRecord {
  int32_t count = 0;
  Time last{};
  bool operator==(const RestartRecord&) const = default;
};

struct InferenceState {
  AutoscalerState autoscaler;
  RolloutState rollout;
  ShortageState shortage;
  std::map<int32_t, Time> ready;              // replica → started_at of the run published ready
  std::map<int32_t, RestartRecord> restarts;  // replica → restarts so far
  bool operator==(const InferenceState&) const = default;
};

struct InferenceOptions {
  AutoscaleOptions autoscale;
  Duration crash_backoff = std::chrono::seconds(10);     // second restart waits this, then doubles
  Duration crash_backoff_cap = std::chrono::minutes(5);
  Duration crash_reset = std::chrono::minutes(10);       // a run this long forgets earlier restarts
  int32_t max_unavailable_percent = 25;  // version changes take down at most this share of ready replicas
};

struct InferenceOutcome {
  Decisions decisions;
  InferenceState state;  // store it; pass it back next time
};

// Returns the decisions for InferenceService `w` at `now` from its stored `state` (default:
// fresh) and the metrics and probe results in `signals`. Call after every task report, metric
// or probe report, and on every loop tick while it is Admitted, Running or Preempting.
InferenceOutcome ReconcileInference(const WorkloadView& w, InferenceState state, const Signals& signals, Time now,
                                    const InferenceOptions& o = {});

// The stored form of InferenceState, and back (InvalidArgument naming the problem).
nlohmann::json ToJson(const InferenceState& s);
Result<InferenceState> InferenceStateFromJson(const nlohmann::json& j);

}  // namespace abacus::control
