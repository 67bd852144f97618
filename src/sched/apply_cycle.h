// Applying one cycle's decisions to the snapshot they were made on: the one rule the scenario
// runner and the event simulator run after every sched::Schedule (the server applies the same
// decisions to its records in ControlPlane::RunCycle). Pure: no I/O, no clock (the snapshot's
// `now` is the time of the decisions).
#pragma once

#include "sched/scheduler.h"
#include "sched/types.h"

namespace abacus::sched {

// Applies `result`, decided by Schedule on `*snapshot`, to that snapshot at snapshot->now, in
// this order: each admitted workload is admitted on its flavors and placements (NoteAdmission);
// each victim is evicting, stops by now + its grace and yields to its preemptor (NotePreemption;
// a victim already evicting is left as it is); then every admitted preemptor's claims end
// (EndClaims, docs/scheduler.md "Reclaimed capacity goes to the preemptor").
void ApplyCycle(const CycleResult& result, Snapshot* snapshot);

}  // namespace abacus::sched
