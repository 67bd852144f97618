#include "server/placement_hold.h"

namespace abacus::server {

PlacementHold HoldOf(const WorkloadRecord& r, const PlacementRecord& p) {
  PlacementHold h;
  h.flavor = p.devices.empty() || p.group < 0 || p.group >= static_cast<int32_t>(r.group_flavors.size())
                 ? "cpu"
                 : r.group_flavors[p.group];
  h.cpu_milli = p.cpu_milli;
  h.memory_bytes = p.memory_bytes;
  for (const auto& g : p.devices) {
    h.device_milli += g.milli;
    h.device_memory_bytes += g.memory;
    h.devices.push_back(g.index);
  }
  h.extended = &ExtendedHeld(r, p);
  return h;
}

}  // namespace abacus::server
