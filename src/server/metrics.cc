#include "server/metrics.h"

#include <cstdio>
#include <string_view>

#include "common/mutex.h"

namespace abacus::server {

Histogram::Histogram(std::span<const double> bounds)
    : bounds_(bounds.begin(), bounds.end()), buckets_(bounds.size() + 1) {}

void Histogram::Observe(double seconds) {
  size_t i = 0;
  while (i < bounds_.size() && seconds > bounds_[i]) ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  count_.fetch_add(1, std::memory_order_relaxed);
  sum_micros_.fetch_add(static_cast<int64_t>(seconds * 1e6), std::memory_order_relaxed);
}

void Histogram::Render(const std::string& name, const std::string& help, std::string& out) const {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
  RenderSamples(name, "", out);
}

void Histogram::RenderSamples(const std::string& name, const std::string& labels, std::string& out) const {
  std::string prefix = labels.empty() ? "" : labels + ",";
  int64_t cumulative = 0;
  char buf[64];
  for (size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    std::snprintf(buf, sizeof(buf), "%g", bounds_[i]);
    out += name + "_bucket{" + prefix + "le=\"" + buf + "\"} " + std::to_string(cumulative) + "\n";
  }
  cumulative += buckets_[bounds_.size()].load(std::memory_order_relaxed);
  out += name + "_bucket{" + prefix + "le=\"+Inf\"} " + std::to_string(cumulative) + "\n";
  std::snprintf(buf, sizeof(buf), "%.6f", static_cast<double>(sum_micros_.load()) / 1e6);
  std::string braces = labels.empty() ? "" : "{" + labels + "}";
  out += name + "_sum" + braces + " " + buf + "\n";
  out += name + "_count" + braces + " " + std::to_string(cumulative) + "\n";
}

void LabeledMetrics::ObserveWait(const std::string& queue, double seconds) {
  MutexLock lock(mu_);
  auto& h = wait_by_queue_[queue];
  if (!h) h = std::make_unique<Histogram>(Histogram::kWaitBounds);
  h->Observe(seconds);
}

void LabeledMetrics::CountPreemption(const std::string& reason) {
  MutexLock lock(mu_);
  preemptions_by_reason_[reason]++;
}

void LabeledMetrics::CountDeviceFault(const std::string& cluster, const std::string& pool, const std::string& flavor) {
  MutexLock lock(mu_);
  device_faults_[{cluster, pool, flavor}]++;
}

void LabeledMetrics::CountEviction(const std::string& reason) {
  MutexLock lock(mu_);
  evictions_by_reason_[reason]++;
}

void LabeledMetrics::CountControllerAction(const std::string& kind, const std::string& action) {
  MutexLock lock(mu_);
  controller_actions_[{kind, action}]++;
}

void LabeledMetrics::CountAdmissionAttempts(const std::string& result, const std::string& reason, int64_t n) {
  if (n <= 0) return;
  MutexLock lock(mu_);
  admission_attempts_[{result, reason}] += n;
}

void StagedActions::Settle(bool committed, LabeledMetrics& m) {
  if (committed) {
    for (const auto& [kind, action] : actions) m.CountControllerAction(kind, action);
    for (const auto& reason : evictions) m.CountEviction(reason);
  }
  actions.clear();
  evictions.clear();
}

void LabeledMetrics::Render(std::string& out) const {
  MutexLock lock(mu_);
  out += "# HELP abacus_queue_admission_wait_seconds Time from submission to admission, per queue.\n"
         "# TYPE abacus_queue_admission_wait_seconds histogram\n";
  for (const auto& [queue, h] : wait_by_queue_) {
    h->RenderSamples("abacus_queue_admission_wait_seconds", "queue=\"" + EscapeLabel(queue) + "\"", out);
  }
  out += "# HELP abacus_preemptions_total Preemptions committed, per reason.\n# TYPE abacus_preemptions_total counter\n";
  for (const auto& [reason, n] : preemptions_by_reason_) {
    out += "abacus_preemptions_total{reason=\"" + EscapeLabel(reason) + "\"} " + std::to_string(n) + "\n";
  }
  out += "# HELP abacus_device_faults_total Devices their agents reported unhealthy (Healthy to Unhealthy), per "
         "cluster, pool and flavor.\n# TYPE abacus_device_faults_total counter\n";
  for (const auto& [key, n] : device_faults_) {
    const auto& [cluster, pool, flavor] = key;
    out += "abacus_device_faults_total{cluster=\"" + EscapeLabel(cluster) + "\",pool=\"" + EscapeLabel(pool) +
           "\",flavor=\"" + EscapeLabel(flavor) + "\"} " + std::to_string(n) + "\n";
  }
  out += "# HELP abacus_evictions_total Workloads whose tasks were stopped and requeued, per reason.\n"
         "# TYPE abacus_evictions_total counter\n";
  for (const auto& [reason, n] : evictions_by_reason_) {
    out += "abacus_evictions_total{reason=\"" + EscapeLabel(reason) + "\"} " + std::to_string(n) + "\n";
  }
  out += "# HELP abacus_controller_actions_total Actions the workload controllers committed, per kind and action.\n"
         "# TYPE abacus_controller_actions_total counter\n";
  for (const auto& [key, n] : controller_actions_) {
    out += "abacus_controller_actions_total{kind=\"" + EscapeLabel(key.first) + "\",action=\"" + EscapeLabel(key.second) +
           "\"} " + std::to_string(n) + "\n";
  }
  out += "# HELP abacus_admission_attempts_total Workloads a scheduling cycle tried, per result and pending reason.\n"
         "# TYPE abacus_admission_attempts_total counter\n";
  for (const auto& [key, n] : admission_attempts_) {
    out += "abacus_admission_attempts_total{result=\"" + EscapeLabel(key.first) + "\",reason=\"" +
           EscapeLabel(key.second) + "\"} " + std::to_string(n) + "\n";
  }
}

std::string EscapeLabel(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

namespace {

bool Word(std::string_view s) {
  if (s.empty() || s.size() > 32) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || c == '-')) return false;
  }
  return true;
}

}  // namespace

std::string RouteTemplate(const std::string& path, int status) {
  if (status == 404) return "unmatched";
  if (path == "/healthz" || path == "/readyz" || path == "/metrics" || path == "/") return path;
  if (path.rfind("/ui", 0) == 0) return "/ui";
  if (path.rfind("/api/v1/", 0) != 0) return "unmatched";
  std::string out = "/api/v1";
  size_t pos = 8;
  for (int i = 0; pos <= path.size(); ++i) {
    size_t end = path.find('/', pos);
    std::string_view part(path.data() + pos, (end == std::string::npos ? path.size() : end) - pos);
    if (i % 2 == 0) {
      if (!Word(part)) return "unmatched";  // a collection or sub-resource is a lower-case word
      out += "/" + std::string(part);
    } else {
      out += "/{name}";
    }
    if (end == std::string::npos || i >= 6) break;
    pos = end + 1;
  }
  return out;
}

void RequestCounter::Count(const std::string& path, int status) {
  std::string route = RouteTemplate(path, status);
  MutexLock lock(mu_);
  counts_[{std::move(route), status}]++;
}

void RequestCounter::Render(std::string& out) const {
  out += "# HELP abacus_http_requests_total HTTP requests answered, by route template and status code.\n"
         "# TYPE abacus_http_requests_total counter\n";
  MutexLock lock(mu_);
  for (const auto& [key, n] : counts_) {
    out += "abacus_http_requests_total{route=\"" + EscapeLabel(key.first) + "\",code=\"" + std::to_string(key.second) +
           "\"} " + std::to_string(n) + "\n";
  }
}

}  // namespace abacus::server
