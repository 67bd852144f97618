// Simulated devices for --fake-devices: a laptop or CI runs a heterogeneous cluster.
//
// SPEC is a comma-separated list of KIND:VENDOR:MODEL:COUNT[:MEMORY][@KEY=VALUE,...]. The
// attributes after '@' continue over following comma-separated KEY=VALUE items (an item
// without ':' that holds '=' belongs to the entry before it):
//   gpu:nvidia:A100-80G:8:80Gi@cuda=12.4,driver=550.54.15,npu:huawei:Ascend910B3:8:64Gi@cann=8.0.RC1
// Keys: driver (driver version), domain (devices per interconnect domain, default 8, 0: none),
// numa (NUMA nodes the devices are spread over in halves/thirds…, default 2), unhealthy (a
// device index of this entry, reported Unhealthy; may repeat), and any other key is a runtime
// version (cuda, cann, rocm, dtk, neuware). Vendor defaults fill what is not given.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "agent/discover/discoverer.h"
#include "model/device.h"

namespace abacus::agent {

// One parsed --fake-devices entry.
struct FakeDeviceSpec {
  DeviceSpec base;                         // flavor, count, memory (0: the model's default)
  std::string driver_version;              // empty: vendor default
  std::map<std::string, std::string> runtime_versions;  // merged over vendor defaults
  int domain_size = 8;                     // 0: no interconnect domain
  int numa_nodes = 2;
  std::vector<int> unhealthy;              // indexes within this entry
};

// Parses SPEC (see the file comment); InvalidArgument naming the bad entry or attribute.
Result<std::vector<FakeDeviceSpec>> ParseFakeDeviceSpecs(std::string_view text);

// Returns the devices the specs describe: simulated = true, UUID "SIM-<VENDOR>-<MODEL>-<node>-<i>",
// index counted per vendor from `first_index[vendor]` (0 when absent), NUMA node by halves
// (device i of n on node i*numa/n), interconnect domain "<link>-<MODEL>-<group>" per group of
// domain_size (nvlink, hccs, xgmi, mlulink, link).
std::vector<Device> MakeFakeDevices(const std::vector<FakeDeviceSpec>& specs, std::string_view node_name,
                                    std::map<std::string, int> first_index = {});

// The --fake-devices source.
class FakeDeviceSource final : public DeviceSource {
 public:
  FakeDeviceSource(std::vector<FakeDeviceSpec> specs, std::string node_name)
      : specs_(std::move(specs)), node_name_(std::move(node_name)) {}
  std::string_view name() const override { return "fake"; }
  Result<std::vector<Device>> Discover(const HostInfo& host, const std::vector<Device>& so_far) override;

 private:
  std::vector<FakeDeviceSpec> specs_;
  std::string node_name_;
};

}  // namespace abacus::agent
