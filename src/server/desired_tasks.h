// What the agents should be doing for one workload, derived from its record: the assignment of
// each of its tasks on agent nodes (docs/agent-protocol.md), typed, grouped by node.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "server/assignments.h"
#include "server/fencing.h"
#include "server/ledger.h"
#include "server/records.h"

namespace abacus::server {

// Grace given to tasks stopped because their workload ended or left the node (seconds).
inline constexpr int32_t kDefaultStopGraceSeconds = 10;

// Returns node → task id → assignment for `r`'s tasks on agent nodes of `ledger`:
//   Admitted/Running: placements not yet ended, action "run";
//   Preempting: placements not yet ended, action "stop" with the checkpoint signal and grace;
//   terminal: placements an agent still reports Running/Stopping, action "stop";
//   waiting: none.
// Each carries the fencing signal and grace of `fencing` (what the agent does when cut off), and
// the workload's secret references (SecretVault::References) for the vault to open.
NodeTasks DesiredTasks(const WorkloadRecord& r, const Ledger& ledger, const FencingPolicy& fencing = {});

// Returns true when the placement's task has ended (Exited or Lost).
bool TaskEnded(const PlacementRecord& p);

// When the placement's task ended as far as is known: for one that exited, when its agent saw it
// exit (its reported finishedUs); for one lost, the last time it was known to run (its agent's
// last call before an agent restart, the fencing agent's stop, the fail-over); bounded by
// [floor, now] (an agent's clock need not agree with the server's); nullopt when it has not
// ended or no time was recorded. Metering and a workload's end read it: a report held up while
// the server was down, or an agent killed and started again later, must not move the end to
// when the server learned of it.
std::optional<Time> EndSeen(const PlacementRecord& p, Time floor, Time now);

// Returns the id of the task placement `p` runs now (its attempt and run).
std::string TaskIdOf(const WorkloadRecord& r, const PlacementRecord& p);

// Returns the index of placement `p`'s task among the workload's tasks (ABACUS_TASK_INDEX).
int32_t TaskIndex(const WorkloadRecord& r, const PlacementRecord& p);

// Returns the environment the task of placement `p` gets besides the device variables:
// the workload's env plus ABACUS_WORKLOAD_ID, ABACUS_WORKLOAD_NAME, ABACUS_TASK_ID,
// ABACUS_TASK_GROUP, ABACUS_TASK_REPLICA, ABACUS_TASK_INDEX, ABACUS_TASK_COUNT, ABACUS_ATTEMPT,
// from the second attempt on ABACUS_RESUME=1, and ABACUS_VERSION for a service replica with one.
std::map<std::string, std::string> TaskEnvironment(const WorkloadRecord& r, const PlacementRecord& p,
                                                   const std::string& task_id);

}  // namespace abacus::server
