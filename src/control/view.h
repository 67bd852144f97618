// What a controller reads: a workload and its tasks as the server sees them (WorkloadView,
// TaskView), and the signals agents and users report beside task status (Signals). Views are
// plain copies; control/ never depends on server/. docs/controllers.md says how the server
// fills each field.
#pragma once

#include <cstdint>
#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "model/quantity.h"
#include "workload/lifecycle.h"
#include "workload/workload.h"

namespace abacus::control {

// The phase an agent reports for a task ("" until it reports).
enum class TaskPhase : uint8_t { kPending, kRunning, kStopping, kExited, kLost };
// Returns "", "Running", "Stopping", "Exited" or "Lost".
std::string_view TaskPhaseName(TaskPhase p);
// Parses a phase name ("" is kPending); InvalidArgument otherwise.
Result<TaskPhase> ParseTaskPhase(std::string_view text);

// Why a task was lost: its node stopped reporting, a device failed, or the agent restarted.
enum class LostReason : uint8_t { kNone, kNodeLost, kDeviceError, kAgentRestart };
// Returns "", "NodeLost", "DeviceError" or "AgentRestart".
std::string_view LostReasonName(LostReason r);
// Parses a reason name ("" is kNone); InvalidArgument otherwise.
Result<LostReason> ParseLostReason(std::string_view text);

// Names one task of a workload: group index and replica (for a BatchJob, the slot).
struct TaskRef {
  int32_t group = 0;
  int32_t replica = 0;
  friend auto operator<=>(const TaskRef&, const TaskRef&) = default;
};

// One task (placement) of the workload's current attempt.
struct TaskView {
  int32_t group = 0;
  int32_t replica = 0;  // InferenceService: the service replica; BatchJob: the slot
  int32_t index = 0;    // BatchJob: the array index (ABACUS_TASK_INDEX); others: as the env says
  std::string node;
  TaskPhase phase = TaskPhase::kPending;
  int32_t exit_code = 0;
  int32_t signal = 0;
  bool oom_killed = false;
  bool stopped = false;         // the agent reports it ended because it was told to stop
  bool stop_requested = false;  // the server has told it to stop (StopTasks/RestartReplica applied)
  std::string message;
  Time started_at{};   // epoch until it runs
  Time finished_at{};  // epoch until it ends
  LostReason lost_reason = LostReason::kNone;  // with phase Lost
  std::string version;  // InferenceService: the version this replica runs (SetVersion)

  TaskRef ref() const { return {group, replica}; }
  // True when the task has ended (Exited or Lost).
  bool ended() const { return phase == TaskPhase::kExited || phase == TaskPhase::kLost; }
  // True when it exited by itself with code 0, no signal and no OOM kill.
  bool succeeded() const;
};

// A workload as a controller reads it.
struct WorkloadView {
  std::string id;
  const Workload* spec = nullptr;  // never null when passed to a controller
  WorkloadState state = WorkloadState::kPending;
  Time submitted{};
  Time admitted_at{};   // of the current attempt; epoch when not admitted
  Time started_at{};    // the first time any task ran, over all attempts; epoch: never
  Time preempted_at{};  // when Preempting began; epoch otherwise
  // Why an operator stopped it (Preempting): "Drained", "Requeued", "Suspended"; empty when the
  // scheduler preempted it. Its Requeue carries this reason (no retry used).
  std::string evict_reason;
  int32_t attempt = 1;
  int32_t failures = 0;        // user retries consumed (Requeue.consume_retry)
  int32_t infra_requeues = 0;  // requeues after infrastructure failures (0 when not tracked)
  Duration prior_runtime{};    // running time of earlier attempts (maxRuntime counts all)
  Time not_before{};           // set by the last Requeue
  std::vector<TaskView> tasks;  // the current attempt's placements
};

// One value of the autoscaling metric, reported by a replica (POST /workloads/{id}/metrics).
struct MetricSample {
  int32_t replica = 0;
  std::string metric;
  double value = 0;
  Time time{};
};

// One probe result of a task, reported by its agent; `count` > 1: the agent counted that many
// consecutive equal results ending with this one (pass it alone, not with the ones it counts).
struct ProbeResult {
  enum class Kind : uint8_t { kReadiness, kLiveness };
  TaskRef task;
  Kind kind = Kind::kReadiness;
  bool ok = false;
  Time time{};
  int32_t count = 1;
};

// Utilization of one device of the workload, reported by its agent.
struct UtilizationSample {
  std::string node;
  int32_t device = 0;
  double percent = 0;  // 0..100
  Time time{};
};

// A tenant admin's answer to a temporary quota request.
struct QuotaDecision {
  bool approved = false;
  std::string by;  // the admin's user name
  Time at{};
};

// What agents and users reported besides task status. The server passes what it holds
// (recent samples are enough; older ones are ignored by time), not only what is new.
struct Signals {
  std::vector<MetricSample> metrics;            // InferenceService
  std::vector<ProbeResult> probes;              // InferenceService
  std::vector<UtilizationSample> utilization;   // Experiment
  std::optional<Quantity> quota_auto_approve;   // Experiment: the tenant's auto-approve limit
  std::optional<QuotaDecision> quota_decision;  // Experiment: the admin's answer, once given
};

// Returns true when `t` is set (not the epoch).
inline bool IsSet(Time t) { return ToMicros(t) != 0; }
// Returns the earliest started_at of `tasks` (the current attempt's start), or the epoch.
Time FirstStart(const std::vector<TaskView>& tasks);

}  // namespace abacus::control
