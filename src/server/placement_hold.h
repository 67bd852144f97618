// What one placement of a workload holds against its queue, in ledger units: cpu milli, memory
// bytes, device milli (and device memory) under its group's flavor, and its group's extended
// resources by name. The one rule that the queue list (`abacus queues`), the /metrics quota
// gauges and the usage intervals (metering, borrowing reports) count by.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "server/records.h"

namespace abacus::server {

struct PlacementHold {
  std::string flavor;  // the group's accelerator flavor; "cpu" when it holds no device
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  int64_t device_milli = 0;
  int64_t device_memory_bytes = 0;
  std::vector<int> devices;                          // device indexes on its node
  const std::map<std::string, int64_t>* extended = nullptr;  // never null (ExtendedHeld)
};

// What placement `p` of `r` holds.
PlacementHold HoldOf(const WorkloadRecord& r, const PlacementRecord& p);

// Calls `add(resource, amount)` for each quota resource `hold` counts against: "cpu", "memory",
// each extended resource, and its flavor when it holds devices.
template <typename Add>
void ForEachQuotaUse(const PlacementHold& hold, Add&& add) {
  add(std::string("cpu"), hold.cpu_milli);
  add(std::string("memory"), hold.memory_bytes);
  for (const auto& [name, amount] : *hold.extended) add(name, amount);
  if (!hold.devices.empty()) add(hold.flavor, hold.device_milli);
}

}  // namespace abacus::server
