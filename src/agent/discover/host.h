// The host source: CPU and memory from procfs, NUMA nodes and PCI affinity from hwloc 2.x.
#pragma once

#include <string>
#include <string_view>

#include "agent/discover/discoverer.h"

namespace abacus::agent {

// Returns MemTotal of a /proc/meminfo text in bytes; InvalidArgument naming the line when the
// field is missing or malformed.
Result<int64_t> ParseMemInfoTotal(std::string_view meminfo);

// Returns the number of "processor" entries of a /proc/cpuinfo text (0 when none).
int CountCpuInfoProcessors(std::string_view cpuinfo);

// Reads the host through procfs (`proc_root`, "/proc") and hwloc. When hwloc cannot load, the
// host still has CPU and memory from procfs and a single NUMA node holding everything.
class ProcfsHwlocHostSource final : public HostSource {
 public:
  explicit ProcfsHwlocHostSource(std::string proc_root = "/proc") : proc_root_(std::move(proc_root)) {}
  Result<HostInfo> Read() override;

 private:
  std::string proc_root_;
};

}  // namespace abacus::agent
