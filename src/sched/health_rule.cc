#include "sched/health_rule.h"

#include <algorithm>

namespace abacus::sched {
namespace {

void Forget(NodeHealth& n, Time now, const HealthPolicy& policy) {
  auto& f = n.history.faults;
  f.erase(std::remove_if(f.begin(), f.end(), [&](const DeviceFault& x) { return now - x.at >= policy.window; }),
          f.end());
  // Bounded whatever the window: the newest 64 are plenty to decide and to show.
  if (f.size() > 64) f.erase(f.begin(), f.end() - 64);
}

std::string WindowText(Duration d) {
  auto h = std::chrono::duration_cast<std::chrono::hours>(d).count();
  if (h > 0 && d == std::chrono::hours(h)) return std::to_string(h) + "h";
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + "s";
}

// The time of the last fault, or the cordon's start when later.
Time LastFaultOrCordon(const NodeHealth& n) {
  Time last = n.cordon_since;
  for (const auto& f : n.history.faults) last = std::max(last, f.at);
  return last;
}

}  // namespace

HealthOutcome ApplyHealthReports(NodeHealth& n, const std::map<int32_t, DeviceHealthReport>& reports, Time now,
                                 const HealthPolicy& policy) {
  HealthOutcome out;
  Forget(n, now, policy);
  for (const auto& [index, report] : reports) {
    auto it = n.devices.find(index);
    if (it == n.devices.end()) continue;
    DeviceHealth& health = it->second;
    const bool on_probation = n.history.probation.count(index) != 0;
    switch (report.health) {
      case DeviceHealth::kUnhealthy:
        if (health == DeviceHealth::kHealthy || on_probation) {
          DeviceFault f{index, now, report.reason.empty() ? "reported unhealthy by its agent" : report.reason};
          n.history.faults.push_back(f);
          n.history.probation.erase(index);
          out.faults.push_back(std::move(f));
        } else if (health != DeviceHealth::kUnhealthy) {
          out.other.push_back(index);
        }
        health = DeviceHealth::kUnhealthy;
        break;
      case DeviceHealth::kHealthy:
        if (health == DeviceHealth::kHealthy || on_probation) break;
        if (policy.clean_window > Duration::zero()) {
          n.history.probation[index] = now;
          out.recovering.push_back(index);
        } else {
          health = DeviceHealth::kHealthy;
          out.recovered.push_back(index);
        }
        break;
      case DeviceHealth::kUnknown:
        if (health != DeviceHealth::kUnknown) out.other.push_back(index);
        n.history.probation.erase(index);
        health = DeviceHealth::kUnknown;
        break;
    }
  }
  if (!out.faults.empty() && policy.cordon_after > 0 &&
      static_cast<int32_t>(n.history.faults.size()) >= policy.cordon_after && n.cordon == CordonHolder::kNone) {
    out.cordoned = true;
    out.cordon_reason = std::to_string(n.history.faults.size()) + " device fault(s) within " +
                        WindowText(policy.window) + " (the last: device " + std::to_string(out.faults.back().index) +
                        ", " + out.faults.back().reason + ")";
    n.cordon = CordonHolder::kRule;
    n.cordon_since = now;
  }
  return out;
}

HealthOutcome SettleHealth(NodeHealth& n, Time now, const HealthPolicy& policy) {
  HealthOutcome out;
  for (auto it = n.history.probation.begin(); it != n.history.probation.end();) {
    if (now - it->second < policy.clean_window) {
      ++it;
      continue;
    }
    if (auto d = n.devices.find(it->first); d != n.devices.end()) d->second = DeviceHealth::kHealthy;
    out.recovered.push_back(it->first);
    it = n.history.probation.erase(it);
  }
  if (n.cordon == CordonHolder::kRule && n.history.probation.empty()) {
    bool all_healthy = std::all_of(n.devices.begin(), n.devices.end(),
                                   [](const auto& d) { return d.second == DeviceHealth::kHealthy; });
    if (all_healthy && now - LastFaultOrCordon(n) >= policy.clean_window) {
      n.cordon = CordonHolder::kNone;
      n.cordon_since = Time{};
      out.uncordoned = true;
    }
  }
  Forget(n, now, policy);
  return out;
}

void ClearHealthOnUncordon(NodeHealth& n) {
  for (const auto& [index, since] : n.history.probation) {
    if (auto d = n.devices.find(index); d != n.devices.end()) d->second = DeviceHealth::kHealthy;
  }
  n.history = HealthHistory{};
}

Time NextHealthDeadline(const NodeHealth& n, const HealthPolicy& policy) {
  Time next{};
  auto consider = [&](Time t) {
    if (ToMicros(next) == 0 || t < next) next = t;
  };
  for (const auto& [index, since] : n.history.probation) consider(since + policy.clean_window);
  if (n.cordon == CordonHolder::kRule) consider(LastFaultOrCordon(n) + policy.clean_window);
  return next;
}

NodeHealth HealthOfSnapshotNode(const NodeInfo& node) {
  NodeHealth h;
  for (const auto& d : node.devices) h.devices[d.index] = d.healthy ? DeviceHealth::kHealthy : DeviceHealth::kUnhealthy;
  h.cordon = node.state == NodeState::kReady || node.state == NodeState::kNotReady ? CordonHolder::kNone
                                                                                     : CordonHolder::kOther;
  return h;
}

}  // namespace abacus::sched
