// Admissions and preemptor claims, the one rule every driver (server, simulator, scenario runner)
// applies to its own copy of the workloads after a cycle (sched/apply_cycle.h applies a whole
// cycle to a snapshot): capacity freed by a preemption goes to the preemptor; its victims wait
// behind it until it is admitted (docs/scheduler.md, "Reclaimed capacity goes to the preemptor").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sched/types.h"

namespace abacus::sched {

// Returns the victim's yield count after one more preemption for `preemptor`, given the claim it
// held before (`yields_to`, `count`): one more when the preemptor is the same, else 1.
int32_t YieldCountAfter(std::string_view yields_to, int32_t count, std::string_view preemptor);

// Applies admission `a` to its workload: admitted at `now` on the admission's flavors and
// placements, no longer evicting.
void NoteAdmission(WorkloadInfo* w, const Admission& a, Time now);

// Applies preemption `p` to its victim: evicting, stopping by now + grace, yielding to its preemptor.
void NotePreemption(WorkloadInfo* victim, const Preemption& p, Time now);

}  // namespace abacus::sched
