// Hand-written Prometheus metrics of the server: counters and fixed-bucket histograms, safe to
// update from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

namespace abacus::server {

// A latency histogram in seconds with fixed buckets from 100 µs to 10 s.
class Histogram {
 public:
  static constexpr std::array<double, 14> kBounds = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                     0.025,  0.05,    0.1,    0.25,  0.5,    1.0,  10.0};
  void Observe(double seconds);
  // Appends the _bucket/_sum/_count lines of `name` with HELP and TYPE.
  void Render(const std::string& name, const std::string& help, std::string& out) const;

 private:
  std::array<std::atomic<int64_t>, kBounds.size() + 1> buckets_{};
  std::atomic<int64_t> count_{0};
  std::atomic<int64_t> sum_micros_{0};
};

struct ServerMetrics {
  Histogram cycle_seconds;         // one scheduling cycle
  Histogram decision_seconds;      // submission to admission of a workload
  Histogram commit_seconds;        // one GroupCommitter::Submit from an HTTP thread or the loop
  Histogram request_seconds;       // HTTP request handling
  std::atomic<int64_t> cycles{0};
  std::atomic<int64_t> submitted{0};
  std::atomic<int64_t> admitted{0};
  std::atomic<int64_t> preempted{0};
  std::atomic<int64_t> commit_failures{0};
  std::atomic<int64_t> rejected_busy{0};  // 429s
};

}  // namespace abacus::server
