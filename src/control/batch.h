// BatchJob controller: an array of `tasks` independent tasks run at most `parallelism` at once
// in slots (the workload's placements), each retried on its own per restartPolicy. It keeps
// per-index progress in BatchState, which the server stores with the workload and passes back.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "control/completion.h"
#include "control/decision.h"
#include "control/view.h"

namespace abacus::control {

// A slot without an array task: TaskView.index of a placement the controller has not filled.
inline constexpr int32_t kNoIndex = -1;

// Per-index progress, kept across attempts (a requeue does not redo done tasks).
struct BatchState {
  std::string status;                  // one char per index: 'P' to do, 'D' done, 'F' failed
  std::map<int32_t, int32_t> retries;  // user retries consumed, per index
  std::map<int32_t, Time> not_before;  // per index waiting out its backoff
  std::map<int32_t, Time> accounted;   // index → finished_at of its last run already counted
  int32_t failed_index = kNoIndex;     // the first index that ran out of retries
  std::string failure_reason;          // its FailureClass name
  std::string failure_message;
  Time failed_at{};
  bool operator==(const BatchState&) const = default;
};

// Counts for `get` and `describe`.
struct BatchProgress {
  int32_t total = 0;
  int32_t done = 0;
  int32_t running = 0;  // started or placed, not ended
  int32_t failed = 0;   // out of retries
  int32_t pending = 0;  // not yet run, or waiting for a retry
  bool operator==(const BatchProgress&) const = default;
};

struct BatchOutcome {
  Decisions decisions;
  BatchState state;  // store it; pass it back next time
  BatchProgress progress;
};

// Returns the decisions for BatchJob `w` at `now` from its stored `state` (empty: fresh):
// counts ended runs (done, retry with backoff — infrastructure failures free — or failed),
// starts the lowest ready indexes in free slots, Succeeded when all are done, and when one
// index runs out of retries stops the rest and Failed. Call after every task report and tick.
BatchOutcome ReconcileBatch(const WorkloadView& w, BatchState state, Time now);

// Returns the progress of `w` given its stored state.
BatchProgress Progress(const WorkloadView& w, const BatchState& state);

// The stored form of BatchState, and back (InvalidArgument naming the bad field).
nlohmann::json ToJson(const BatchState& s);
Result<BatchState> BatchStateFromJson(const nlohmann::json& j);
// The JSON of progress: {total, done, running, failed, pending}.
nlohmann::json ToJson(const BatchProgress& p);

}  // namespace abacus::control
