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

// Returns the number of RDMA host channel adapters under `class_dir` (/sys/class/infiniband: one
// entry per HCA, "mlx5_0", …); 0 when the folder is missing or empty.
int CountInfinibandHcas(const std::string& class_dir);

// Reads the host through procfs (`proc_root`, "/proc") and hwloc. When hwloc cannot load, the
// host still has CPU and memory from procfs and a single NUMA node holding everything.
class ProcfsHwlocHostSource final : public HostSource {
 public:
  explicit ProcfsHwlocHostSource(std::string proc_root = "/proc", std::string infiniband_dir = "/sys/class/infiniband")
      : proc_root_(std::move(proc_root)), infiniband_dir_(std::move(infiniband_dir)) {}
  // Also counts RDMA HCAs (extended resource "rdma/hca") when the host has any.
  Result<HostInfo> Read() override;

 private:
  std::string proc_root_;
  std::string infiniband_dir_;
};

}  // namespace abacus::agent
