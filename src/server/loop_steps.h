// LoopSteps: the scheduling loop's own state between its turns, beside CyclePacer (what the next
// cycle owes) and LoopCommits (its commits in flight): the workloads it watches until they stop,
// the nodes it drains, what the controllers staged for the batch being built, and when each
// periodic check last ran. Loop thread only: no lock.
//
//   if (!steps.liveness.Due(clock.Now())) return;     // at most once a second
//   steps.preempting.insert(id);                      // watched until its tasks stop
#pragma once

#include <set>
#include <string>

#include "common/clock.h"
#include "server/metrics.h"

namespace abacus::server {

// A check that runs at most once per `every`, counted from the epoch before its first run.
class Periodic {
 public:
  explicit Periodic(Duration every) : every_(every) {}
  // True, and the check counts as run at `now`, when `every` has passed since it last ran (or
  // `force` is set); false otherwise.
  bool Due(Time now, bool force = false) {
    if (!force && now - last_ < every_) return false;
    last_ = now;
    return true;
  }
  // When the check last ran (the epoch before the first time).
  Time last() const { return last_; }

 private:
  Duration every_;
  Time last_{};
};

struct LoopSteps {
  std::set<std::string> preempting;      // ids of Preempting workloads, watched until they stop
  std::set<std::string> draining_nodes;  // nodes whose cordon is Draining (fleet.cc)
  StagedActions staged;                  // the controllers' actions, counted when their batch commits
  Periodic liveness{std::chrono::seconds(1)};      // CheckNodeLiveness
  Periodic controllers{std::chrono::seconds(1)};   // TickControllers
  Periodic drains{std::chrono::seconds(1)};        // ProgressDrains
  Periodic maintenance{std::chrono::seconds(1)};   // MaintainReservations
  Periodic idempotency_purge{std::chrono::hours(1)};  // expired Idempotency-Keys
};

}  // namespace abacus::server
