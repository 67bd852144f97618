#include "control/rollout.h"

#include <algorithm>
#include <array>

#include "control/names.h"

namespace abacus::control {

using nlohmann::json;

namespace {

constexpr std::array<std::string_view, 4> kPhaseNames = {"Stable", "Canary", "Paused", "RolledBack"};

// Shows "" as "(initial)" in messages.
std::string Shown(const std::string& version) { return version.empty() ? "(initial)" : version; }

void StartCanary(const Rollout& r, int32_t desired, RolloutState& s, Time now, Decisions& out) {
  s.phase = RolloutPhase::kCanary;
  s.canary_version = r.version;
  s.canary_replicas = CanaryCount(r, desired);
  s.started = now;
  s.healthy_since = Time{};
  out.push_back(MakeEvent("CanaryStarted",
                          "canary of version " + Shown(r.version) + " on " + std::to_string(s.canary_replicas) +
                              " of " + std::to_string(desired) + " replica(s); stable " + Shown(s.stable_version),
                          {{"version", r.version},
                           {"stableVersion", s.stable_version},
                           {"canaryReplicas", s.canary_replicas},
                           {"replicas", desired},
                           {"promoteAfterSeconds", r.promote_after_seconds}}));
}

}  // namespace

std::string_view RolloutPhaseName(RolloutPhase p) { return kPhaseNames[static_cast<size_t>(p)]; }

Result<RolloutPhase> ParseRolloutPhase(std::string_view text) {
  return ParseName<RolloutPhase>(kPhaseNames, text, "rollout phase");
}

int32_t CanaryCount(const Rollout& r, int32_t desired) {
  int32_t n = 1;
  if (r.canary_replicas) {
    n = *r.canary_replicas;
  } else if (r.canary_percent) {
    n = static_cast<int32_t>((static_cast<int64_t>(desired) * *r.canary_percent + 99) / 100);
  }
  return std::clamp(n, 1, std::max(desired, 1));
}

const std::string& WantedVersion(const RolloutState& s, int32_t replica) {
  bool canary = s.phase == RolloutPhase::kCanary || s.phase == RolloutPhase::kPaused;
  return canary && replica < s.canary_replicas ? s.canary_version : s.stable_version;
}

void StepRollout(const Workload& w, int32_t desired, const CanaryHealth& health, RolloutState& s, Time now,
                 Decisions& out) {
  const InferenceSpec& spec = *w.inference();
  if (!s.initialized) {
    // What runs at birth: the `version` label, else the version the spec names — a service born
    // with `rollout.version: v1` and no label has nothing older to canary against (the probe of
    // 2026-12-07: its only replica was stopped and restarted seconds after it started).
    auto it = w.labels.find("version");
    s.stable_version = it != w.labels.end() ? it->second : spec.rollout ? spec.rollout->version : "";
    s.initialized = true;
  }
  if (!spec.rollout) return;
  const Rollout& r = *spec.rollout;
  if (s.phase == RolloutPhase::kCanary || s.phase == RolloutPhase::kPaused) {
    if (r.version != s.canary_version) {  // the spec changed under the canary
      if (r.version == s.stable_version) {
        s.phase = RolloutPhase::kStable;
        out.push_back(MakeEvent("RolloutAborted", "spec returned to version " + Shown(s.stable_version) +
                                                      "; canary " + Shown(s.canary_version) + " removed",
                                {{"version", s.canary_version}, {"stableVersion", s.stable_version}}));
        return;
      }
      out.push_back(MakeEvent("CanarySuperseded", "canary " + Shown(s.canary_version) + " replaced by " + Shown(r.version),
                              {{"version", s.canary_version}, {"newVersion", r.version}}));
      StartCanary(r, desired, s, now, out);
      return;
    }
    if (s.phase == RolloutPhase::kPaused) return;
    if (health.failed) {
      s.failed_version = s.canary_version;
      json details = {{"version", s.canary_version}, {"stableVersion", s.stable_version}, {"why", health.why}};
      if (r.automatic_rollback) {
        s.phase = RolloutPhase::kRolledBack;
        out.push_back(MakeEvent("RolledBack",
                                "canary " + Shown(s.canary_version) + " failed (" + health.why + "); version " +
                                    Shown(s.stable_version) + " restored",
                                details, "CanaryFailed"));
      } else {
        s.phase = RolloutPhase::kPaused;
        out.push_back(MakeEvent("CanaryFailed",
                                "canary " + Shown(s.canary_version) + " failed (" + health.why +
                                    "); rollback is manual: the rollout is paused",
                                details, "CanaryFailed"));
      }
      return;
    }
    if (!health.healthy) {
      s.healthy_since = Time{};
      return;
    }
    if (!IsSet(s.healthy_since)) s.healthy_since = now;
    if (now - s.healthy_since < std::chrono::seconds(r.promote_after_seconds)) return;
    std::string previous = s.stable_version;
    s.stable_version = s.canary_version;
    s.phase = RolloutPhase::kStable;
    s.canary_replicas = 0;
    out.push_back(MakeEvent("Promoted",
                            "version " + Shown(s.stable_version) + " healthy for " +
                                std::to_string(r.promote_after_seconds) + "s; promoted to every replica",
                            {{"version", s.stable_version}, {"previousVersion", previous}}));
    return;
  }
  // Stable or RolledBack: start a canary when the spec names a new version.
  if (r.version == s.stable_version) {
    s.phase = RolloutPhase::kStable;
    return;
  }
  if (r.version == s.failed_version) return;
  StartCanary(r, desired, s, now, out);
}

}  // namespace abacus::control
