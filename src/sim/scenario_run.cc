#include "sim/scenario.h"
#include "sim/scenario_render.h"
#include "sim/scenario_text.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include "common/diagnostic.h"
#include "common/duration_parse.h"
#include "model/quantity.h"
#include "model/version.h"
#include "sched/apply_cycle.h"
#include "sched/cluster_state.h"
#include "sched/invariants.h"

namespace abacus::sim {

using sched::PendingCode;
using sched::PreemptionReason;
using sched::WorkloadInfo;
using namespace scenario_text;

// ------------------------------------------------------------------ runner

ScenarioRunner::ScenarioRunner(const Scenario& scenario, bool trace) : scenario_(scenario), trace_(trace) {
  state_ = scenario.cluster;
  state_.now = ScenarioEpoch();
  config_ = scenario.config;
}

ScenarioOutcome ScenarioRunner::RunAll() {
  while (Step()) {
  }
  return outcome_;
}

bool ScenarioRunner::Step() {
  if (next_ >= scenario_.steps.size()) return false;
  Run(scenario_.steps[next_++]);
  return true;
}

std::string ScenarioRunner::Where(int line) const { return scenario_.file + ":" + std::to_string(line); }

void ScenarioRunner::Fail(int line, const std::string& message) {
  outcome_.failures.push_back(Where(line) + ": " + message);
}

int32_t ScenarioRunner::Find(const std::string& name) const {
  for (size_t i = 0; i < state_.workloads.size(); ++i) {
    if (state_.workloads[i].id == name) return static_cast<int32_t>(i);
  }
  return -1;
}

void ScenarioRunner::Run(const ScenarioStep& step) {
  switch (step.kind) {
    case ScenarioStep::Kind::kSubmit: return Submit(step);
    case ScenarioStep::Kind::kRunning: return AddRunning(step);
    case ScenarioStep::Kind::kNow:
      state_.now = step.time;
      return SettleHealth(step.line);
    case ScenarioStep::Kind::kCycle: return RunCycle(step);
    case ScenarioStep::Kind::kFinish: return Stop(step, false);
    case ScenarioStep::Kind::kRequeue: return Stop(step, true);
    case ScenarioStep::Kind::kConfig:
      if (step.config.fair_share_half_life != config_.fair_share_half_life) {
        // A new half-life starts the history afresh from what runs now.
        history_ = sched::UsageHistory(step.config.fair_share_half_life);
        for (const auto& w : state_.workloads) {
          if (w.admitted) Hold(w, true);
        }
      }
      config_ = step.config;
      return;
    case ScenarioStep::Kind::kExpect: return Check(step);
    case ScenarioStep::Kind::kFault:
    case ScenarioStep::Kind::kRecover: return ReportHealth(step);
    case ScenarioStep::Kind::kUncordon: return Uncordon(step);
  }
}

void ScenarioRunner::Hold(const WorkloadInfo& w, bool start) {
  if (w.queue < 0 || static_cast<size_t>(w.queue) >= state_.queues.size()) return;
  const std::string& queue = state_.queues[w.queue].name;
  if (start) {
    sched::StartWorkload(history_, queue, w, ToMicros(w.admitted_at) != 0 ? w.admitted_at : state_.now);
  } else {
    sched::StopWorkload(history_, queue, w, state_.now);
  }
}

void ScenarioRunner::Submit(const ScenarioStep& step) {
  if (Find(step.workload.id) >= 0) return Fail(step.line, "workload " + step.workload.id + " already exists");
  state_.workloads.push_back(step.workload);
}

void ScenarioRunner::AddRunning(const ScenarioStep& step) {
  if (Find(step.workload.id) >= 0) return Fail(step.line, "workload " + step.workload.id + " already exists");
  if (step.workload.admitted) {
    // Explicit places: they must not collide with what is already held.
    sched::ClusterState cluster(state_.nodes);
    for (const auto& w : state_.workloads) {
      if (!w.admitted) continue;
      for (const auto& p : w.placements) cluster.Allocate(p);
    }
    for (const auto& p : step.workload.placements) {
      if (!cluster.CanAllocate(p)) {
        return Fail(step.line, "running " + step.workload.id + ": its place " + DescribePlacements(state_, {p}) +
                                   " is taken or too small");
      }
      cluster.Allocate(p);
    }
    state_.workloads.push_back(step.workload);
    Hold(state_.workloads.back(), true);
    return;
  }
  // No places given: a cycle of its own over what already runs places it (no preemption).
  sched::Snapshot alone = state_;
  alone.workloads.clear();
  for (const auto& w : state_.workloads) {
    if (w.admitted) alone.workloads.push_back(w);
  }
  alone.workloads.push_back(step.workload);
  sched::SchedulerConfig config = config_;
  config.enable_preemption = false;
  config.enable_gang_reservation = false;
  sched::CycleResult r = sched::Schedule(alone, config);
  if (r.admissions.empty()) {
    std::string why = r.pending.empty() ? "no decision" : sched::DescribePending(r.pending[0]);
    return Fail(step.line, "running " + step.workload.id + " could not be placed:\n" + Indent(why, "  "));
  }
  WorkloadInfo w = step.workload;
  w.admitted = true;
  w.group_flavors = r.admissions[0].group_flavors;
  w.placements = r.admissions[0].placements;
  state_.workloads.push_back(std::move(w));
  Hold(state_.workloads.back(), true);
}

void ScenarioRunner::RunCycle(const ScenarioStep& step) {
  sched::SetFairShare(history_, &state_);
  last_ = sched::Schedule(state_, config_);
  cycled_ = true;
  ++outcome_.cycles;
  if (trace_) outcome_.trace.push_back(Where(step.line) + ": cycle at " + FormatDurationSpec(state_.now - ScenarioEpoch()) + "\n" + Indent(DescribeCycle(state_, last_), "  "));
  if (Status st = sched::CheckInvariants(state_, last_); !st.ok()) {
    Fail(step.line, "cycle broke an invariant: " + st.message() + "\ndecisions:\n" + Indent(DescribeCycle(state_, last_), "  "));
  }
  sched::ApplyCycle(last_, &state_);
  for (const auto& a : last_.admissions) Hold(state_.workloads[a.workload], true);
}

void ScenarioRunner::Stop(const ScenarioStep& step, bool requeue) {
  for (const auto& name : step.names) {
    int32_t i = Find(name);
    if (i < 0) {
      Fail(step.line, (requeue ? "requeue: " : "finish: ") + std::string("no workload ") + name);
      continue;
    }
    if (!requeue) {
      if (state_.workloads[i].admitted) Hold(state_.workloads[i], false);
      state_.workloads.erase(state_.workloads.begin() + i);
      continue;
    }
    Requeue(state_.workloads[i]);
  }
}

ScenarioOutcome RunScenario(const Scenario& scenario, bool trace) {
  ScenarioRunner runner(scenario, trace);
  return runner.RunAll();
}

}  // namespace abacus::sim
