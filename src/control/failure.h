// Failure classification and retry timing, shared by the run-to-completion kinds (TrainingJob,
// BatchJob, Evaluation, Experiment).
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "control/view.h"
#include "workload/workload.h"

namespace abacus::control {

// Why a task failed. User failures (ExitCode, OOMKilled, Signal) consume a retry;
// infrastructure failures (NodeLost, DeviceError, AgentRestart, Interrupted) do not.
enum class FailureClass : uint8_t {
  kNone,          // it did not fail (succeeded, still running, or stopped on request)
  kExitCode,      // user error: non-zero exit code
  kOOMKilled,     // killed by the kernel for memory
  kSignal,        // killed by a signal it was not asked to take
  kNodeLost,      // its node stopped reporting
  kDeviceError,   // a device it used failed
  kAgentRestart,  // the agent restarted and could not reattach it
  kInterrupted,   // stopped by its node (drain, shutdown) without the server asking
};
// Returns "", "ExitCode", "OOMKilled", "Signal", "NodeLost", "DeviceError", "AgentRestart" or
// "Interrupted".
std::string_view FailureClassName(FailureClass c);
// Classifies an ended task; kNone when it has not ended, succeeded, or was asked to stop.
FailureClass ClassifyFailure(const TaskView& t);
// Returns true for user failures (they consume one of restartPolicy.maxRetries).
bool ConsumesRetry(FailureClass c);

// The longest wait between retries.
inline constexpr Duration kMaxBackoff = std::chrono::minutes(10);
// Returns the wait before user retry number `retry` (1-based): backoffSeconds doubled per
// earlier retry (10s, 20s, 40s, …), at most `cap`.
Duration RetryBackoff(const RestartPolicy& p, int32_t retry, Duration cap = kMaxBackoff);

// Returns the failed task that ended first (ties: lowest group, then replica), or nullptr.
const TaskView* FirstFailure(const std::vector<TaskView>& tasks);

}  // namespace abacus::control
