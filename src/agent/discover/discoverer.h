// Discovery: what a node has — CPU, memory, NUMA and PCI topology (HostInfo) and accelerators
// (model::Device) — assembled from independent sources (procfs+hwloc, NVML, npu-smi, rocm-smi,
// hy-smi, cnmon, --fake-devices). A source that finds nothing returns an empty list; a source
// that fails is reported in Discovery::problems and the others still count.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "model/device.h"

namespace abacus::agent {

// One NUMA node of the host.
struct NumaNode {
  int index = 0;
  int64_t memory_bytes = 0;  // local memory; 0 when unknown
  int cpus = 0;              // processing units (hardware threads) in it
  bool operator==(const NumaNode&) const = default;
};

// One PCI function and where it sits.
struct PciDevice {
  std::string bus_id;  // canonical "dddd:bb:dd.f", lower case
  uint16_t vendor_id = 0;
  uint16_t device_id = 0;
  uint16_t class_id = 0;  // base class << 8 | subclass (0x0302: 3D controller)
  int numa_node = -1;     // -1 when not attached to exactly one NUMA node
  bool operator==(const PciDevice&) const = default;
};

// The host side of a node: CPU, memory, NUMA nodes, PCI devices.
struct HostInfo {
  std::string hostname;
  int64_t cpu_milli = 0;     // usable processing units × 1000
  int64_t memory_bytes = 0;  // MemTotal
  std::vector<NumaNode> numa_nodes;  // at least one once discovered
  std::vector<PciDevice> pci_devices;
  // Extended resources found on the host ("rdma/hca" → HCAs under /sys/class/infiniband).
  std::map<std::string, int64_t> extended;

  // Returns the NUMA node of the PCI function `bus_id` (any common spelling: "00000000:17:00.0",
  // "0000:17:00.0", "17:00.0"), or -1.
  int NumaNodeOfPci(std::string_view bus_id) const;
};

// Returns `bus_id` as "dddd:bb:dd.f" in lower case (a 8-digit NVML domain is shortened, a missing
// domain becomes 0000); the input unchanged when it is not a PCI address.
std::string CanonicalPciBusId(std::string_view bus_id);

// Everything discovery found.
struct Discovery {
  HostInfo host;
  std::vector<Device> devices;
  // Sources that failed (malformed tool output, NVML errors): their devices are left out.
  std::vector<Status> problems;
};

// The node's discovery, as a whole.
class Discoverer {
 public:
  virtual ~Discoverer() = default;
  // Discovers the host and its devices. Fails only when the host itself cannot be read.
  virtual Result<Discovery> Discover() = 0;
};

// Reads CPU, memory, NUMA and PCI topology.
class HostSource {
 public:
  virtual ~HostSource() = default;
  virtual Result<HostInfo> Read() = 0;
};

// One vendor's (or the fake) devices.
class DeviceSource {
 public:
  virtual ~DeviceSource() = default;
  // A short name used in problems and logs: "nvml", "npu-smi", "rocm-smi", "hy-smi", "cnmon",
  // "fake".
  virtual std::string_view name() const = 0;
  // Returns the devices this source sees; `host` gives PCI→NUMA affinity, `so_far` the devices
  // earlier sources found (the fake source numbers its devices after them). An empty list
  // means "no such devices" (tool or library missing).
  virtual Result<std::vector<Device>> Discover(const HostInfo& host,
                                               const std::vector<Device>& so_far) = 0;
};

// Runs a host source, then each device source in order.
class NodeDiscoverer final : public Discoverer {
 public:
  NodeDiscoverer(std::unique_ptr<HostSource> host,
                 std::vector<std::unique_ptr<DeviceSource>> sources)
      : host_(std::move(host)), sources_(std::move(sources)) {}
  Result<Discovery> Discover() override;

 private:
  std::unique_ptr<HostSource> host_;
  std::vector<std::unique_ptr<DeviceSource>> sources_;
};

class CommandRunner;

// What the default discoverer looks at.
struct DiscoveryOptions {
  std::string fake_devices;             // --fake-devices SPEC; empty: none
  std::string node_name;                // used in simulated UUIDs
  bool real_devices = true;             // false: only the host and fake devices
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string ascend_root = "/usr/local/Ascend";
  std::string rocm_root = "/opt/rocm";
  std::string dtk_root = "/opt/dtk";
  std::shared_ptr<CommandRunner> runner;  // empty: run the tools for real
};

// Builds the standard discoverer: procfs+hwloc host, then NVML, npu-smi, rocm-smi, hy-smi,
// cnmon and, when options.fake_devices is set, the fake source. InvalidArgument when the fake
// spec does not parse.
Result<std::unique_ptr<Discoverer>> MakeDiscoverer(const DiscoveryOptions& options);

}  // namespace abacus::agent
