// Lifecycle state machines of workloads and tasks. Transition() is the only way a state
// changes; an illegal move is FailedPrecondition naming both states. Terminal states are final.
//
// Workload:
//   Pending    → Admitted | Failed | Cancelled
//   Admitted   → Running | Pending (admission rolled back) | Preempting | Failed | Cancelled
//   Running    → Succeeded | Failed | Preempting | Requeued (retry after a failure) | Cancelled
//   Preempting → Requeued | Succeeded | Failed | Cancelled   (checkpoint grace running)
//   Requeued   → Admitted | Failed | Cancelled               (waiting again, keeps its history)
//   Succeeded, Failed, Cancelled: terminal
//
// Task (one process/container on one node):
//   Pending     → Assigned | Killed
//   Assigned    → Starting | Failed | Terminating | Killed | Lost
//   Starting    → Running | Failed | Terminating | Lost
//   Running     → Succeeded | Failed | Terminating | Lost
//   Terminating → Killed | Succeeded | Failed | Lost          (signal sent, grace running)
//   Succeeded, Failed, Killed, Lost: terminal
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace abacus {

enum class WorkloadState : uint8_t {
  kPending,
  kAdmitted,
  kRunning,
  kPreempting,
  kRequeued,
  kSucceeded,
  kFailed,
  kCancelled,
};
inline constexpr int kWorkloadStateCount = 8;

std::string_view WorkloadStateName(WorkloadState s);
Result<WorkloadState> ParseWorkloadState(std::string_view text);
bool IsTerminal(WorkloadState s);
// Returns true when `from` → `to` is legal.
bool CanTransition(WorkloadState from, WorkloadState to);
// Returns the states reachable from `from` in one step.
std::vector<WorkloadState> NextStates(WorkloadState from);
// Moves `state` to `to`, or returns FailedPrecondition ("illegal workload transition
// Succeeded -> Running") and leaves it unchanged.
Status Transition(WorkloadState& state, WorkloadState to);

enum class TaskState : uint8_t {
  kPending,
  kAssigned,
  kStarting,
  kRunning,
  kTerminating,
  kSucceeded,
  kFailed,
  kKilled,
  kLost,
};
inline constexpr int kTaskStateCount = 9;

std::string_view TaskStateName(TaskState s);
Result<TaskState> ParseTaskState(std::string_view text);
bool IsTerminal(TaskState s);
bool CanTransition(TaskState from, TaskState to);
std::vector<TaskState> NextStates(TaskState from);
Status Transition(TaskState& state, TaskState to);

}  // namespace abacus
