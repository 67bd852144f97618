#include "control/health.h"

#include <algorithm>
#include <chrono>

namespace abacus::control {
namespace {

struct Trailing {
  int32_t ok = 0;
  int32_t failed = 0;
};

// The run of equal results at the end of the task's results of `kind`.
Trailing TrailingRun(const Probe& probe, ProbeResult::Kind kind, const TaskView& task,
                     const std::vector<ProbeResult>& results) {
  Time from = task.started_at + std::chrono::seconds(probe.initial_delay_seconds);
  std::vector<const ProbeResult*> mine;
  for (const ProbeResult& r : results) {
    if (r.kind == kind && r.task == task.ref() && r.time >= from) mine.push_back(&r);
  }
  std::stable_sort(mine.begin(), mine.end(), [](const ProbeResult* a, const ProbeResult* b) { return a->time < b->time; });
  Trailing t;
  for (auto it = mine.rbegin(); it != mine.rend(); ++it) {
    if ((*it)->ok ? t.failed > 0 : t.ok > 0) break;
    ((*it)->ok ? t.ok : t.failed) += std::max((*it)->count, 1);
  }
  return t;
}

}  // namespace

TaskHealth EvaluateHealth(const Probes& probes, const TaskView& task, const std::vector<ProbeResult>& results,
                          bool was_ready) {
  TaskHealth h;
  if (task.phase != TaskPhase::kRunning || task.stop_requested) return h;
  if (probes.liveness) {
    Trailing t = TrailingRun(*probes.liveness, ProbeResult::Kind::kLiveness, task, results);
    h.liveness_failures = t.failed;
    h.live = t.failed < std::max(probes.liveness->failure_threshold, 1);
  }
  if (!probes.readiness) {
    h.ready = h.live;
    return h;
  }
  const Probe& p = *probes.readiness;
  Trailing t = TrailingRun(p, ProbeResult::Kind::kReadiness, task, results);
  h.readiness_failures = t.failed;
  h.readiness_failing = t.failed >= std::max(p.failure_threshold, 1);
  if (t.ok >= std::max(p.success_threshold, 1)) {
    h.ready = true;
  } else if (h.readiness_failing) {
    h.ready = false;
  } else {
    h.ready = was_ready;
  }
  h.ready = h.ready && h.live;
  return h;
}

}  // namespace abacus::control
