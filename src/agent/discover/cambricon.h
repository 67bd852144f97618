// Cambricon MLUs through `cnmon info`: one "Card N" section per device with "Key : Value" lines
// and indented sub-sections (PCIe bus, physical memory, ECC).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agent/command.h"
#include "agent/discover/discoverer.h"

namespace abacus::agent {

struct CnmonCard {
  int index = 0;
  std::string product;  // "MLU370-X8"
  std::string uuid;
  std::string driver;   // "v5.10.22" as printed
  std::string bus_id;   // "0000:1a:00.0" from Domain/Bus/Device/Function
  int64_t memory_bytes = 0;
  int64_t memory_used_bytes = 0;
  int64_t uncorrected_ecc = 0;  // multi-bit (uncorrectable) ECC errors
  bool healthy_flag = true;     // false when a "Health"/"Status" line says otherwise
};

// Parses `cnmon info`. InvalidArgument "cnmon info: line N: …" on a malformed card header or
// memory size.
Result<std::vector<CnmonCard>> ParseCnmonInfo(std::string_view text);

// Devices npu/cambricon/<product>, Unhealthy on uncorrectable ECC errors or a non-OK health line,
// runtime "neuware" from /usr/local/neuware/version (when present).
class CambriconDeviceSource final : public DeviceSource {
 public:
  CambriconDeviceSource(std::shared_ptr<CommandRunner> runner, std::string neuware_root = "/usr/local/neuware")
      : runner_(std::move(runner)), root_(std::move(neuware_root)) {}
  std::string_view name() const override { return "cnmon"; }
  Result<std::vector<Device>> Discover(const HostInfo& host, const std::vector<Device>& so_far) override;

 private:
  std::shared_ptr<CommandRunner> runner_;
  std::string root_;
};

}  // namespace abacus::agent
