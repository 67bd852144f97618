// NVIDIA discovery over a fake NVML function table.
#include <gtest/gtest.h>

#include <map>

#include "agent/discover/nvml.h"

namespace abacus::agent {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

// An in-memory NVML: GPUs with names, buses and NVLinks to other buses (GPUs or NVSwitches).
class FakeNvml final : public NvmlApi {
 public:
  struct Gpu {
    std::string name, uuid, bus;
    uint64_t memory = 80 * kGi;
    std::vector<std::string> links;  // remote bus per active link
    int pcie_group = -1;             // GPUs with the same group share a PCIe switch
    uint64_t ecc = 0;
    int handle_error = kNvmlSuccess;
    unsigned util = 0;
  };
  std::vector<Gpu> gpus;
  int init_result = kNvmlSuccess;
  int init_calls = 0, shutdown_calls = 0;

  int Init() override { ++init_calls; return init_result; }
  int Shutdown() override { ++shutdown_calls; return kNvmlSuccess; }
  std::string ErrorString(int r) override { return "fake error " + std::to_string(r); }
  int SystemGetDriverVersion(std::string* v) override { *v = "550.54.15"; return kNvmlSuccess; }
  int SystemGetCudaDriverVersion(int* v) override { *v = 12040; return kNvmlSuccess; }
  int DeviceGetCount(unsigned* n) override { *n = static_cast<unsigned>(gpus.size()); return kNvmlSuccess; }
  int DeviceGetHandleByIndex(unsigned i, NvmlDevice* d) override {
    if (gpus[i].handle_error != kNvmlSuccess) return gpus[i].handle_error;
    *d = &gpus[i];
    return kNvmlSuccess;
  }
  static Gpu& G(NvmlDevice d) { return *static_cast<Gpu*>(d); }
  int DeviceGetName(NvmlDevice d, std::string* s) override { *s = G(d).name; return kNvmlSuccess; }
  int DeviceGetUUID(NvmlDevice d, std::string* s) override { *s = G(d).uuid; return kNvmlSuccess; }
  int DeviceGetMemoryInfo(NvmlDevice d, NvmlMemoryInfo* m) override {
    m->total = G(d).memory;
    m->used = G(d).memory / 4;
    m->free = m->total - m->used;
    return kNvmlSuccess;
  }
  int DeviceGetPciBusId(NvmlDevice d, std::string* s) override { *s = G(d).bus; return kNvmlSuccess; }
  int DeviceGetNvLinkState(NvmlDevice d, unsigned link, bool* active) override {
    if (link >= G(d).links.size()) return kNvmlErrorNotSupported;
    *active = true;
    return kNvmlSuccess;
  }
  int DeviceGetNvLinkRemoteBusId(NvmlDevice d, unsigned link, std::string* s) override {
    *s = G(d).links.at(link);
    return kNvmlSuccess;
  }
  int DeviceGetTopologyCommonAncestor(NvmlDevice a, NvmlDevice b, int* level) override {
    *level = G(a).pcie_group >= 0 && G(a).pcie_group == G(b).pcie_group ? kNvmlTopologySingle : kNvmlTopologySystem;
    return kNvmlSuccess;
  }
  int DeviceGetUtilizationRates(NvmlDevice d, NvmlUtilizationRates* u) override {
    u->gpu = G(d).util;
    u->memory = 0;
    return kNvmlSuccess;
  }
  int DeviceGetUncorrectedEccErrors(NvmlDevice d, uint64_t* n) override {
    *n = G(d).ecc;
    return kNvmlSuccess;
  }
};

NvmlOpener OpenerFor(std::shared_ptr<FakeNvml> fake) {
  return [fake]() -> Result<std::shared_ptr<NvmlApi>> { return std::shared_ptr<NvmlApi>(fake); };
}

HostInfo Host() {
  HostInfo host;
  host.numa_nodes = {{0, 0, 0}, {1, 0, 0}};
  for (int i = 0; i < 8; ++i) {
    char bus[32];
    std::snprintf(bus, sizeof bus, "0000:%02x:00.0", 0x10 + i);
    host.pci_devices.push_back({bus, 0x10de, 0x2335, 0x0302, i < 4 ? 0 : 1});
  }
  return host;
}

std::string Bus(int i) {
  char bus[32];
  std::snprintf(bus, sizeof bus, "00000000:%02X:00.0", 0x10 + i);
  return bus;
}

TEST(NvmlTest, NormalizesModelNames) {
  const std::map<std::string, std::string> table = {
      {"NVIDIA H200", "H200"},
      {"NVIDIA A100-SXM4-80GB", "A100-80G"},
      {"NVIDIA A100-SXM4-40GB", "A100-40G"},
      {"NVIDIA A100 80GB PCIe", "A100-80G"},
      {"NVIDIA A100-PCIE-40GB", "A100-40G"},
      {"NVIDIA H100 80GB HBM3", "H100-80G"},
      {"NVIDIA H100 PCIe", "H100"},
      {"NVIDIA H100 NVL", "H100-NVL"},
      {"Tesla V100-SXM2-32GB", "V100-32G"},
      {"Tesla T4", "T4"},
      {"NVIDIA L40S", "L40S"},
      {"NVIDIA GeForce RTX 4090", "RTX-4090"},
      {"NVIDIA RTX A6000", "RTX-A6000"},
      {"NVIDIA GH200 480GB", "GH200-480G"},
      {"", "unknown"},
  };
  for (const auto& [in, want] : table) {
    EXPECT_EQ(NormalizeNvidiaModel(in), want) << in;
    EXPECT_TRUE(Flavor::Parse("gpu/nvidia/" + want).ok()) << want;
  }
  EXPECT_EQ(FormatCudaDriverVersion(12040), "12.4");
  EXPECT_EQ(FormatCudaDriverVersion(11080), "11.8");
  EXPECT_EQ(FormatCudaDriverVersion(12020), "12.2");
  EXPECT_EQ(FormatCudaDriverVersion(0), "");
}

TEST(NvmlTest, MissingLibraryMeansNoDevices) {
  auto missing = OpenNvml("libnvidia-ml-does-not-exist.so.1");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  NvmlDeviceSource source([] { return OpenNvml("libnvidia-ml-does-not-exist.so.1"); });
  auto devices = source.Discover(HostInfo{}, {});
  ASSERT_TRUE(devices.ok());
  EXPECT_TRUE(devices->empty());
}

TEST(NvmlTest, DriverNotLoadedMeansNoDevicesOtherInitErrorsFail) {
  auto fake = std::make_shared<FakeNvml>();
  fake->init_result = kNvmlErrorDriverNotLoaded;
  NvmlDeviceSource source(OpenerFor(fake));
  auto none = source.Discover(HostInfo{}, {});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  fake->init_result = kNvmlErrorNoPermission;
  auto bad = source.Discover(HostInfo{}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("nvmlInit"), std::string::npos);
}

TEST(NvmlTest, DiscoversHgxBoardWithNvSwitchDomainAndNuma) {
  auto fake = std::make_shared<FakeNvml>();
  for (int i = 0; i < 8; ++i) {
    FakeNvml::Gpu g;
    g.name = "NVIDIA H200";
    g.uuid = "GPU-" + std::to_string(i);
    g.bus = Bus(i);
    g.memory = 141 * kGi;
    g.links = {"00000000:A0:00.0", "00000000:A1:00.0", "00000000:A2:00.0", "00000000:A3:00.0"};  // NVSwitches
    g.pcie_group = i / 2;
    fake->gpus.push_back(g);
  }
  NvmlDeviceSource source(OpenerFor(fake));
  auto devices = source.Discover(Host(), {});
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  ASSERT_EQ(devices->size(), 8u);
  EXPECT_EQ(fake->init_calls, fake->shutdown_calls);
  for (const auto& d : *devices) {
    EXPECT_EQ(d.flavor.name(), "gpu/nvidia/H200");
    EXPECT_EQ(d.memory_bytes, 141 * kGi);
    EXPECT_EQ(d.driver_version, "550.54.15");
    EXPECT_EQ(d.runtime_versions.at("cuda"), "12.4");
    EXPECT_EQ(d.topology.interconnect_domain, "nvlink-0");
    EXPECT_EQ(d.topology.numa_node, d.index < 4 ? 0 : 1);
    EXPECT_EQ(d.health, DeviceHealth::kHealthy);
    EXPECT_FALSE(d.simulated);
  }
  EXPECT_EQ((*devices)[3].topology.pcie_switch, "pcie-2");
  EXPECT_EQ((*devices)[2].topology.pcie_switch, "pcie-2");
}

TEST(NvmlTest, DirectLinksFormTwoIslandsAndBrokenGpusAreUnhealthy) {
  auto fake = std::make_shared<FakeNvml>();
  for (int i = 0; i < 5; ++i) {
    FakeNvml::Gpu g;
    g.name = "NVIDIA A100-SXM4-80GB";
    g.uuid = "GPU-" + std::to_string(i);
    g.bus = Bus(i);
    fake->gpus.push_back(g);
  }
  // Pairs 0-1 and 2-3 bridged; 4 alone.
  fake->gpus[0].links = {Bus(1), Bus(1)};
  fake->gpus[1].links = {Bus(0)};
  fake->gpus[2].links = {Bus(3)};
  fake->gpus[3].links = {Bus(2)};
  fake->gpus[3].ecc = 2;                               // uncorrected ECC errors
  fake->gpus[4].handle_error = kNvmlErrorGpuIsLost;    // fell off the bus
  NvmlDeviceSource source(OpenerFor(fake));
  auto devices = source.Discover(Host(), {});
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  ASSERT_EQ(devices->size(), 5u);
  EXPECT_EQ((*devices)[0].flavor.name(), "gpu/nvidia/A100-80G");
  EXPECT_EQ((*devices)[0].topology.interconnect_domain, "nvlink-0");
  EXPECT_EQ((*devices)[1].topology.interconnect_domain, "nvlink-0");
  EXPECT_EQ((*devices)[2].topology.interconnect_domain, "nvlink-2");
  EXPECT_EQ((*devices)[3].topology.interconnect_domain, "nvlink-2");
  EXPECT_EQ((*devices)[3].health, DeviceHealth::kUnhealthy);
  EXPECT_EQ((*devices)[4].health, DeviceHealth::kUnhealthy);
  EXPECT_EQ((*devices)[4].flavor.name(), "gpu/nvidia/unknown");
  EXPECT_TRUE((*devices)[4].topology.interconnect_domain.empty());
  EXPECT_TRUE((*devices)[0].topology.pcie_switch.empty());
}

}  // namespace
}  // namespace abacus::agent
