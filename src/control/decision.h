// Decision: what a controller asks the server to do. A controller returns an ordered list; the
// server applies each in order, in one store transaction, then publishes to agents.
//
// The contract (docs/controllers.md has the long form):
//   - Controllers are pure: same view, state, signals and `now` → same decisions.
//   - Idempotent: called again with the view after its decisions were applied (and nothing
//     new reported), a controller returns no decisions. Each decision says below what
//     "applied" changes in the view; the server must make that change at once, not when an
//     agent confirms.
//   - State changes (SetState, Requeue) apply in list order, each legal from the state the one
//     before left: Admitted → Running → Succeeded can come in one list when a task started and
//     ended between two calls. Nothing follows a Requeue or a terminal SetState but events
//     and RevokeQuota.
//   - Events carry {type, message, details}; details always has "reason" when there is one.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/clock.h"
#include "control/view.h"
#include "model/quantity.h"
#include "tenancy/queue.h"
#include "workload/lifecycle.h"

namespace abacus::control {

// Move the workload to `to` (legal per lifecycle.h). Applied: state = to, message = message;
// a terminal state also sets finished_at = now.
struct SetState {
  WorkloadState to = WorkloadState::kRunning;
  std::string reason;  // "Started", "ExitCode", "MaxRuntimeExceeded", "TTLExpired", …
  std::string message;
};

// Send the workload back to wait: Pending from Admitted, Requeued otherwise. Applied:
// placements cleared, attempt + 1, failures + 1 when consume_retry, not_before kept so the
// scheduler does not admit before it. `env` is what the next attempt's tasks get on top of
// the spec's env (ABACUS_ATTEMPT, ABACUS_RESUME=1).
struct Requeue {
  bool consume_retry = false;
  Time not_before{};
  std::string reason;  // a FailureClass name, or "Preempted"
  std::string message;
  std::map<std::string, std::string> env;
};

// Stop these tasks: send `signal`, kill after grace_seconds. Applied: stop_requested = true on
// each (the agent then reports Stopping, Exited with stopped = true).
struct StopTasks {
  std::vector<TaskRef> tasks;
  std::string signal = "SIGTERM";
  int32_t grace_seconds = 30;
  std::string reason;
};

// InferenceService: end every task of `replica` (SIGTERM, default grace) and run it again, not
// before `not_before` (crash-loop backoff); a new placement when its node is gone. Applied:
// stop_requested = true on its tasks until the new run is placed.
struct RestartReplica {
  int32_t replica = 0;
  Time not_before{};
  std::string reason;  // "LivenessFailed", "ReplicaExited", "ReplicaLost"
};

// BatchJob: run array task `index` in a slot whose task has ended (or a new placement).
// Applied: a TaskView with this index, phase "" (pending), appears in the view.
struct StartTask {
  int32_t index = 0;
};

// InferenceService: the service should have `replicas` replicas. Applied: the scheduler places
// new replicas (numbered upward) or the server stops the highest-numbered ones.
struct ScaleTo {
  int32_t replicas = 0;
  std::string reason;  // "Autoscale", "Spec"
};

// InferenceService: `replica` should run `version`. Applied: the replica's tasks get
// version = `version` (and are restarted with it, env ABACUS_VERSION). Re-applying is a no-op.
struct SetVersion {
  int32_t replica = 0;
  std::string version;
};

// InferenceService: route traffic to `replica` or not.
struct SetReady {
  int32_t replica = 0;
  bool ready = false;
};

// Experiment: extra quota for this workload alone, until `until` (unset: not yet admitted).
// Applied as an upsert of the workload's grant.
struct GrantQuota {
  QuotaResource resource;
  Quantity amount;
  std::optional<Time> until;
};

// Experiment: drop the workload's extra quota.
struct RevokeQuota {
  QuotaResource resource;
  Quantity amount;
  std::string reason;
};

// InferenceService: a period when it wanted more replicas than it had (meter::ShortageInterval).
// Without `end` it opens; with `end` it closes the open one that began at `start`.
struct RecordShortage {
  int32_t wanted = 0;
  int32_t available = 0;
  Time start{};
  std::optional<Time> end;
};

// Evaluation: read the results the task wrote (resultsPath / $ABACUS_RESULTS_DIR) and archive
// them with BuildEvaluationResult (evaluation.h).
struct CollectResults {
  std::string path;
  bool archive = true;
};

// Append to the workload's event log.
struct Event {
  std::string type;
  std::string message;
  nlohmann::json details = nlohmann::json::object();
};

using Decision = std::variant<SetState, Requeue, StopTasks, RestartReplica, StartTask, ScaleTo, SetVersion,
                              SetReady, GrantQuota, RevokeQuota, RecordShortage, CollectResults, Event>;
using Decisions = std::vector<Decision>;

// Returns the decision's type name: "SetState", "Requeue", … "Event".
std::string_view DecisionName(const Decision& d);
// Returns {"type": DecisionName, …fields} for logs, the audit trail and tests.
nlohmann::json ToJson(const Decision& d);

// Returns an Event decision; `reason`, when not empty, is put in details["reason"].
Event MakeEvent(std::string type, std::string message, nlohmann::json details = nlohmann::json::object(),
                std::string_view reason = "");

// Returns the first decision of type T in `ds`, or nullptr.
template <typename T>
const T* Find(const Decisions& ds) {
  for (const Decision& d : ds) {
    if (const T* t = std::get_if<T>(&d)) return t;
  }
  return nullptr;
}
// Returns every decision of type T in `ds`, in order.
template <typename T>
std::vector<T> FindAll(const Decisions& ds) {
  std::vector<T> out;
  for (const Decision& d : ds) {
    if (const T* t = std::get_if<T>(&d)) out.push_back(*t);
  }
  return out;
}
// Returns the event of `type` in `ds`, or nullptr.
const Event* FindEvent(const Decisions& ds, std::string_view type);

}  // namespace abacus::control
