// CyclePacer: what the scheduling loop owes its next cycle and when that cycle is due (issue
// 22.1: the loop's own state, one room). Loop steps say what happened (a change, capacity freed,
// a workload arrived, a request that every parked workload be retried); the loop asks whether to
// cycle now, and a cycle takes what it owes (its kind and the arrivals). The rules themselves are
// sched/cycle_kind.h's, shared with the event simulator. Loop thread only; no locks.
//
//   pacer.Arrived(id); pacer.Changed();                       // a step
//   CyclePacer::Verdict v = pacer.Check(clock_now, steady_now, owed);
//   if (v.cycle) { CyclePacer::Owed o = pacer.Begin(clock_now, steady_now); ...; pacer.Ended(cost, o); }
#pragma once

#include <chrono>
#include <string>
#include <unordered_set>

#include "common/clock.h"
#include "sched/cycle_kind.h"

namespace abacus::server {

class CyclePacer {
 public:
  using SteadyTime = std::chrono::steady_clock::time_point;

  // `min_gap`: the least time from a change to its cycle (grown by the last cycle's cost);
  // `interval`: the timer's full cycle (grown by the last full cycle's cost).
  CyclePacer(Duration min_gap, Duration interval) : min_gap_(min_gap), interval_(interval) {}

  // ---- what happened
  // Something a cycle may act on changed (a workload, a node, the rules).
  void Changed() { changed_ = true; }
  // The next cycle retries every parked workload (a command, a requeue, capacity back).
  void RetryAll() { retry_all_ = true; }
  // Capacity was freed: the next cycle tries at least the head of each queue.
  void Freed() { freed_ = true; }
  // Workload `id` arrived (submitted, granted quota): the next cycle tries it.
  void Arrived(const std::string& id) { arrived_.insert(id); }

  // ---- the loop
  // How long the loop may sleep at `now` before the timer's full cycle is due (0: due).
  Duration UntilTimer(Time now) const;

  struct Verdict {
    bool cycle = false;
    // When not cycling with a change waiting: how long until its coalescing gap is over.
    Duration back_off{0};
  };
  // Whether to cycle at `now` (`steady_now` for the gap, a real cost): when something is owed
  // and the coalescing gap since the last cycle is over, or when `owed` (a waiter asked for a
  // cycle) with nothing changed. Asks for a full cycle when the timer is due.
  Verdict Check(Time now, SteadyTime steady_now, bool owed);

  // What a cycle owes: its kind and the workloads that arrived since the last one.
  struct Owed {
    sched::CycleKind kind = sched::CycleKind::kFresh;
    std::unordered_set<std::string> arrived;
    bool full() const { return kind == sched::CycleKind::kFull; }
  };
  // A cycle starts at `now`: takes what is owed (nothing is owed after it).
  Owed Begin(Time now, SteadyTime steady_now);
  // The cycle begun with `owed` cost `cost` (the gaps grow with it).
  void Ended(Duration cost, const Owed& owed);

 private:
  const Duration min_gap_;
  const Duration interval_;
  bool changed_ = true;    // the first cycle runs at once
  bool retry_all_ = true;  // and is full
  bool freed_ = false;
  std::unordered_set<std::string> arrived_;
  Time last_full_cycle_{};
  Duration last_full_cycle_cost_{0};
  SteadyTime last_cycle_{};
  Duration last_cycle_cost_{0};
};

}  // namespace abacus::server
