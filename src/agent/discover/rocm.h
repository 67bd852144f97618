// AMD GPUs through `rocm-smi --showproductname --showmeminfo vram --showbus --showuniqueid --json`
// and Hygon DCUs through `hy-smi --showproductname --showmeminfo vram --showbus` (the same
// "DCU[N] : Key: value" text that rocm-smi prints without --json).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agent/command.h"
#include "agent/discover/discoverer.h"

namespace abacus::agent {

// One card as the tool prints it.
struct SmiCard {
  int index = 0;
  std::string product;       // "AMD Instinct MI210", "Z100L"
  std::string unique_id;     // empty when not printed
  std::string bus_id;        // empty when not printed
  int64_t memory_bytes = -1;  // -1: the tool could not read VRAM
  int64_t memory_used_bytes = 0;
};

// Parses rocm-smi JSON ({"card0": {...}, "system": {...}}). InvalidArgument
// "rocm-smi: line N: …" (from the JSON parser) or "rocm-smi: card0: …".
Result<std::vector<SmiCard>> ParseRocmSmiJson(std::string_view text);

// Parses hy-smi (or rocm-smi text) output: lines "DCU[0]  : Card Series:  Z100L",
// "DCU[0] : vram Total Memory (B): 34342961152". InvalidArgument "hy-smi: line N: …" on a
// malformed numeric field.
Result<std::vector<SmiCard>> ParseHySmi(std::string_view text);

// "AMD Instinct MI250X" → "MI250X", "Radeon RX 7900 XTX" → "RX-7900-XTX"; an AMD name
// absent: "unknown".
std::string NormalizeAmdModel(std::string_view product);
// "Z100L" → "DCU-Z100L", "K100_AI" → "DCU-K100_AI", "DCU Z100" → "DCU-Z100".
std::string NormalizeHygonModel(std::string_view product);

// A card whose VRAM the tool cannot read (reported "N/A" or missing) is Unhealthy: the driver no
// longer answers for it.
class RocmDeviceSource final : public DeviceSource {
 public:
  RocmDeviceSource(std::shared_ptr<CommandRunner> runner, std::string rocm_root = "/opt/rocm")
      : runner_(std::move(runner)), root_(std::move(rocm_root)) {}
  std::string_view name() const override { return "rocm-smi"; }
  // Devices gpu/amd/<model>, runtime "rocm" from ROCM_ROOT/.info/version.
  Result<std::vector<Device>> Discover(const HostInfo& host, const std::vector<Device>& so_far) override;

 private:
  std::shared_ptr<CommandRunner> runner_;
  std::string root_;
};

class HygonDeviceSource final : public DeviceSource {
 public:
  HygonDeviceSource(std::shared_ptr<CommandRunner> runner, std::string dtk_root = "/opt/dtk")
      : runner_(std::move(runner)), root_(std::move(dtk_root)) {}
  std::string_view name() const override { return "hy-smi"; }
  // Devices gpu/hygon/DCU-<model>, runtime "dtk" from DTK_ROOT/.info/version.
  Result<std::vector<Device>> Discover(const HostInfo& host, const std::vector<Device>& so_far) override;

 private:
  std::shared_ptr<CommandRunner> runner_;
  std::string root_;
};

}  // namespace abacus::agent
