// Which fields of a Queue are the platform's (docs/governance.md, "Who changes which queue
// field"): quotas (nominal, borrowingLimit, lendingLimit, an entry added or removed), cohort and
// weight decide what a tenant may take from the cluster and from other tenants, so only an admin
// changes them; a tenant admin keeps description, queueingStrategy, clusters and
// preferredClusters of its tenant's queues.
#pragma once

#include <string>
#include <vector>

#include "tenancy/queue.h"

namespace abacus::server {

// The platform fields that differ between `before` (null: a new queue) and `after`, each as
// "field (old → new)", e.g. "quotas[cpu].nominal (64 → 1M)", "cohort (c1 → c2)". A new queue
// lists every platform field it sets.
std::vector<std::string> ChangedPlatformQueueFields(const Queue* before, const Queue& after);

}  // namespace abacus::server
