// ResourceVector: exact amounts over cpu (millicores), memory (bytes), per accelerator flavor
// device milli-shares (1000 = one whole device) and device memory (bytes), and extended
// resources (whole units or bytes: "rdma/hca", "ephemeral-storage", "license/matlab").
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "model/extended_resource.h"
#include "model/flavor.h"

namespace abacus {

// The dimensions a ResourceVector holds.
enum class ResourceType : uint8_t {
  kCpu = 0,           // millicores
  kMemory = 1,        // bytes
  kDeviceMilli = 2,   // milli-devices of one flavor
  kDeviceMemory = 3,  // bytes of device memory of one flavor
  kExtended = 4,      // units (or bytes) of one extended resource (model/extended_resource.h)
};

// One dimension: a type and, for device dimensions, the flavor (for kExtended, the ExtendedId).
// Packs into 32 bits.
struct ResourceKey {
  ResourceType type = ResourceType::kCpu;
  FlavorId flavor = kCpuFlavorId;

  static ResourceKey Cpu() { return {ResourceType::kCpu, kCpuFlavorId}; }
  static ResourceKey Memory() { return {ResourceType::kMemory, kCpuFlavorId}; }
  static ResourceKey Devices(FlavorId f) { return {ResourceType::kDeviceMilli, f}; }
  static ResourceKey DeviceMemory(FlavorId f) { return {ResourceType::kDeviceMemory, f}; }
  static ResourceKey Extended(ExtendedId e) { return {ResourceType::kExtended, e}; }

  uint32_t packed() const { return (static_cast<uint32_t>(flavor) << 3) | static_cast<uint32_t>(type); }
  static ResourceKey Unpack(uint32_t p) {
    return {static_cast<ResourceType>(p & 7u), static_cast<FlavorId>(p >> 3)};
  }
  // Returns "cpu", "memory", "<flavor>" (device count), "<flavor>.memory" or the extended
  // resource's name ("rdma/hca").
  std::string ToString() const;
  bool operator==(const ResourceKey&) const = default;
};

// A sparse, sorted vector of (dimension, amount). Absent dimensions are zero; zero amounts are
// never stored. Arithmetic is exact (int64) and overflow-checked.
class ResourceVector {
 public:
  ResourceVector() = default;

  // Returns the amount of `key` (0 when absent).
  int64_t Get(ResourceKey key) const;
  // Sets the amount of `key`.
  void Set(ResourceKey key, int64_t amount);
  // Adds `delta` to `key`; aborts (ABACUS_CHECK) on int64 overflow.
  void Add(ResourceKey key, int64_t delta);

  int64_t cpu_milli() const { return Get(ResourceKey::Cpu()); }
  int64_t memory_bytes() const { return Get(ResourceKey::Memory()); }
  int64_t device_milli(FlavorId f) const { return Get(ResourceKey::Devices(f)); }
  int64_t device_memory(FlavorId f) const { return Get(ResourceKey::DeviceMemory(f)); }
  int64_t extended(ExtendedId e) const { return Get(ResourceKey::Extended(e)); }

  // Element-wise sum/difference; abort on overflow (quantities come from validated input).
  ResourceVector& operator+=(const ResourceVector& other);
  ResourceVector& operator-=(const ResourceVector& other);
  friend ResourceVector operator+(ResourceVector a, const ResourceVector& b) { return a += b; }
  friend ResourceVector operator-(ResourceVector a, const ResourceVector& b) { return a -= b; }
  // Returns this vector times `n`, or OutOfRange on overflow (replicas × per-task request).
  Result<ResourceVector> Times(int64_t n) const;

  // Returns true when every dimension of this vector is <= the same dimension of `limit`.
  bool FitsIn(const ResourceVector& limit) const;
  // Returns the dimensions where this vector exceeds `limit`, with the shortfall amounts.
  ResourceVector ExcessOver(const ResourceVector& limit) const;
  // Element-wise max(0, this - other): what remains needed after `other` is used.
  ResourceVector SaturatingSub(const ResourceVector& other) const;
  // Element-wise minimum / maximum.
  static ResourceVector Min(const ResourceVector& a, const ResourceVector& b);
  static ResourceVector Max(const ResourceVector& a, const ResourceVector& b);

  bool IsZero() const { return entries_.empty(); }
  bool AnyNegative() const;
  size_t size() const { return entries_.size(); }
  // Iterates (key, amount) pairs in key order.
  template <typename F>
  void ForEach(F&& f) const {
    for (const auto& [k, v] : entries_) f(ResourceKey::Unpack(k), v);
  }

  // Returns "cpu=16, memory=64Gi, gpu/nvidia/A100-80G=8, gpu/nvidia/A100-80G.memory=320Gi"
  // (device counts as whole numbers or milli "250m"); "{}" when empty.
  std::string ToString() const;
  bool operator==(const ResourceVector&) const = default;

 private:
  std::vector<std::pair<uint32_t, int64_t>> entries_;  // sorted by packed key
};

// Formats a device amount in milli: "8" for 8000, "250m" for 250, "1500m" for 1500.
std::string FormatDeviceMilli(int64_t milli);
// Formats the amount of `key` as specs write it: "500m" cpu, "64Gi" memory, "8" devices,
// "4" rdma/hca, "500Gi" ephemeral-storage.
std::string FormatAmount(ResourceKey key, int64_t amount);
// Formats bytes exactly with a binary suffix where it divides ("64Gi", "1536Mi", "1000").
std::string FormatBytes(int64_t bytes);

}  // namespace abacus
