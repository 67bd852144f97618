// Re-discovery diff: what changed between two discoveries of the same node.
#pragma once

#include <string>
#include <vector>

#include "model/device.h"

namespace abacus::agent {

struct DeviceDiff {
  std::vector<Device> added;    // present now, not before
  std::vector<Device> removed;  // present before, gone now (the scheduler must stop using them)
  // Same device (same identity) whose health changed: {before, after}.
  std::vector<std::pair<Device, Device>> health_changed;
  // Same device, same health, other attributes changed (memory, versions, topology, flavor).
  std::vector<std::pair<Device, Device>> changed;

  bool empty() const { return added.empty() && removed.empty() && health_changed.empty() && changed.empty(); }
  // Returns one line per change: "removed gpu/nvidia/H200 #3 (GPU-…)", "health gpu/… #1: Healthy -> Unhealthy".
  std::vector<std::string> Describe() const;
};

// Compares two device lists. Devices are matched by UUID, or by flavor and index when a UUID is
// empty. Allocations are not compared (discovery never carries them).
DeviceDiff DiffDevices(const std::vector<Device>& previous, const std::vector<Device>& current);

}  // namespace abacus::agent
