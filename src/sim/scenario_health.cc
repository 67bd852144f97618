// Device health in scenarios (docs/scenarios.md "Device health"): `fault`, `recover` and
// `uncordon` steps, and time passing, run the server's health rule (sched/health_rule.h) over
// the snapshot's nodes, and the runner fails work over as the server does: a workload with a task
// on a device that is no longer healthy goes back to pending.
#include <algorithm>

#include "common/duration_parse.h"
#include "sched/health_rule.h"
#include "sim/scenario.h"
#include "sim/scenario_render.h"
#include "sim/scenario_text.h"

namespace abacus::sim {

using sched::WorkloadInfo;

sched::NodeHealth& ScenarioRunner::HealthOf(int32_t node) {
  auto it = health_.find(node);
  if (it == health_.end()) it = health_.emplace(node, sched::HealthOfSnapshotNode(state_.nodes[node])).first;
  return it->second;
}

void ScenarioRunner::ApplyHealth(int32_t node, const sched::HealthOutcome& outcome, int line) {
  sched::NodeInfo& n = state_.nodes[node];
  const sched::NodeHealth& h = health_.at(node);
  for (auto& d : n.devices) {
    if (auto it = h.devices.find(d.index); it != h.devices.end()) d.healthy = it->second == DeviceHealth::kHealthy;
  }
  if (outcome.cordoned) n.state = NodeState::kCordoned;
  if (outcome.uncordoned) n.state = NodeState::kReady;
  if (trace_ && outcome.changed()) {
    std::string text = Where(line) + ": health of " + n.name + " at " + FormatDurationSpec(state_.now - ScenarioEpoch());
    for (const auto& f : outcome.faults) text += "\n  device " + std::to_string(f.index) + " fault: " + f.reason;
    for (int32_t i : outcome.recovering) text += "\n  device " + std::to_string(i) + " on probation";
    for (int32_t i : outcome.recovered) text += "\n  device " + std::to_string(i) + " back in service";
    if (outcome.cordoned) text += "\n  cordoned by " + std::string(sched::kHealthRule) + ": " + outcome.cordon_reason;
    if (outcome.uncordoned) text += "\n  uncordoned: no fault for the clean window";
    outcome_.trace.push_back(text + "\n");
  }
  RequeueOffBadDevices(node);
}

void ScenarioRunner::RequeueOffBadDevices(int32_t node) {
  const sched::NodeInfo& n = state_.nodes[node];
  for (auto& w : state_.workloads) {
    if (!w.admitted) continue;
    bool hit = std::any_of(w.placements.begin(), w.placements.end(), [&](const sched::TaskPlacement& p) {
      return p.node == node && std::any_of(p.devices.begin(), p.devices.end(), [&](const sched::DeviceGrant& g) {
               return !n.devices[g.device].healthy;
             });
    });
    if (hit) Requeue(w);
  }
}

void ScenarioRunner::ReportHealth(const ScenarioStep& step) {
  int32_t node = -1;
  for (size_t i = 0; i < state_.nodes.size(); ++i) {
    if (state_.nodes[i].name == step.node) node = static_cast<int32_t>(i);
  }
  if (node < 0) return Fail(step.line, "no node " + step.node);
  sched::DeviceHealthReport report;
  report.health = step.kind == ScenarioStep::Kind::kFault ? DeviceHealth::kUnhealthy : DeviceHealth::kHealthy;
  report.reason = step.reason;
  sched::HealthOutcome outcome =
      sched::ApplyHealthReports(HealthOf(node), {{step.device, report}}, state_.now, scenario_.health);
  ApplyHealth(node, outcome, step.line);
}

void ScenarioRunner::Uncordon(const ScenarioStep& step) {
  for (size_t i = 0; i < state_.nodes.size(); ++i) {
    if (state_.nodes[i].name != step.node) continue;
    const int32_t node = static_cast<int32_t>(i);
    sched::NodeHealth& h = HealthOf(node);
    sched::ClearHealthOnUncordon(h);
    h.cordon = sched::CordonHolder::kNone;
    h.cordon_since = Time{};
    state_.nodes[i].state = NodeState::kReady;
    ApplyHealth(node, sched::HealthOutcome{}, step.line);
    return;
  }
  Fail(step.line, "no node " + step.node);
}

void ScenarioRunner::SettleHealth(int line) {
  for (auto& [node, h] : health_) {
    Time due = sched::NextHealthDeadline(h, scenario_.health);
    if (ToMicros(due) == 0 || due > state_.now) continue;
    sched::HealthOutcome outcome = sched::SettleHealth(h, state_.now, scenario_.health);
    if (outcome.changed()) ApplyHealth(node, outcome, line);
  }
}

void ScenarioRunner::Requeue(WorkloadInfo& w) {
  if (w.admitted) Hold(w, false);
  w.admitted = false;
  w.evicting = false;
  w.placements.clear();
  w.group_flavors.clear();
}

}  // namespace abacus::sim
