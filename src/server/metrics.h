// Hand-written Prometheus metrics of the server (text format 0.0.4): counters and fixed-bucket
// histograms, safe to update from any thread. Labels stay bounded: queue, tenant, flavor, node,
// reason, kind, result — never workload ids.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "common/mutex.h"

namespace abacus::server {

// A histogram in seconds with fixed buckets.
class Histogram {
 public:
  // Latencies: 100 µs to 10 s.
  static constexpr std::array<double, 14> kLatencyBounds = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                            0.025,  0.05,    0.1,    0.25,  0.5,    1.0,  10.0};
  // Queue waits: 1 s to a day.
  static constexpr std::array<double, 12> kWaitBounds = {1, 5, 10, 30, 60, 300, 900, 1800, 3600, 14400, 43200, 86400};

  explicit Histogram(std::span<const double> bounds = kLatencyBounds);
  void Observe(double seconds);
  // Appends HELP, TYPE and the _bucket/_sum/_count lines of `name`.
  void Render(const std::string& name, const std::string& help, std::string& out) const;
  // Appends only the sample lines, with `labels` (`queue="q"`) before `le`.
  void RenderSamples(const std::string& name, const std::string& labels, std::string& out) const;

 private:
  std::vector<double> bounds_;
  std::vector<std::atomic<int64_t>> buckets_;
  std::atomic<int64_t> count_{0};
  std::atomic<int64_t> sum_micros_{0};
};

// Histograms and counters keyed by one bounded label value.
class LabeledMetrics {
 public:
  void ObserveWait(const std::string& queue, double seconds);
  void CountPreemption(const std::string& reason);
  // Counts one device fault an agent reported (abacus_device_faults_total{cluster,pool,flavor}).
  void CountDeviceFault(const std::string& cluster, const std::string& pool, const std::string& flavor);
  // Counts one committed requeue of a workload's tasks (abacus_evictions_total{reason}).
  void CountEviction(const std::string& reason);
  // Counts one committed controller action (abacus_controller_actions_total{kind,action}).
  void CountControllerAction(const std::string& kind, const std::string& action);
  // Counts `n` admission attempts of one cycle that ended in `result` (admitted or inadmissible)
  // with pending reason `reason` ("" when admitted).
  void CountAdmissionAttempts(const std::string& result, const std::string& reason, int64_t n);
  // Appends the abacus_queue_admission_wait_seconds, abacus_preemptions_total,
  // abacus_evictions_total, abacus_controller_actions_total and abacus_admission_attempts_total
  // families.
  void Render(std::string& out) const;

 private:
  mutable Mutex mu_;
  std::map<std::string, std::unique_ptr<Histogram>> wait_by_queue_ GUARDED_BY(mu_);
  std::map<std::string, int64_t> preemptions_by_reason_ GUARDED_BY(mu_);
  std::map<std::string, int64_t> evictions_by_reason_ GUARDED_BY(mu_);
  std::map<std::tuple<std::string, std::string, std::string>, int64_t> device_faults_ GUARDED_BY(mu_);
  std::map<std::pair<std::string, std::string>, int64_t> controller_actions_ GUARDED_BY(mu_);
  std::map<std::pair<std::string, std::string>, int64_t> admission_attempts_ GUARDED_BY(mu_);
};

// What the controllers decided in a working copy, counted only once its batch commits: the
// loop stages, then settles after the commit (ControlPlane::SettleActions).
struct StagedActions {
  std::vector<std::pair<std::string, std::string>> actions;  // (workload kind, action)
  std::vector<std::string> evictions;                        // requeue reasons
  bool empty() const { return actions.empty() && evictions.empty(); }
  // Counts everything staged into `m` when `committed`; forgets it either way.
  void Settle(bool committed, LabeledMetrics& m);
};

// HTTP requests answered, by route template and status code (abacus_http_requests_total).
class RequestCounter {
 public:
  // Counts one answer to `path` with `status`; the path becomes its route template.
  void Count(const std::string& path, int status);
  // Appends the abacus_http_requests_total family.
  void Render(std::string& out) const;

 private:
  mutable Mutex mu_;
  std::map<std::pair<std::string, int>, int64_t> counts_ GUARDED_BY(mu_);
};

// The route template of a request path, with bounded values: "/api/v1/workloads/{name}/logs".
// Object names become {name}; a 404 (no route, or no such object) and anything that does not
// look like an API path become "unmatched", so that scanners cannot grow the label set.
std::string RouteTemplate(const std::string& path, int status);

// Escapes a label value for the text format (backslash, double quote, newline).
std::string EscapeLabel(const std::string& value);

struct ServerMetrics {
  Histogram cycle_seconds;         // one scheduling cycle
  Histogram decision_seconds;      // submission to admission of a workload
  Histogram commit_seconds;        // one Committer::Commit from an HTTP thread or the loop
  Histogram request_seconds;       // HTTP request handling
  LabeledMetrics labeled;          // waits per queue, preemptions per reason
  RequestCounter requests;         // answers by route template and code
  std::atomic<int64_t> cycles{0};
  std::atomic<int64_t> submitted{0};
  std::atomic<int64_t> admitted{0};
  std::atomic<int64_t> preempted{0};
  std::atomic<int64_t> commit_failures{0};
  std::atomic<int64_t> rejected_busy{0};  // 429s
};

}  // namespace abacus::server
