// The JSON shapes of the typed read model (read_views.h) at the HTTP edge (issue 22.1): the
// handlers encode the views here (and so do the writes that answer with a node's or a
// workload's view). Field names and values are those of the API (docs/api.md); objects are
// nlohmann's, so keys come out sorted.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "common/status.h"
#include "meter/price_list.h"
#include "server/read_views.h"

namespace abacus::server {

class ControlPlane;
struct WorkloadFilter;

// A queue: its configuration document plus "pending", "admitted", "suspended" {by, since} when
// suspended, and "usage" [{resource, used, nominal, borrowingLimit?, borrowed, borrowedFrom, lent,
// lentTo}].
nlohmann::json QueueJson(const QueueView& q);
// The queue, or its error.
Result<nlohmann::json> QueueJson(const Result<QueueView>& q);
// {"items": [queue, ...]}.
nlohmann::json QueuesJson(const std::vector<QueueView>& queues);

// A node: its record (records.h ToJson) with each device's allocatedMilli, holders [{workload,
// name, milli}], hiddenMilli and utilization (when reported); allocatedCpuMilli,
// allocatedMemoryBytes, allocatedExtended (when any), freeDeviceMilli, hiddenCpuMilli,
// hiddenMemoryBytes and the liveness fields (node_liveness.h).
nlohmann::json NodeJson(const NodeView& n);
// The node, or its error.
Result<nlohmann::json> NodeJson(const Result<NodeView>& n);
// {"items": [node, ...]}.
nlohmann::json NodesJson(const std::vector<NodeView>& nodes);

// {"items": [device with allocatedMilli, utilization (when reported), node, pool]}.
nlohmann::json DevicesJson(const std::vector<DeviceView>& devices);

// A flavor: {name, weight, description, devices, freeMilli, nodes}.
nlohmann::json FlavorJson(const FlavorView& f);
// {"items": [flavor, ...]}.
nlohmann::json FlavorsJson(const std::vector<FlavorView>& flavors);

// {"items": [cluster]}: a declared cluster's document with "declared": true, else {kind, name,
// "declared": false}; "nodes", "readyNodes", "devices" {flavor: {total, allocatedMilli,
// unhealthy?}}, and with nodes "cpuMilli" and "pools".
nlohmann::json ClustersJson(const std::vector<ClusterView>& clusters);

// A workload: its record (records.h ToJson) with "resultsBytes" in place of uploaded results
// (GET /api/v1/evaluations reads them), "submittedAt", "admittedAt" and "finishedAt" (RFC 3339,
// when set), "pendingReason" {code, message, position?} and "status" (the controller's document
// with, for elastic work, wantedUnits, placedUnits, unplaced [{unit, reason?}] and outsidePool
// {pool, replicas, message}) when not empty.
nlohmann::json WorkloadViewJson(const WorkloadRecord& r, const WorkloadStatusView& status);
nlohmann::json WorkloadViewJson(const WorkloadView& w);
// The workload, or its error.
Result<nlohmann::json> WorkloadViewJson(const Result<WorkloadView>& w);
// {"items": [workload without "spec", with the spec's "labels" when it has any], "total"}.
nlohmann::json WorkloadListJson(const WorkloadListView& list);
// GET /api/v1/workloads: `cp.ListWorkloads(filter)` encoded by WorkloadListJson (under the lock).
nlohmann::json ListWorkloadsJson(const ControlPlane& cp, const WorkloadFilter& filter);

// Explain: {id, name, queue, state, reason?, placements? [{group, replica, node, devices}],
// flavors?, text}; a scheduler's reason carries position, ahead, aheadIds, basePriority,
// effectivePriority, waitedSeconds, and quota, placement, preemption and fairShare when known.
Result<nlohmann::json> ExplainJson(const Result<ExplainView>& explain);

// {"id", "items": [{seq, time, timeUs, type, details}]}: a workload's events.
Result<nlohmann::json> WorkloadEventsJson(const Result<StoredEventsView>& events);
// {"node", "items": [...]}: a node's events, as WorkloadEventsJson's items.
Result<nlohmann::json> NodeEventsJson(const Result<StoredEventsView>& events);

// {"id", "name", "revision" (the latest), "items": [{revision, version, image, command, env, at,
// by, diff}]}.
Result<nlohmann::json> RevisionsJson(const Result<RevisionsView>& revisions);

// {"items": [price list document, ...]}.
nlohmann::json PriceListsJson(const std::vector<meter::PriceList>& lists);

// {"items": [...]}: each object's document with, for a built-in priority class, "default": true;
// for a tenant, "projects"; for a pool, "tenantsAllowed", "nodes" and "declared" (a pool only
// nodes name is {kind, name} with them); for a reservation, "state", "window" {start, end} when
// in force or next, and "nodesHeld". Clusters as ClustersJson.
nlohmann::json ConfigListJson(const ConfigListView& list);
// The one object of GetConfig's list, or its error.
Result<nlohmann::json> ConfigItemJson(const Result<ConfigListView>& one);

// {"halfLifeSeconds", "unit", "items"} (shares_api.h SharesJson).
nlohmann::json SharesJson(const SharesView& shares);

}  // namespace abacus::server
