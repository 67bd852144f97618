// The endpoints of an InferenceService (issue 24, docs/api.md "Service endpoints"): where each
// replica listens and whether a gateway should send it requests, read from the service's
// workload view (GET /api/v1/workloads/{id}).
//
// One endpoint per replica whose first task group's task runs and reported an address (its
// agent's advertise host and the ABACUS_PORT it allocated). `version` is "canary" for a replica
// on the canary version while a canary runs (or is paused), else "stable"; `ready` is whether
// the controller routes traffic to it (readiness passed, not stopping); `state` is "draining"
// once the server decided to stop it (a gateway stops sending new requests there), else
// "serving".
#pragma once

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace abacus::server {

// Returns {"service", "name", "project", "state", "rollout": {phase, stableVersion,
// canaryVersion, canaryPercent}, "healthCheck": {"path"} (an HTTP readiness probe only),
// "autoscaling": {"metric"} (requestsPerSecond or p99LatencyMs: autoscaled on what a gateway sees),
// "items": [{replica, taskId, address, node, version, release, ready, state}]} for the workload
// view `view`; FailedPrecondition when it is not an InferenceService.
Result<nlohmann::json> ServiceEndpoints(const nlohmann::json& view);

}  // namespace abacus::server
