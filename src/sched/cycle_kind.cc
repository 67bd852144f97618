#include "sched/cycle_kind.h"

#include <algorithm>
#include <limits>

namespace abacus::sched {

std::string_view CycleKindName(CycleKind kind) {
  switch (kind) {
    case CycleKind::kFresh: return "fresh";
    case CycleKind::kBounded: return "bounded";
    case CycleKind::kFull: return "full";
  }
  return "?";
}

CycleKind ChooseCycleKind(bool full_requested, bool capacity_freed) {
  if (full_requested) return CycleKind::kFull;
  return capacity_freed ? CycleKind::kBounded : CycleKind::kFresh;
}

CycleScope ScopeOf(CycleKind kind, size_t bounded_per_queue) {
  switch (kind) {
    case CycleKind::kFull: return {std::numeric_limits<size_t>::max(), true, true};
    case CycleKind::kBounded: return {bounded_per_queue, true, false};
    case CycleKind::kFresh: return {0, true, true};
  }
  return {};
}

Duration FullCycleGap(Duration interval, Duration last_full_cycle_cost) {
  return std::max(interval, 20 * last_full_cycle_cost);
}

bool FullCycleDue(Time now, Time last_full, Duration interval, Duration last_full_cycle_cost) {
  return now - last_full >= FullCycleGap(interval, last_full_cycle_cost);
}

Duration CoalescingGap(Duration min_gap, Duration last_cycle_cost) { return std::max(min_gap, 4 * last_cycle_cost); }

}  // namespace abacus::sched
