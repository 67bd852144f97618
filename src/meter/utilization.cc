#include "meter/utilization.h"

#include <algorithm>

namespace abacus::meter {
namespace {

std::string Key(const std::string& node, int device) { return node + "#" + std::to_string(device); }

}  // namespace

UtilizationIndex::UtilizationIndex(std::span<const UtilizationSample> samples, Duration max_gap)
    : max_gap_(max_gap) {
  for (const auto& s : samples) series_[Key(s.node, s.device)].emplace_back(ToMicros(s.time), s.ratio);
  for (auto& [key, series] : series_) {
    std::stable_sort(series.begin(), series.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
  }
}

const UtilizationIndex::Series* UtilizationIndex::Find(const std::string& node, int device) const {
  auto it = series_.find(Key(node, device));
  return it == series_.end() ? nullptr : &it->second;
}

IntervalUtilization Measure(const UtilizationIndex& index, const UsageInterval& iv, Time a, Time b,
                            double threshold, Pricer* pricer) {
  IntervalUtilization u;
  if (iv.devices.empty() || iv.device_milli <= 0 || a >= b) return u;
  const auto n = static_cast<ResourceTime>(iv.devices.size());
  ResourceTime measured = 0, idle = 0;
  int64_t idle_cost = 0;
  for (int device : iv.devices) {
    index.ForEachSpan(iv.node, device, a, b, [&](Time from, Time to, double ratio) {
      ResourceTime amount = static_cast<ResourceTime>(iv.device_milli) * (to - from).count();
      measured += amount;
      u.busy += ratio * static_cast<double>(amount) / static_cast<double>(n);
      if (ratio < threshold) {
        idle += amount;
        if (pricer) idle_cost += pricer->DeviceCost(iv.flavor, iv.device_milli, from, to);
      }
    });
  }
  u.measured = RoundDiv(measured, n);
  u.idle = RoundDiv(idle, n);
  u.idle_cost = static_cast<int64_t>(RoundDiv(idle_cost, n));
  return u;
}

}  // namespace abacus::meter
