// Readiness and liveness of InferenceService tasks from the probe results their agents report.
// Only results of the task's current run count (time >= started_at + initialDelaySeconds); the
// trailing run of equal results decides, as failureThreshold / successThreshold say.
#pragma once

#include <vector>

#include "control/view.h"
#include "workload/workload.h"

namespace abacus::control {

struct TaskHealth {
  bool ready = false;  // may receive traffic
  bool live = true;    // false: liveness failed failureThreshold times in a row
  int32_t readiness_failures = 0;  // consecutive, up to the latest result
  int32_t liveness_failures = 0;
  bool readiness_failing = false;  // readiness failed failureThreshold times in a row
};

// Evaluates `task` from `results` (other tasks' are skipped); `was_ready` is what was last
// published for this run (kept while fewer than a threshold of results agree).
TaskHealth EvaluateHealth(const Probes& probes, const TaskView& task, const std::vector<ProbeResult>& results,
                          bool was_ready);

}  // namespace abacus::control
