// UtilizationIndex: device utilization samples by device, so a report can ask how long a
// device was measured, and at what ratio, over a period. A sample holds from its time until
// the device's next sample, and at most `max_gap`; beyond that the device is unmeasured.
#pragma once

#include <algorithm>
#include <iterator>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "meter/price_list.h"
#include "meter/report_inputs.h"
#include "meter/units.h"
#include "meter/usage.h"

namespace abacus::meter {

class UtilizationIndex {
 public:
  // Indexes `samples` (any order).
  UtilizationIndex(std::span<const UtilizationSample> samples, Duration max_gap);

  // Calls f(from, to, ratio) for each measured span of device `device` on `node` that overlaps
  // [a, b), clipped to it, in time order.
  template <typename F>
  void ForEachSpan(const std::string& node, int device, Time a, Time b, F&& f) const {
    const auto* series = Find(node, device);
    if (series == nullptr || a >= b) return;
    // 1) Start at the last sample at or before a (it may cover a).
    auto it = std::upper_bound(series->begin(), series->end(), ToMicros(a),
                               [](int64_t t, const auto& s) { return t < s.first; });
    if (it != series->begin()) --it;
    // 2) Walk the samples until they start at or after b.
    for (; it != series->end() && it->first < ToMicros(b); ++it) {
      int64_t from = it->first;
      int64_t to = from + max_gap_.count();
      if (auto next = std::next(it); next != series->end()) to = std::min(to, next->first);
      from = std::max(from, ToMicros(a));
      to = std::min(to, ToMicros(b));
      if (from < to) f(FromMicros(from), FromMicros(to), it->second);
    }
  }

 private:
  using Series = std::vector<std::pair<int64_t, double>>;  // (time us, ratio), by time
  const Series* Find(const std::string& node, int device) const;

  Duration max_gap_;
  std::unordered_map<std::string, Series> series_;  // "node#device"
};

// How an interval's devices were used over a period, in milli-devices × us.
struct IntervalUtilization {
  ResourceTime measured = 0;  // covered by samples
  ResourceTime idle = 0;      // covered by samples below the threshold
  double busy = 0;            // sum of ratio × measured amount (for a weighted mean)
  int64_t idle_cost = 0;      // device cost of the idle part (0 without a pricer)
};

// Measures `iv` over [a, b): each of its listed devices holds an equal part of its
// milli-devices; an interval without devices is unmeasured.
IntervalUtilization Measure(const UtilizationIndex& index, const UsageInterval& iv, Time a, Time b,
                            double threshold, Pricer* pricer);

}  // namespace abacus::meter
