// Huawei Ascend NPUs through npu-smi: `npu-smi info` (model, health, memory, bus id),
// `npu-smi info -t topo` (HCCS links), `npu-smi info -t board -i N` (serial number) and the
// CANN version from the toolkit's install files. DCMI (libdcmi.so) is not used yet.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agent/command.h"
#include "agent/discover/discoverer.h"

namespace abacus::agent {

// One chip row of `npu-smi info` (a card with two chips gives two).
struct NpuSmiChip {
  int npu_id = 0;        // the card ("NPU" column)
  int chip_id = 0;       // the chip on the card
  int logic_id = -1;     // the "Device" column when printed, else -1
  std::string name;      // "910B3", "310P3"
  std::string health;    // "OK", "Warning", "Alarm", "Critical", …
  std::string bus_id;
  int64_t memory_bytes = 0;  // HBM total when the card has HBM, else DDR total
  int64_t memory_used_bytes = 0;
  int aicore_percent = -1;
};

struct NpuSmiInfo {
  std::string version;  // the driver version in the header ("23.0.rc2")
  std::vector<NpuSmiChip> chips;
};

// Parses `npu-smi info`. InvalidArgument "npu-smi info: line N: …" on a malformed table.
Result<NpuSmiInfo> ParseNpuSmiInfo(std::string_view text);

// Parses `npu-smi info -t topo`: returns, for each NPU number of the matrix, the NPUs it reaches
// over HCCS. InvalidArgument "npu-smi info -t topo: line N: …" when a row does not fit the header.
Result<std::map<int, std::vector<int>>> ParseNpuSmiTopo(std::string_view text);

// Parses "Key : Value" lines (npu-smi info -t board, cnmon info); later keys win.
std::map<std::string, std::string> ParseColonKeyValues(std::string_view text);

// Returns the CANN version from an ascend_toolkit_install.info ("version=8.0.RC1"), a
// version.info ("Version=8.0.RC1") or an old version.cfg ("runtime_running_version=[1.83:5.1.RC2]");
// empty when none is found.
std::string ParseCannVersion(std::string_view text);

// Maps an npu-smi health word to DeviceHealth: OK and Warning → Healthy, Alarm and Critical →
// Unhealthy, anything else → Unknown.
DeviceHealth AscendHealth(std::string_view word);

// Returns the flavor model for an npu-smi name: "910B3" → "Ascend910B3", "310P3" → "Ascend310P3",
// "Ascend910B" stays.
std::string NormalizeAscendModel(std::string_view name);

class AscendDeviceSource final : public DeviceSource {
 public:
  AscendDeviceSource(std::shared_ptr<CommandRunner> runner, std::string ascend_root = "/usr/local/Ascend")
      : runner_(std::move(runner)), root_(std::move(ascend_root)) {}
  std::string_view name() const override { return "npu-smi"; }
  // Devices npu/huawei/Ascend<name>, index = logic id (chips in order when not printed),
  // UUID "NPU-<serial>-<chip>" (or "NPU-<bus id>"), driver version from the npu-smi header,
  // runtime "cann", NUMA from the bus id, HCCS domains from the topology matrix or, when that
  // is unavailable, by model (910B: 8 per domain, 910A: 4, 310: none).
  Result<std::vector<Device>> Discover(const HostInfo& host, const std::vector<Device>& so_far) override;

 private:
  std::shared_ptr<CommandRunner> runner_;
  std::string root_;
};

}  // namespace abacus::agent
