// The one entry point the server calls: Reconcile() runs the controller of the workload's
// kind over its stored controller state (an opaque JSON document the server keeps with the
// workload record) and returns the decisions and the state to store. docs/controllers.md
// describes when to call it and how to apply each decision.
#pragma once

#include <nlohmann/json.hpp>

#include "control/decision.h"
#include "control/view.h"

namespace abacus::control {

struct Outcome {
  Decisions decisions;
  nlohmann::json state;  // store with the workload (null for kinds that keep none); pass back next time
};

// Runs the controller of w.spec->kind() at `now` with its stored `state` (null: fresh) and
// `signals`. InvalidArgument when `state` cannot be read. Pure: no clock, I/O or threads.
Result<Outcome> Reconcile(const WorkloadView& w, const nlohmann::json& state, const Signals& signals, Time now);

// Returns what `get`/`describe` show of the controller state: BatchJob progress; for an
// InferenceService desired and ready replicas, rollout and shortage; for an Experiment the
// idle notice and temporary quota; {} otherwise or when `state` cannot be read.
nlohmann::json Describe(const WorkloadView& w, const nlohmann::json& state);

}  // namespace abacus::control
