// Device capacity as the integral of what existed (issue 20.16), the way Slurm's sreport counts
// a cluster: each node's devices from its registration to its removal (or now), with the time
// it was Down (NotReady) and Drained (Cordoned, Draining) kept apart. A cluster 15 minutes old
// has 15 minutes of capacity, whatever window a report asks for.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/clock.h"
#include "meter/report_inputs.h"
#include "meter/units.h"

namespace abacus::meter {

// What a node's devices could do over a span of time.
enum class NodeCondition { kUp, kDown, kDrained };

// `devices` devices of `flavor` on `node` in `condition` over [from, to or now).
struct CapacitySpan {
  std::string node;
  std::string flavor;
  int64_t devices = 0;
  Time from{};
  std::optional<Time> to;
  NodeCondition condition = NodeCondition::kUp;
  bool operator==(const CapacitySpan&) const = default;
};

// One change of a node, as its stored events record it: at `at` the node is in `state`
// (NodeStateName: Ready, NotReady, Cordoned, Draining; "Removed" ends it) with `devices`
// (flavor → count).
struct NodeChange {
  Time at{};
  std::string state;
  std::map<std::string, int64_t> devices;
};

// Returns the spans of one node from its changes (in time order): each change holds until the
// next; the last until now. Ready is Up, NotReady Down, Cordoned, Draining and Drained count as Drained, Removed
// ends the node's life.
std::vector<CapacitySpan> NodeCapacitySpans(const std::string& node, std::span<const NodeChange> changes);

// Device capacity of one flavor over a window, in milli-device × microseconds.
struct FlavorCapacity {
  ResourceTime total = 0;    // every device that existed
  ResourceTime down = 0;     // of which on Down nodes
  ResourceTime drained = 0;  // of which on Drained nodes
  ResourceTime available() const { return total - down - drained; }
};

// Sums `spans` clipped to [window.from, window.end()) per flavor.
std::map<std::string, FlavorCapacity> CapacityByFlavor(std::span<const CapacitySpan> spans, const ReportWindow& window);

}  // namespace abacus::meter
