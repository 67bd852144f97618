#include "server/agent_telemetry.h"

#include <chrono>
#include <cmath>

namespace abacus::server {

void AgentTelemetry::Heard(const std::string& node, Time now) {
  MutexLock lock(mu_);
  last_heard_[node] = now;
}

std::unordered_map<std::string, Time> AgentTelemetry::LastHeard() const {
  MutexLock lock(mu_);
  return last_heard_;
}

std::optional<Time> AgentTelemetry::HeardAt(const std::string& node) const {
  MutexLock lock(mu_);
  auto it = last_heard_.find(node);
  if (it == last_heard_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> AgentTelemetry::Silent(const std::vector<std::string>& nodes, Time now, Duration timeout) {
  std::vector<std::string> silent;
  MutexLock lock(mu_);
  for (const std::string& name : nodes) {
    auto [it, first_look] = last_heard_.try_emplace(name, now);
    if (!first_look && now - it->second > timeout) silent.push_back(name);
  }
  return silent;
}

void AgentTelemetry::ReportUtilization(const std::string& node, int device, double ratio, Time now) {
  MutexLock lock(mu_);
  utilization_[node][device] = ratio;
  auto& list = samples_[node][device];
  if (!list.empty() && now - list.back().first < std::chrono::minutes(1) && std::abs(list.back().second - ratio) < 0.05) {
    return;
  }
  list.emplace_back(now, ratio);
  while (list.size() > 7 * 24 * 60) list.pop_front();
}

AgentTelemetry::Utilization AgentTelemetry::DeviceUtilization() const {
  MutexLock lock(mu_);
  return utilization_;
}

std::vector<meter::UtilizationSample> AgentTelemetry::Samples(Time from, Time to) const {
  std::vector<meter::UtilizationSample> out;
  MutexLock lock(mu_);
  for (const auto& [node, devices] : samples_) {
    for (const auto& [index, list] : devices) {
      for (const auto& [t, ratio] : list) {
        if (t >= from && t < to) out.push_back({node, index, t, ratio});
      }
    }
  }
  return out;
}

std::vector<std::pair<Time, double>> AgentTelemetry::SamplesOf(const std::string& node, int device, Time from) const {
  std::vector<std::pair<Time, double>> out;
  MutexLock lock(mu_);
  auto n = samples_.find(node);
  if (n == samples_.end()) return out;
  auto d = n->second.find(device);
  if (d == n->second.end()) return out;
  for (const auto& sample : d->second) {
    if (sample.first >= from) out.push_back(sample);
  }
  return out;
}

void AgentTelemetry::AddMetrics(const std::string& id, std::vector<control::MetricSample> samples, Time now) {
  MutexLock lock(mu_);
  auto& kept = metrics_[id];
  for (auto& m : samples) kept.push_back(std::move(m));
  while (!kept.empty() && kept.front().time < now - std::chrono::minutes(2)) kept.pop_front();
  while (kept.size() > 10'000) kept.pop_front();
}

std::vector<control::MetricSample> AgentTelemetry::MetricsOf(const std::string& id) const {
  MutexLock lock(mu_);
  auto it = metrics_.find(id);
  if (it == metrics_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

}  // namespace abacus::server
