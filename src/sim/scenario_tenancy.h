// A scenario file's `tenancy` block: the tenancy documents an operator applies (Tenant, Cohort,
// Queue, Pool, Flavor, Cluster, in YAML), read by the server's own parser and turned into the
// scheduler's snapshot by the one translation the server and the event simulator use
// (sched::AddTenancy), so the YAML → snapshot path is under the scenario tests too.
//
//   tenancy
//   kind: Tenant
//   name: research
//   ---
//   kind: Queue
//   ...
//   end
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "common/diagnostic.h"
#include "sched/scheduler.h"

namespace abacus::sim {

// Adds the queues and cohorts of `yaml` (a tenancy block whose first line is the file's line
// `first_line`) to `cluster`, and their names to `queues` / `cohorts` (name → index). Problems go
// to `diags` at the file's lines: YAML and document errors, kinds a tenancy block cannot hold,
// unknown references, and a queue or cohort declared before.
void AddTenancyBlock(std::string_view yaml, const std::string& file, int first_line, sched::Snapshot* cluster,
                     std::map<std::string, int32_t>* queues, std::map<std::string, int32_t>* cohorts,
                     Diagnostics* diags);

}  // namespace abacus::sim
