#include "server/metrics.h"

#include <cstdio>

namespace abacus::server {

void Histogram::Observe(double seconds) {
  size_t i = 0;
  while (i < kBounds.size() && seconds > kBounds[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_micros_.fetch_add(static_cast<int64_t>(seconds * 1e6), std::memory_order_relaxed);
}

void Histogram::Render(const std::string& name, const std::string& help, std::string& out) const {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
  int64_t cumulative = 0;
  char buf[64];
  for (size_t i = 0; i < kBounds.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    std::snprintf(buf, sizeof(buf), "%g", kBounds[i]);
    out += name + "_bucket{le=\"" + buf + "\"} " + std::to_string(cumulative) + "\n";
  }
  cumulative += buckets_[kBounds.size()].load(std::memory_order_relaxed);
  out += name + "_bucket{le=\"+Inf\"} " + std::to_string(cumulative) + "\n";
  std::snprintf(buf, sizeof(buf), "%.6f", static_cast<double>(sum_micros_.load()) / 1e6);
  out += name + "_sum " + buf + "\n";
  out += name + "_count " + std::to_string(count_.load(std::memory_order_relaxed)) + "\n";
}

}  // namespace abacus::server
