// GET /api/v1/shares[/QUEUE] (docs/api.md, docs/scheduler.md "Fair share over time"): each
// queue's fair share over time, like Slurm's sshare — raw and decayed usage in weighted
// device-hours, weight, share among its cohort siblings and the fair-share factor. A caller sees
// the queues it may see (the visibility rules of GET /api/v1/queues: a tenant's users see their
// tenant's queues).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sched/fair_share.h"

namespace abacus::server {

class ControlPlane;
class RouteTable;

// Returns {"halfLifeSeconds", "items": [{"name", "tenant", "cohort", "rawUsage", "decayedUsage",
// "weight", "share", "usageNorm", "fairShare"}]} by cohort, then name; usage in weighted
// device-hours; `tenant_of` names each share's tenant (same order as `shares`).
nlohmann::json SharesJson(const std::vector<sched::QueueShare>& shares, const std::vector<std::string>& tenant_of,
                          Duration half_life);

// Adds GET /api/v1/shares and GET /api/v1/shares/QUEUE to `t`.
void AddSharesRoutes(RouteTable& t, ControlPlane& cp);

}  // namespace abacus::server
