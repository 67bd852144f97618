#include "agent/discover/discoverer.h"

#include "agent/command.h"
#include "agent/discover/ascend.h"
#include "agent/discover/cambricon.h"
#include "agent/discover/fake.h"
#include "agent/discover/host.h"
#include "agent/discover/nvml.h"
#include "agent/discover/rocm.h"
#include "common/log.h"

namespace abacus::agent {

Result<Discovery> NodeDiscoverer::Discover() {
  Discovery out;
  ABACUS_ASSIGN_OR_RETURN(out.host, host_->Read());
  for (const auto& source : sources_) {
    auto devices = source->Discover(out.host, out.devices);
    if (!devices.ok()) {
      Status problem = devices.status().WithContext(std::string(source->name()));
      ABACUS_LOG_WARN("device discovery: {}", problem.ToString());
      out.problems.push_back(std::move(problem));
      continue;
    }
    for (auto& d : *devices) out.devices.push_back(std::move(d));
  }
  return out;
}

Result<std::unique_ptr<Discoverer>> MakeDiscoverer(const DiscoveryOptions& options) {
  std::vector<std::unique_ptr<DeviceSource>> sources;
  if (options.real_devices) {
    std::shared_ptr<CommandRunner> runner = options.runner;
    if (!runner) runner = std::make_shared<SystemCommandRunner>();
    std::string lib = options.nvml_library;
    sources.push_back(std::make_unique<NvmlDeviceSource>([lib] { return OpenNvml(lib); }));
    sources.push_back(std::make_unique<AscendDeviceSource>(runner, options.ascend_root));
    sources.push_back(std::make_unique<RocmDeviceSource>(runner, options.rocm_root));
    sources.push_back(std::make_unique<HygonDeviceSource>(runner, options.dtk_root));
    sources.push_back(std::make_unique<CambriconDeviceSource>(runner));
  }
  if (!options.fake_devices.empty()) {
    ABACUS_ASSIGN_OR_RETURN(auto specs, ParseFakeDeviceSpecs(options.fake_devices));
    sources.push_back(std::make_unique<FakeDeviceSource>(std::move(specs), options.node_name));
  }
  return std::unique_ptr<Discoverer>(
      std::make_unique<NodeDiscoverer>(std::make_unique<ProcfsHwlocHostSource>(), std::move(sources)));
}

}  // namespace abacus::agent
