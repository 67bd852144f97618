// The environment a task sees: which devices are visible to it, per vendor, and the share of a
// device it was granted.
//
//   vendor     variable                    value
//   nvidia     CUDA_VISIBLE_DEVICES        device indexes, "0,1"
//   huawei     ASCEND_RT_VISIBLE_DEVICES   device (logic) indexes
//   amd        HIP_VISIBLE_DEVICES         device indexes
//   hygon      HIP_VISIBLE_DEVICES         device indexes
//   cambricon  MLU_VISIBLE_DEVICES         device indexes
//   any        ABACUS_DEVICES              device UUIDs, same order
//   shares     ABACUS_DEVICE_SHARE_MILLI   granted milli-device per device ("250")
//              ABACUS_DEVICE_MEMORY_BYTES  granted device memory per device
// A vendor present on the node but not granted gets its variable set to "" so the task sees
// none of those devices (a CPU-only task sees no accelerator).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/device.h"

namespace abacus::agent {

// A device (or a share of one) granted to a task.
struct DeviceGrant {
  Device device;
  int32_t milli = Device::kWholeMilli;
  int64_t memory_bytes = 0;  // 0: all of the device's memory
  bool IsShare() const {
    return milli < Device::kWholeMilli || (memory_bytes > 0 && memory_bytes < device.memory_bytes);
  }
};

// Returns the visibility variable of `vendor`, or "" for a vendor without one.
std::string_view VisibilityVariable(std::string_view vendor);

// Returns the variables that expose exactly `grants` (see the file comment); `node_vendors` are
// the vendors of the node's devices, hidden when not granted.
std::map<std::string, std::string> DeviceEnvironment(const std::vector<DeviceGrant>& grants,
                                                     const std::vector<std::string>& node_vendors);

}  // namespace abacus::agent
