// Units of elastic workloads: an InferenceService replica or a BatchJob slot is one instance of
// the workload's whole task-group set. The scheduler admits the workload with the units it had
// at admission; units added later (scale-up, a replica whose node died, a batch slot lost) are
// admitted one by one as "slices" — pending entries "<workload id>#<unit>" in the snapshot —
// and units removed (scale-down, released batch slots) give their capacity back at once.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "server/records.h"

namespace abacus::server {

// True for the kinds whose units come and go while they run (InferenceService, BatchJob).
bool IsElastic(const WorkloadRecord& r);

// Returns the unit placement `p` belongs to: replica / the group's replicas for elastic kinds,
// the replica otherwise.
int32_t UnitOf(const WorkloadRecord& r, const PlacementRecord& p);

// Returns the units that have placements.
std::set<int32_t> PlacedUnits(const WorkloadRecord& r);

// Returns how many units `r` should hold now: an InferenceService its replicas (the controller's
// ScaleTo keeps spec.replicas current), a BatchJob min(parallelism, array tasks not yet done or
// failed). 0 for other kinds.
int32_t WantedUnits(const WorkloadRecord& r);

// Returns the units below WantedUnits that have no placement, for a workload that is Admitted or
// Running; empty otherwise.
std::vector<int32_t> MissingUnits(const WorkloadRecord& r);

// Returns "<workload id>#<unit>", the snapshot id of a slice (its record and unit travel beside
// it in SnapshotIndex::slices: the id is never parsed back).
std::string SliceId(std::string_view workload_id, int32_t unit);

// Returns the version a new replica `unit` of InferenceService `r` starts with: the one its
// rollout wants, else the workload's "version" label ("" when none).
std::string InitialVersion(const WorkloadRecord& r, int32_t unit);

}  // namespace abacus::server
