#include "sched/claims.h"

namespace abacus::sched {

int32_t YieldCountAfter(std::string_view yields_to, int32_t count, std::string_view preemptor) {
  return yields_to == preemptor ? count + 1 : 1;
}

void NoteAdmission(WorkloadInfo* w, const Admission& a, Time now) {
  w->admitted = true;
  w->evicting = false;
  w->group_flavors = a.group_flavors;
  w->placements = a.placements;
  w->admitted_at = now;
}

void NotePreemption(WorkloadInfo* victim, const Preemption& p, Time now) {
  victim->evicting = true;
  victim->stop_deadline = now + std::chrono::seconds(p.grace_seconds);
  victim->yield_count = YieldCountAfter(victim->yields_to, victim->yield_count, p.preemptor_id);
  victim->yields_to = p.preemptor_id;
}

}  // namespace abacus::sched
