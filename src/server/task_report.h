// TaskReport: one task's status from its agent (or made up by the server when a node is lost),
// as the loop applies it (ControlPlane::ProcessTaskReports); it travels to the loop through
// LoopInbox.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/clock.h"
#include "wire/task_phase.h"

namespace abacus::server {

struct TaskReport {
  std::string node;
  std::string task_id;
  wire::TaskPhase phase = wire::TaskPhase::kLost;  // stored in the placement by its name (wire/task_phase.h)
  int32_t exit_code = 0, signal = 0;
  bool oom_killed = false, stopped = false;
  std::string message;
  std::string lost_reason;  // with Lost: NodeLost, DeviceError, AgentRestart
  std::optional<bool> ready, live;
  std::optional<int32_t> readiness_run{}, liveness_run{};  // PlacementRecord's encoding (n > 0 successes, < 0 failures)
  Time started_at{}, finished_at{};
  std::optional<std::string> results;  // with Exited: the task's results file (evaluation_archive.h)
  std::string results_error;
  std::string address;  // InferenceService replica: "host:port" (ABACUS_PORT)
};

}  // namespace abacus::server
