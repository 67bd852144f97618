// AgentTelemetry: what the agents last said that is kept in memory only (issue 22.1, one room
// of the control plane): when each node's agent was last heard, each device's utilization now
// and its samples (one a minute, a week of them: the idle report and experiments' idle
// detection), and the autoscaling metrics an inference service's replicas reported (two minutes
// of them). Thread-safe: agents' requests write, the loop and readers read.
//
//   telemetry.Heard("gpu-a", now);
//   telemetry.ReportUtilization("gpu-a", 0, 0.5, now);
//   for (const auto& name : telemetry.Silent(ready_agent_nodes, now, timeout)) ...
#pragma once

#include <deque>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "control/view.h"
#include "meter/report_inputs.h"

namespace abacus::server {

class AgentTelemetry {
 public:
  using Utilization = std::map<std::string, std::map<int, double>>;  // node → device index → 0..1

  // `node`'s agent was heard at `now` (any request it made).
  void Heard(const std::string& node, Time now);
  // When each node's agent was last heard.
  std::unordered_map<std::string, Time> LastHeard() const;
  // When `node`'s agent was last heard since this server started; nullopt: not since.
  std::optional<Time> HeardAt(const std::string& node) const;
  // Of `nodes` (ready nodes with an agent), those not heard for longer than `timeout`; a node
  // never heard since this server started counts as heard at `now` (a full timeout from start).
  std::vector<std::string> Silent(const std::vector<std::string>& nodes, Time now, Duration timeout);

  // `node`'s device `device` reported `ratio` at `now`: its utilization now, and a sample for the
  // idle report (one a minute, and each change of more than 5 points; a week of them).
  void ReportUtilization(const std::string& node, int device, double ratio, Time now);
  // Every device's last reported utilization.
  Utilization DeviceUtilization() const;
  // The samples in [from, to) of every device (to: none given, all since `from`).
  std::vector<meter::UtilizationSample> Samples(Time from, Time to) const;
  // The samples (time, ratio) of one device since `from`.
  std::vector<std::pair<Time, double>> SamplesOf(const std::string& node, int device, Time from) const;

  // Keeps `samples` of workload `id` (the last two minutes, at most 10,000); `now` ends the window.
  void AddMetrics(const std::string& id, std::vector<control::MetricSample> samples, Time now);
  // The kept metric samples of workload `id`, oldest first.
  std::vector<control::MetricSample> MetricsOf(const std::string& id) const;

 private:
  mutable Mutex mu_;
  std::unordered_map<std::string, Time> last_heard_ GUARDED_BY(mu_);
  Utilization utilization_ GUARDED_BY(mu_);
  std::map<std::string, std::map<int, std::deque<std::pair<Time, double>>>> samples_ GUARDED_BY(mu_);
  std::map<std::string, std::deque<control::MetricSample>> metrics_ GUARDED_BY(mu_);
};

}  // namespace abacus::server
