// The JSON shapes of the typed read model (read_views.h) at the HTTP edge (issue 22.1): the
// handlers, metrics and fleet answers encode the views here. Field names and values are those
// of the API (docs/api.md); objects are nlohmann's, so keys come out sorted.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "common/status.h"
#include "server/read_views.h"

namespace abacus::server {

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

// {"halfLifeSeconds", "unit", "items"} (shares_api.h SharesJson).
nlohmann::json SharesJson(const SharesView& shares);

}  // namespace abacus::server
