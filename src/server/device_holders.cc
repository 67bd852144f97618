#include "server/device_holders.h"

#include <algorithm>

namespace abacus::server {

DeviceHoldings HoldingsAsSeenBy(const std::unordered_map<std::string, WorkloadRecord>& workloads,
                                const std::function<bool(const Workload&)>& visible) {
  DeviceHoldings out;
  for (const auto& entry : workloads) {
    const WorkloadRecord& r = entry.second;  // a named reference: lambdas below capture it
    if (!r.holds_quota()) continue;
    const bool seen = !visible || visible(r.spec);
    for (const auto& p : r.placements) {
      NodeHolding& node = out[p.node];
      if (!seen) {
        node.hidden_cpu_milli += p.cpu_milli;
        node.hidden_memory_bytes += p.memory_bytes;
      }
      for (const auto& d : p.devices) {
        DeviceHolding& h = node.devices[d.index];
        if (!seen) {
          h.hidden_milli += d.milli;
          continue;
        }
        // One entry per workload (several of its tasks may share the device).
        auto it = std::find_if(h.holders.begin(), h.holders.end(),
                               [&](const DeviceHolder& x) { return x.workload == r.id; });
        if (it == h.holders.end()) {
          h.holders.push_back({r.id, r.spec.name, d.milli});
        } else {
          it->milli += d.milli;
        }
      }
    }
  }
  // The map of workloads has no order: list holders by id, so that answers are stable.
  for (auto& [name, node] : out) {
    for (auto& [index, h] : node.devices) {
      std::sort(h.holders.begin(), h.holders.end(),
                [](const DeviceHolder& a, const DeviceHolder& b) { return a.workload < b.workload; });
    }
  }
  return out;
}

}  // namespace abacus::server
