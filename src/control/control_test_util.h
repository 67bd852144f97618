// Test helpers for control/: times relative to a fixed start, workload and task builders, and
// Apply(), which changes a view the way docs/controllers.md tells the server to.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "control/decision.h"
#include "control/view.h"

namespace abacus::control::testing {

// Seconds after a fixed start (2026-01-01T00:00:00Z); never the wall clock.
inline Time T(int64_t seconds) {
  return FromMicros(1'767'225'600'000'000) + std::chrono::seconds(seconds);
}
inline Duration Secs(int64_t s) { return std::chrono::seconds(s); }

// A workload of `kind_spec` with one task group of `replicas` tasks.
inline Workload MakeSpec(KindSpec kind_spec, int32_t replicas = 1) {
  Workload w;
  w.name = "w";
  w.project = "team/proj";
  w.queue = "q";
  w.details = std::move(kind_spec);
  TaskGroup g;
  g.name = "main";
  g.replicas = replicas;
  w.spec.task_groups.push_back(g);
  return w;
}

inline TaskView Task(int32_t replica, TaskPhase phase, Time started = T(0), std::string node = "") {
  TaskView t;
  t.replica = replica;
  t.index = replica;
  t.node = node.empty() ? "n" + std::to_string(replica) : std::move(node);
  t.phase = phase;
  if (phase != TaskPhase::kPending) t.started_at = started;
  return t;
}
inline TaskView Exited(int32_t replica, int32_t code, Time finished, Time started = T(0)) {
  TaskView t = Task(replica, TaskPhase::kExited, started);
  t.exit_code = code;
  t.finished_at = finished;
  t.message = "exited " + std::to_string(code);
  return t;
}
inline TaskView Lost(int32_t replica, LostReason why, Time finished, Time started = T(0)) {
  TaskView t = Task(replica, TaskPhase::kLost, started);
  t.lost_reason = why;
  t.finished_at = finished;
  return t;
}

inline WorkloadView View(const Workload& spec, WorkloadState state, std::vector<TaskView> tasks = {}) {
  WorkloadView v;
  v.id = "wl-1";
  v.spec = &spec;
  v.state = state;
  v.submitted = T(0);
  v.admitted_at = T(0);
  v.tasks = std::move(tasks);
  return v;
}

// Changes `w` as the server applies `ds` (agents not yet involved): states, requeues, stop
// requests, batch starts, versions.
inline void Apply(WorkloadView& w, const Decisions& ds) {
  for (const Decision& d : ds) {
    if (const auto* s = std::get_if<SetState>(&d)) {
      EXPECT_TRUE(CanTransition(w.state, s->to))
          << WorkloadStateName(w.state) << " -> " << WorkloadStateName(s->to);
      w.state = s->to;
    } else if (const auto* r = std::get_if<Requeue>(&d)) {
      w.state = w.state == WorkloadState::kAdmitted ? WorkloadState::kPending : WorkloadState::kRequeued;
      w.tasks.clear();
      w.attempt++;
      if (r->consume_retry) w.failures++;
      w.not_before = r->not_before;
      w.admitted_at = Time{};
    } else if (const auto* st = std::get_if<StopTasks>(&d)) {
      for (TaskView& t : w.tasks) {
        if (std::find(st->tasks.begin(), st->tasks.end(), t.ref()) != st->tasks.end()) t.stop_requested = true;
      }
    } else if (const auto* rr = std::get_if<RestartReplica>(&d)) {
      for (TaskView& t : w.tasks) {
        if (t.replica == rr->replica) t.stop_requested = true;
      }
    } else if (const auto* sv = std::get_if<SetVersion>(&d)) {
      for (TaskView& t : w.tasks) {
        if (t.replica == sv->replica) t.version = sv->version;
      }
    } else if (const auto* start = std::get_if<StartTask>(&d)) {
      // Reuse the slot of an ended task, else a new slot.
      auto ended = std::find_if(w.tasks.begin(), w.tasks.end(), [](const TaskView& t) { return t.ended(); });
      int32_t slot = static_cast<int32_t>(w.tasks.size());
      if (ended != w.tasks.end()) {
        slot = ended->replica;
        w.tasks.erase(ended);
      }
      TaskView t;
      t.replica = slot;
      t.index = start->index;
      t.node = "n" + std::to_string(slot);
      w.tasks.push_back(t);
    }
  }
}

// Runs `reconcile(w, s)` (an outcome with .decisions and .state), keeps the new state in `s`,
// applies the decisions to `w`; returns them.
template <typename State, typename Fn>
Decisions StepWith(WorkloadView& w, State& s, Fn&& reconcile) {
  auto o = reconcile(w, s);
  s = o.state;
  Apply(w, o.decisions);
  return o.decisions;
}

// Returns the types of `ds`, e.g. "SetState,Event".
inline std::string Types(const Decisions& ds) {
  std::string out;
  for (const Decision& d : ds) {
    if (!out.empty()) out += ",";
    out += DecisionName(d);
    if (const auto* e = std::get_if<Event>(&d)) out += ":" + e->type;
  }
  return out;
}

}  // namespace abacus::control::testing
