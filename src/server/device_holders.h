// Who holds each device, as a caller may see it: the workloads it may see by id and name, the
// rest (work of tenants it may not see) only as a sum of milli-devices. GET /api/v1/nodes puts
// this on every device entry so that pages show what the server computed (docs/api.md).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/records.h"

namespace abacus::server {

struct DeviceHolder {
  std::string workload;  // the workload id
  std::string name;
  int32_t milli = 0;  // of this device
};

struct DeviceHolding {
  std::vector<DeviceHolder> holders;  // visible workloads, by workload id
  int32_t hidden_milli = 0;           // held by workloads the caller may not see
};

struct NodeHolding {
  std::map<int, DeviceHolding> devices;  // by device index
  int64_t hidden_cpu_milli = 0;          // CPU and memory held by workloads the caller may not see
  int64_t hidden_memory_bytes = 0;
};

// node -> its holding.
using DeviceHoldings = std::map<std::string, NodeHolding>;

// Returns the holdings of every node and device held by a workload holding quota in
// `workloads`; a workload `visible` rejects counts only in the hidden sums, by neither id nor
// name (null `visible`: every workload is seen).
DeviceHoldings HoldingsAsSeenBy(const std::unordered_map<std::string, WorkloadRecord>& workloads,
                                const std::function<bool(const Workload&)>& visible);

}  // namespace abacus::server
