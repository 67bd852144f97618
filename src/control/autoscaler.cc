#include "control/autoscaler.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace abacus::control {

int32_t ClampReplicas(const InferenceSpec& spec, int32_t replicas) {
  return std::clamp(replicas, spec.min_replicas, std::max(spec.min_replicas, spec.max_replicas));
}

AutoscaleResult Autoscale(const InferenceSpec& spec, const std::vector<MetricSample>& samples, AutoscalerState& s,
                          Time now, const AutoscaleOptions& o) {
  AutoscaleResult r;
  if (s.desired == 0) {
    s.desired = ClampReplicas(spec, spec.replicas);
    s.history = {{now, s.desired}};
  }
  if (!spec.autoscaling) {
    s.desired = ClampReplicas(spec, spec.replicas);
    r.desired = r.recommended = s.desired;
    return r;
  }
  const Autoscaling& a = *spec.autoscaling;
  r.desired = r.recommended = s.desired;
  // 1) The latest fresh sample of each replica.
  std::map<int32_t, const MetricSample*> latest;
  for (const MetricSample& m : samples) {
    // A replica beyond the desired ones was stopped: its last samples no longer count.
    if (m.metric != a.metric || m.replica >= s.desired || m.time > now || m.time < now - o.metric_max_age) continue;
    const MetricSample*& cur = latest[m.replica];
    if (cur == nullptr || m.time > cur->time) cur = &m;
  }
  double target = static_cast<double>(a.target.milli()) / 1000.0;
  if (latest.empty() || target <= 0) {
    r.held_by = "NoMetrics";
    return r;
  }
  double sum = 0;
  for (const auto& [replica, m] : latest) sum += m->value;
  r.reporting = static_cast<int32_t>(latest.size());
  r.average = sum / r.reporting;
  // 2) The recommendation: unchanged within the tolerance, else ceil(sum / target).
  double ratio = *r.average / target;
  int32_t rec = s.desired;
  if (std::abs(ratio - 1.0) > o.tolerance) {
    // Requests add up over the replicas; a latency does not: it scales the replicas there are.
    double want = a.metric == kP99LatencyMs ? std::ceil(s.desired * ratio - 1e-9) : std::ceil(sum / target - 1e-9);
    rec = ClampReplicas(spec, static_cast<int32_t>(std::min(want, 1e6)));
  }
  r.recommended = rec;
  // 3) Remember it; forget what left the stabilization window.
  Duration window = std::chrono::seconds(a.stabilization_seconds);
  s.history.push_back({now, rec});
  std::erase_if(s.history, [&](const Recommendation& h) { return h.time < now - window; });
  // 4) Up at once; down only to the highest recommendation of the window.
  int32_t candidate = rec;
  if (rec < s.desired) {
    for (const Recommendation& h : s.history) candidate = std::max(candidate, h.replicas);
    candidate = std::min(candidate, s.desired);
  }
  if (candidate == s.desired) {
    if (std::abs(ratio - 1.0) <= o.tolerance) {
      r.held_by = "Tolerance";
    } else if (rec < s.desired) {
      r.held_by = "Stabilization";
    }
    return r;
  }
  // 5) Cooldown since the last scaling.
  if (IsSet(s.last_scale) && now - s.last_scale < std::chrono::seconds(a.cooldown_seconds)) {
    r.held_by = "Cooldown";
    return r;
  }
  s.desired = candidate;
  s.last_scale = now;
  r.desired = candidate;
  return r;
}

}  // namespace abacus::control
