// Device: one accelerator on a node, what it is (flavor, memory, versions, topology) and who
// holds it (whole, or milli-shares and device memory).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "model/flavor.h"

namespace abacus {

enum class DeviceHealth : uint8_t { kHealthy, kUnhealthy, kUnknown };
// Returns "Healthy", "Unhealthy" or "Unknown".
std::string_view DeviceHealthName(DeviceHealth h);

// Where a device sits: NUMA node, interconnect domain (NVLink/HCCS island), PCIe switch.
struct DeviceTopology {
  int numa_node = -1;               // -1 when unknown
  std::string interconnect_domain;  // devices with the same non-empty value share NVLink/HCCS
  std::string pcie_switch;          // e.g. "0000:17:00.0"; empty when unknown
  bool operator==(const DeviceTopology&) const = default;
};

// One holder of (part of) a device.
struct DeviceAllocation {
  std::string task_id;
  int32_t milli = 0;          // 1000 = the whole device
  int64_t memory_bytes = 0;   // device memory granted (whole device: all of it)
  bool operator==(const DeviceAllocation&) const = default;
};

struct Device {
  static constexpr int32_t kWholeMilli = 1000;

  int index = 0;
  std::string uuid;
  Flavor flavor;
  int64_t memory_bytes = 0;
  DeviceHealth health = DeviceHealth::kHealthy;
  std::string driver_version;
  // Runtime stack versions by name: "cuda" → "12.4", "cann" → "8.0.RC1", "rocm" → "6.1".
  std::map<std::string, std::string> runtime_versions;
  DeviceTopology topology;
  bool simulated = false;  // added by --fake-devices; shown as such in the ledger
  std::vector<DeviceAllocation> allocations;

  // Sum of allocated milli-shares (0..1000).
  int32_t AllocatedMilli() const;
  // Sum of allocated device memory.
  int64_t AllocatedMemory() const;
  int32_t FreeMilli() const { return kWholeMilli - AllocatedMilli(); }
  int64_t FreeMemory() const { return memory_bytes - AllocatedMemory(); }
  bool IsIdle() const { return allocations.empty(); }

  // Grants `milli` and `memory_bytes` to `task_id`. FailedPrecondition when the device is
  // unhealthy, the task already holds it, or the grant exceeds what is free: the ledger
  // treats that as a broken invariant (a device must never be allocated twice).
  Status Allocate(const std::string& task_id, int32_t milli, int64_t memory_bytes);
  // Releases `task_id`'s grant; NotFound when it holds none.
  Status Release(const std::string& task_id);
};

// A parsed --fake-devices entry "KIND:VENDOR:MODEL:COUNT[:MEMORY]" (gpu:nvidia:A100-80G:8:80Gi).
struct DeviceSpec {
  Flavor flavor;
  int count = 0;
  int64_t memory_bytes = 0;  // per device; 0 when not given
};

// Parses a comma-separated list of DeviceSpec entries; InvalidArgument naming the bad entry.
Result<std::vector<DeviceSpec>> ParseDeviceSpecs(std::string_view text);

}  // namespace abacus
