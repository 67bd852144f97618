#include "sched/fair_share.h"

#include <cmath>
#include <cstdio>

#include "sched/scheduler.h"

namespace abacus::sched {
namespace {

double Seconds(Duration d) { return static_cast<double>(d.count()) / 1e6; }

}  // namespace

void UsageHistory::Advance(Account& a, Time t) const {
  if (!a.started) {
    a.at = t;
    a.started = true;
    return;
  }
  if (t <= a.at) return;
  const double dt = Seconds(t - a.at);
  a.raw += a.devices * dt;
  const double h = Seconds(half_life_);
  if (h > 0) {
    // Decayed usage of a constant hold over the last dt: ∫0..dt 2^(-s/h) ds = h/ln2 (1 - 2^(-dt/h)).
    a.decayed = a.decayed * std::exp2(-dt / h) + a.devices * (-std::expm1(-dt * M_LN2 / h) * h / M_LN2);
  } else {
    a.decayed = 0;
  }
  a.at = t;
}

void UsageHistory::Backfill(Account& a, double devices, Time from) const {
  const double span = Seconds(a.at - from);
  if (span <= 0) return;
  a.raw += devices * span;
  const double h = Seconds(half_life_);
  if (h > 0) a.decayed += devices * (-std::expm1(-span * M_LN2 / h) * h / M_LN2);
}

UsageHistory::Account& UsageHistory::At(const std::string& queue, FlavorId flavor, Time t) {
  std::vector<Account>& v = queues_[queue];
  if (v.size() <= flavor) v.resize(static_cast<size_t>(flavor) + 1);
  Account& a = v[flavor];
  Advance(a, t);
  return a;
}

void UsageHistory::Start(const std::string& queue, FlavorId flavor, int64_t device_milli, Time start) {
  if (device_milli <= 0) return;
  const double d = static_cast<double>(device_milli) / 1000.0;
  Account& a = At(queue, flavor, start);
  Backfill(a, d, start);
  a.devices += d;
}

void UsageHistory::Stop(const std::string& queue, FlavorId flavor, int64_t device_milli, Time end) {
  if (device_milli <= 0) return;
  const double d = static_cast<double>(device_milli) / 1000.0;
  Account& a = At(queue, flavor, end);
  Backfill(a, -d, end);
  a.devices -= d;
  if (std::abs(a.devices) < 1e-9) a.devices = 0;
}

void UsageHistory::Add(const std::string& queue, FlavorId flavor, int64_t device_milli, Time start, Time end) {
  if (end <= start) return;
  Start(queue, flavor, device_milli, start);
  Stop(queue, flavor, device_milli, end);
}

std::map<FlavorId, FlavorUsage> UsageHistory::Usage(const std::string& queue, Time now) const {
  std::map<FlavorId, FlavorUsage> out;
  auto it = queues_.find(queue);
  if (it == queues_.end()) return out;
  for (size_t f = 0; f < it->second.size(); ++f) {
    Account a = it->second[f];
    if (!a.started) continue;
    Advance(a, now);
    out[static_cast<FlavorId>(f)] = {a.raw, a.decayed};
  }
  return out;
}

std::vector<QueueShare> ComputeShares(const std::vector<QueueInfo>& queues, const std::vector<CohortInfo>& cohorts,
                                      const std::map<FlavorId, int64_t>& flavor_weight_milli,
                                      const UsageHistory& history, Time now) {
  std::vector<QueueShare> out(queues.size());
  // Sibling groups: by cohort; each queue without a cohort is a group of its own.
  std::vector<double> group_weight(cohorts.size() + queues.size(), 0), group_usage(cohorts.size() + queues.size(), 0);
  auto group = [&](size_t q) {
    CohortIndex c = queues[q].cohort;
    return c >= 0 && static_cast<size_t>(c) < cohorts.size() ? static_cast<size_t>(c) : cohorts.size() + q;
  };
  for (size_t q = 0; q < queues.size(); ++q) {
    QueueShare& s = out[q];
    s.queue = queues[q].name;
    CohortIndex c = queues[q].cohort;
    if (c >= 0 && static_cast<size_t>(c) < cohorts.size()) s.cohort = cohorts[c].name;
    s.weight_milli = std::max<int64_t>(1, queues[q].weight_milli);
    for (const auto& [f, u] : history.Usage(queues[q].name, now)) {
      if (f == kCpuFlavorId) continue;
      auto w = flavor_weight_milli.find(f);
      const double weight = static_cast<double>(w == flavor_weight_milli.end() ? 1000 : w->second) / 1000.0;
      s.raw_usage += u.raw * weight;
      s.decayed_usage += u.decayed * weight;
    }
    group_weight[group(q)] += static_cast<double>(s.weight_milli);
    group_usage[group(q)] += s.decayed_usage;
  }
  for (size_t q = 0; q < queues.size(); ++q) {
    QueueShare& s = out[q];
    s.share = static_cast<double>(s.weight_milli) / group_weight[group(q)];
    const double total = group_usage[group(q)];
    s.usage_norm = total > 0 ? s.decayed_usage / total : 0;
    s.factor = std::exp2(-s.usage_norm / s.share);
  }
  return out;
}

namespace {

std::map<FlavorId, int64_t> HeldMilli(const WorkloadInfo& w) {
  std::map<FlavorId, int64_t> held;
  for (const TaskPlacement& p : w.placements) {
    FlavorId f = p.group >= 0 && static_cast<size_t>(p.group) < w.group_flavors.size() ? w.group_flavors[p.group] : kCpuFlavorId;
    if (f == kCpuFlavorId) continue;
    for (const DeviceGrant& g : p.devices) held[f] += g.milli;
  }
  return held;
}

}  // namespace

void StartWorkload(UsageHistory& history, const std::string& queue, const WorkloadInfo& w, Time at) {
  for (const auto& [f, milli] : HeldMilli(w)) history.Start(queue, f, milli, at);
}

void StopWorkload(UsageHistory& history, const std::string& queue, const WorkloadInfo& w, Time at) {
  for (const auto& [f, milli] : HeldMilli(w)) history.Stop(queue, f, milli, at);
}

void SetFairShare(const UsageHistory& history, Snapshot* snapshot) {
  if (history.half_life().count() <= 0) {
    snapshot->fair_share.clear();
    return;
  }
  snapshot->fair_share =
      ComputeShares(snapshot->queues, snapshot->cohorts, snapshot->flavor_weight_milli, history, snapshot->now);
}

std::string DeviceHoursText(double device_seconds) {
  const double h = device_seconds / 3600.0;
  char buf[64];
  if (h >= 100 || std::abs(h - std::round(h)) < 0.05) {
    std::snprintf(buf, sizeof buf, "%.0f", std::round(h));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f", h);
  }
  return buf;
}

}  // namespace abacus::sched
