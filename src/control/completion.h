// Rules shared by the kinds that run to completion (TrainingJob, Evaluation, Experiment, and
// BatchJob for its start and preemption): the start transition, gang failure handling with
// retries, success, preemption requeue, and "stop every task, then finish".
#pragma once

#include <chrono>
#include <string>

#include "control/decision.h"
#include "control/failure.h"
#include "control/view.h"

namespace abacus::control {

// Grace for stops the spec says nothing about (the server's default too).
inline constexpr int32_t kDefaultGraceSeconds = 10;
// How long past a stop's grace a controller waits for agents to confirm before moving on.
inline constexpr Duration kStopSlack = std::chrono::seconds(60);

// How a run-to-completion workload retries and stops.
struct CompletionPolicy {
  RestartPolicy restart;  // max_retries 0: the first user failure fails the workload
  std::string stop_signal = "SIGTERM";
  int32_t stop_grace_seconds = kDefaultGraceSeconds;  // stopping the rest of a gang
  Duration backoff_cap = kMaxBackoff;
  Duration stop_slack = kStopSlack;
  int32_t max_infra_requeues = 0;  // 0: unlimited
};

// What StopThenFinish does: stop every task, then move to `to` with `reason`.
struct StopPlan {
  Time since{};  // when the rule fired (the grace deadline counts from here)
  std::string signal = "SIGTERM";
  int32_t grace_seconds = kDefaultGraceSeconds;
  WorkloadState to = WorkloadState::kCancelled;
  std::string reason;   // "MaxRuntimeExceeded", "TTLExpired", …
  std::string message;
  nlohmann::json details = nlohmann::json::object();
};

// Admitted → Running once a task has run: appends SetState + Event "Started"; returns the
// state the rest of the rules should see.
WorkloadState DecideStarted(const WorkloadView& w, Decisions& out);

// Preempting: once every task ended, or grace + slack after preempted_at, appends a Requeue
// that consumes no retry (reason Preempted). Returns true when w is Preempting.
bool DecidePreempted(const WorkloadView& w, int32_t grace_seconds, Time now, Decisions& out);

// Gang run to completion, for `state` Admitted or Running: when a task fails, stops the others
// and — once all ended or grace + slack passed — requeues (user failures consume a retry and
// wait RetryBackoff; infrastructure failures do not) or fails with the failure's class; when
// every task exited 0, Succeeded.
void DecideCompletion(const WorkloadView& w, WorkloadState state, const CompletionPolicy& p, Time now,
                      Decisions& out);

// Stops every task not yet told to (event `event`, once), then — when all ended or
// grace + slack after plan.since — appends SetState(plan.to) and an event named after the state.
void StopThenFinish(const WorkloadView& w, const StopPlan& plan, std::string_view event, Time now, Decisions& out);

// Returns the env of the next attempt: ABACUS_ATTEMPT = attempt + 1, ABACUS_RESUME = 1.
std::map<std::string, std::string> NextAttemptEnv(const WorkloadView& w);
// Returns "GROUP/REPLICA" for events.
std::string TaskName(const TaskRef& r);
// Returns the failure's event details: reason, task, node, exitCode, signal, oomKilled, message.
nlohmann::json FailureDetails(const TaskView& t, FailureClass c);

}  // namespace abacus::control
