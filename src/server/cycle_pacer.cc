#include "server/cycle_pacer.h"

#include <algorithm>

namespace abacus::server {

Duration CyclePacer::UntilTimer(Time now) const {
  const Time next = last_full_cycle_ + sched::FullCycleGap(interval_, last_full_cycle_cost_);
  return std::max(Duration(0), next - now);
}

CyclePacer::Verdict CyclePacer::Check(Time now, SteadyTime steady_now, bool owed) {
  // The timer's cycle retries every parked workload (aging, time-based rules). The coalescing
  // gap is real time (a cost); the timer is the clock's (rules, aging).
  if (sched::FullCycleDue(now, last_full_cycle_, interval_, last_full_cycle_cost_)) retry_all_ = true;
  const Duration gap = sched::CoalescingGap(min_gap_, last_cycle_cost_);
  const Duration since = std::chrono::duration_cast<Duration>(steady_now - last_cycle_);
  Verdict v;
  v.cycle = (changed_ || retry_all_ || freed_) && since >= gap;
  if (!v.cycle && !changed_ && owed) v.cycle = true;
  if (!v.cycle && changed_) v.back_off = gap - since;
  return v;
}

CyclePacer::Owed CyclePacer::Begin(Time now, SteadyTime steady_now) {
  Owed owed;
  owed.kind = sched::ChooseCycleKind(retry_all_, freed_);
  owed.arrived.swap(arrived_);
  last_cycle_ = steady_now;
  if (owed.full()) last_full_cycle_ = now;
  changed_ = retry_all_ = freed_ = false;
  return owed;
}

void CyclePacer::Ended(Duration cost, const Owed& owed) {
  last_cycle_cost_ = cost;
  if (owed.full()) last_full_cycle_cost_ = cost;
}

}  // namespace abacus::server
