// A node's life as its stored events tell it (issue 20.16): each node event carries the node's
// state and devices by flavor after the change, and capacity reports read them back as
// meter::CapacitySpan (registration to removal, Down and Drained time apart).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "meter/capacity.h"
#include "server/records.h"

namespace abacus {
class Store;
}

namespace abacus::server {

// Returns the node's devices counted by flavor.
std::map<std::string, int64_t> DevicesByFlavor(const NodeRecord& node);

// Adds "nodeState" and "deviceFlavors" (flavor → count) of `node` to an event's details.
void AddNodeState(const NodeRecord& node, nlohmann::json& details);

// Returns the capacity spans of the nodes `current` names (node → its devices by flavor now),
// from their events in `store`. Events written before they carried the state count as Ready
// (NotReady events as NotReady) with the devices the node has now.
Result<std::vector<meter::CapacitySpan>> ReadCapacitySpans(
    Store& store, const std::map<std::string, std::map<std::string, int64_t>>& current);

}  // namespace abacus::server
