// Canary rollout of an InferenceService: when spec.rollout.version differs from the stable
// version, the lowest-numbered canary replicas run it; once they all stay healthy for
// promoteAfterSeconds the version is promoted to every replica; when a canary replica fails,
// the rollout rolls back (automatic) or pauses for a person (manual). A version that failed is
// not tried again until the spec names another. Every step is an event.
#pragma once

#include <string>

#include "control/decision.h"
#include "workload/workload.h"

namespace abacus::control {

enum class RolloutPhase : uint8_t {
  kStable,      // every replica runs stable_version
  kCanary,      // replicas [0, canary_replicas) run canary_version
  kPaused,      // the canary failed under manual rollback: it stays as it is
  kRolledBack,  // the canary failed and was rolled back
};
// Returns "Stable", "Canary", "Paused" or "RolledBack".
std::string_view RolloutPhaseName(RolloutPhase p);
Result<RolloutPhase> ParseRolloutPhase(std::string_view text);

// Kept across calls, inside InferenceState.
struct RolloutState {
  bool initialized = false;
  RolloutPhase phase = RolloutPhase::kStable;
  std::string stable_version;  // starts as the workload's "version" label ("" when none)
  std::string canary_version;
  int32_t canary_replicas = 0;
  Time started{};
  Time healthy_since{};        // epoch while the canary is not all healthy
  std::string failed_version;  // rolled back or paused; not tried again
  bool operator==(const RolloutState&) const = default;
};

// What the canary replicas look like now.
struct CanaryHealth {
  bool healthy = false;  // every canary replica runs the canary version, is Running and ready
  bool failed = false;   // a canary replica failed (exit, liveness, readiness threshold)
  std::string why;       // for the failure
};

// Returns how many replicas of `desired` run the canary: canaryReplicas, else
// ceil(desired × canaryPercent / 100), else 1; at least 1, at most desired.
int32_t CanaryCount(const Rollout& r, int32_t desired);

// Returns the version `replica` should run.
const std::string& WantedVersion(const RolloutState& s, int32_t replica);

// Advances the rollout one step at `now`: start a canary, promote it, roll it back or pause;
// appends the events. `desired` is the service's replica count now.
void StepRollout(const Workload& w, int32_t desired, const CanaryHealth& health, RolloutState& s, Time now,
                 Decisions& out);

}  // namespace abacus::control
