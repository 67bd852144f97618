// Flavor: a schedulable class of device, "KIND/VENDOR/MODEL" ("gpu/nvidia/A100-80G") or "cpu";
// FlavorPattern selects several ("gpu/*", "gpu/nvidia/*", "gpu/nvidia/A100*").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace abacus {

// The device kinds Abacus knows. CPU capacity is not a device; "cpu" is the flavor of CPU-only
// work and of the cpu/memory quota.
enum class DeviceKind : uint8_t { kCpu, kGpu, kNpu };

// Returns "cpu", "gpu" or "npu".
std::string_view DeviceKindName(DeviceKind kind);
// Parses "cpu", "gpu" or "npu".
Result<DeviceKind> ParseDeviceKind(std::string_view text);

// A small dense id for an interned flavor; the scheduler indexes arrays with it.
using FlavorId = uint16_t;
inline constexpr FlavorId kCpuFlavorId = 0;  // "cpu" is always interned first

class Flavor {
 public:
  // Parses "cpu" or "KIND/VENDOR/MODEL": kind gpu|npu, vendor [a-z0-9-]+, model
  // [A-Za-z0-9._-]+. InvalidArgument with the reason otherwise.
  static Result<Flavor> Parse(std::string_view text);
  // Returns the CPU flavor.
  static Flavor Cpu();

  DeviceKind kind() const { return kind_; }
  const std::string& vendor() const { return vendor_; }
  const std::string& model() const { return model_; }
  // Returns "cpu" or "kind/vendor/model".
  const std::string& name() const { return name_; }
  bool is_accelerator() const { return kind_ != DeviceKind::kCpu; }

  // Returns the process-wide dense id of this flavor, interning it on first use (thread-safe).
  FlavorId Intern() const;
  // Returns the flavor interned as `id`; `id` must come from Intern().
  static const Flavor& FromId(FlavorId id);
  // Returns the number of flavors interned so far.
  static size_t InternedCount();

  bool operator==(const Flavor& other) const { return name_ == other.name_; }
  bool operator<(const Flavor& other) const { return name_ < other.name_; }

 private:
  DeviceKind kind_ = DeviceKind::kCpu;
  std::string vendor_;
  std::string model_;
  std::string name_ = "cpu";
};

// A selector over flavors: "*", "gpu/*", "gpu/nvidia/*", "gpu/nvidia/A100*", "npu/huawei/Ascend910B".
// Each segment is a literal, "*" or a literal prefix followed by "*"; missing trailing segments
// after a "*" match anything.
class FlavorPattern {
 public:
  // Parses a pattern; InvalidArgument naming the bad segment otherwise.
  static Result<FlavorPattern> Parse(std::string_view text);

  // Returns true when `flavor` is selected.
  bool Matches(const Flavor& flavor) const;
  // Returns true when the pattern names exactly one flavor (no wildcard).
  bool IsExact() const;
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  std::vector<std::string> segments_;  // 1 to 3 segments
};

}  // namespace abacus
