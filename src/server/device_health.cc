#include "server/device_health.h"

#include <algorithm>

namespace abacus::server {
namespace {

void Forget(NodeRecord& n, Time now, const HealthPolicy& policy) {
  auto& f = n.health.faults;
  f.erase(std::remove_if(f.begin(), f.end(), [&](const DeviceFaultRecord& x) { return now - x.at >= policy.window; }),
          f.end());
  // Bounded whatever the window: the newest 64 are plenty to decide and to show.
  if (f.size() > 64) f.erase(f.begin(), f.end() - 64);
}

std::string WindowText(Duration d) {
  auto h = std::chrono::duration_cast<std::chrono::hours>(d).count();
  if (h > 0 && d == std::chrono::hours(h)) return std::to_string(h) + "h";
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(d).count()) + "s";
}

}  // namespace

HealthOutcome ApplyHealthReports(NodeRecord& n, const std::map<int32_t, DeviceHealthReport>& reports, Time now,
                                 const HealthPolicy& policy) {
  HealthOutcome out;
  Forget(n, now, policy);
  for (const auto& [index, report] : reports) {
    Device* d = n.node.FindDevice(index);
    if (d == nullptr) continue;
    const bool on_probation = n.health.probation.count(index) != 0;
    switch (report.health) {
      case DeviceHealth::kUnhealthy:
        if (d->health == DeviceHealth::kHealthy || on_probation) {
          DeviceFaultRecord f{index, now, report.reason.empty() ? "reported unhealthy by its agent" : report.reason};
          n.health.faults.push_back(f);
          n.health.probation.erase(index);
          out.faults.push_back(std::move(f));
        } else if (d->health != DeviceHealth::kUnhealthy) {
          out.other.push_back(index);
        }
        d->health = DeviceHealth::kUnhealthy;
        break;
      case DeviceHealth::kHealthy:
        if (d->health == DeviceHealth::kHealthy || on_probation) break;
        if (policy.clean_window > Duration::zero()) {
          n.health.probation[index] = now;
          out.recovering.push_back(index);
        } else {
          d->health = DeviceHealth::kHealthy;
          out.recovered.push_back(index);
        }
        break;
      case DeviceHealth::kUnknown:
        if (d->health != DeviceHealth::kUnknown) out.other.push_back(index);
        n.health.probation.erase(index);
        d->health = DeviceHealth::kUnknown;
        break;
    }
  }
  if (!out.faults.empty() && policy.cordon_after > 0 &&
      static_cast<int32_t>(n.health.faults.size()) >= policy.cordon_after && n.cordon.state == NodeState::kReady) {
    out.cordoned = true;
    out.cordon_reason = std::to_string(n.health.faults.size()) + " device fault(s) within " +
                        WindowText(policy.window) + " (the last: device " + std::to_string(out.faults.back().index) +
                        ", " + out.faults.back().reason + ")";
    n.cordon = NodeCordonRecord{NodeState::kCordoned, now, Time{}, false, kHealthRule, out.cordon_reason};
  }
  return out;
}

HealthOutcome SettleHealth(NodeRecord& n, Time now, const HealthPolicy& policy) {
  HealthOutcome out;
  for (auto it = n.health.probation.begin(); it != n.health.probation.end();) {
    if (now - it->second < policy.clean_window) {
      ++it;
      continue;
    }
    if (Device* d = n.node.FindDevice(it->first)) d->health = DeviceHealth::kHealthy;
    out.recovered.push_back(it->first);
    it = n.health.probation.erase(it);
  }
  if (n.cordon.state == NodeState::kCordoned && n.cordon.by == kHealthRule && n.health.probation.empty()) {
    Time last = n.cordon.since;
    for (const auto& f : n.health.faults) last = std::max(last, f.at);
    bool all_healthy = std::all_of(n.node.devices.begin(), n.node.devices.end(),
                                   [](const Device& d) { return d.health == DeviceHealth::kHealthy; });
    if (all_healthy && now - last >= policy.clean_window) {
      n.cordon = NodeCordonRecord{};
      out.uncordoned = true;
    }
  }
  Forget(n, now, policy);
  return out;
}

void ClearHealthOnUncordon(NodeRecord& n) {
  for (const auto& [index, since] : n.health.probation) {
    if (Device* d = n.node.FindDevice(index)) d->health = DeviceHealth::kHealthy;
  }
  n.health = NodeHealthRecord{};
}

Time NextHealthDeadline(const NodeRecord& n, const HealthPolicy& policy) {
  Time next{};
  auto consider = [&](Time t) {
    if (ToMicros(next) == 0 || t < next) next = t;
  };
  for (const auto& [index, since] : n.health.probation) consider(since + policy.clean_window);
  if (n.cordon.state == NodeState::kCordoned && n.cordon.by == kHealthRule) {
    Time last = n.cordon.since;
    for (const auto& f : n.health.faults) last = std::max(last, f.at);
    consider(last + policy.clean_window);
  }
  return next;
}

}  // namespace abacus::server
