// Percentile of latency samples, as the benchmarks print them (nearest rank on sorted samples).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace abacus {

// Returns the `p` (0..1) percentile of `v` by nearest rank, 0 when `v` is empty.
inline double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace abacus
