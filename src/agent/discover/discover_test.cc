// Discovery tests: vendor-tool parsers on recorded outputs (tests/fixtures/<tool>/), the host
// source on this machine, fake devices and the re-discovery diff.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "agent/command.h"
#include "agent/discover/ascend.h"
#include "agent/discover/cambricon.h"
#include "agent/discover/diff.h"
#include "agent/discover/discoverer.h"
#include "agent/discover/fake.h"
#include "agent/discover/host.h"
#include "agent/discover/rocm.h"

namespace abacus::agent {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGi = int64_t{1} << 30;

std::string Fixture(const std::string& rel) {
  auto text = ReadFileToString(std::string(ABACUS_SOURCE_DIR) + "/tests/fixtures/" + rel);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.value_or("");
}

HostInfo TwoNumaHost() {
  HostInfo host;
  host.cpu_milli = 64000;
  host.memory_bytes = 512 * kGi;
  host.numa_nodes = {{0, 256 * kGi, 32}, {1, 256 * kGi, 32}};
  host.pci_devices = {{"0000:c1:00.0", 0x19e5, 0xd802, 0x1200, 1}, {"0000:01:00.0", 0x19e5, 0xd802, 0x1200, 0},
                      {"0000:c6:00.0", 0x1002, 0x740c, 0x0380, 1}, {"0000:1a:00.0", 0xcabc, 0x0370, 0x1200, 0}};
  return host;
}

// ---- host ----

TEST(HostTest, ParsesMemInfoAndCpuInfo) {
  auto total = ParseMemInfoTotal(Fixture("procfs/meminfo.txt"));
  ASSERT_TRUE(total.ok()) << total.status().ToString();
  EXPECT_EQ(*total, int64_t{263861024} * 1024);
  EXPECT_EQ(CountCpuInfoProcessors(Fixture("procfs/cpuinfo_4.txt")), 4);
  auto bad = ParseMemInfoTotal("MemFree: 1 kB\nMemTotal: lots kB\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 2"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(ParseMemInfoTotal("MemFree: 1 kB\n").ok());
}

TEST(HostTest, ReadsThisMachine) {
  ProcfsHwlocHostSource source;
  auto host = source.Read();
  ASSERT_TRUE(host.ok()) << host.status().ToString();
  EXPECT_GE(host->cpu_milli, 1000);
  EXPECT_GT(host->memory_bytes, 0);
  ASSERT_GE(host->numa_nodes.size(), 1u);  // one NUMA node is a fine answer
  for (const auto& p : host->pci_devices) EXPECT_EQ(CanonicalPciBusId(p.bus_id), p.bus_id);
}

TEST(HostTest, CanonicalPciBusIds) {
  EXPECT_EQ(CanonicalPciBusId("00000000:17:00.0"), "0000:17:00.0");
  EXPECT_EQ(CanonicalPciBusId("0000:C1:00.0"), "0000:c1:00.0");
  EXPECT_EQ(CanonicalPciBusId("c1:00.0"), "0000:c1:00.0");
  EXPECT_EQ(CanonicalPciBusId("N/A"), "N/A");
  HostInfo host = TwoNumaHost();
  EXPECT_EQ(host.NumaNodeOfPci("00000000:C1:00.0"), 1);
  EXPECT_EQ(host.NumaNodeOfPci("0000:99:00.0"), -1);
}

// ---- npu-smi ----

TEST(AscendTest, Parses910BInfo) {
  auto info = ParseNpuSmiInfo(Fixture("npu-smi/info_910b_8.txt"));
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->version, "23.0.6");
  ASSERT_EQ(info->chips.size(), 8u);
  EXPECT_EQ(info->chips[0].name, "910B3");
  EXPECT_EQ(info->chips[0].bus_id, "0000:C1:00.0");
  EXPECT_EQ(info->chips[0].memory_bytes, 65536 * kMiB);  // HBM, not the empty DDR column
  EXPECT_EQ(info->chips[2].memory_used_bytes, 40211 * kMiB);
  EXPECT_EQ(info->chips[2].aicore_percent, 12);
  EXPECT_EQ(info->chips[7].health, "Warning");
  EXPECT_EQ(info->chips[7].logic_id, -1);
}

TEST(AscendTest, Parses310PDuoWithTwoChipsPerCardAndAnAlarm) {
  auto info = ParseNpuSmiInfo(Fixture("npu-smi/info_310p_duo_alarm.txt"));
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  ASSERT_EQ(info->chips.size(), 4u);
  EXPECT_EQ(info->chips[1].npu_id, 1);
  EXPECT_EQ(info->chips[1].chip_id, 1);
  EXPECT_EQ(info->chips[1].logic_id, 1);
  EXPECT_EQ(info->chips[3].logic_id, 3);
  EXPECT_EQ(info->chips[3].health, "Alarm");
  EXPECT_EQ(info->chips[0].memory_bytes, 44280 * kMiB);
}

TEST(AscendTest, MalformedInfoNamesToolAndLine) {
  auto info = ParseNpuSmiInfo(Fixture("npu-smi/info_malformed.txt"));
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(info.status().message().find("npu-smi info: line 10"), std::string::npos) << info.status().message();
}

TEST(AscendTest, ParsesTopologyAndVersions) {
  auto topo = ParseNpuSmiTopo(Fixture("npu-smi/topo_910a_two_islands.txt"));
  ASSERT_TRUE(topo.ok()) << topo.status().ToString();
  EXPECT_EQ((*topo)[0], (std::vector<int>{1, 2, 3}));
  EXPECT_EQ((*topo)[5], (std::vector<int>{4, 6, 7}));
  EXPECT_FALSE(ParseNpuSmiTopo("      NPU0  NPU1\nNPU0  X\n").ok());
  EXPECT_EQ(ParseCannVersion(Fixture("ascend/ascend_toolkit_install.info")), "8.0.RC1");
  EXPECT_EQ(ParseCannVersion(Fixture("ascend/version.cfg")), "5.1.RC2");
  EXPECT_EQ(ParseCannVersion("Version=7.0.0\n"), "7.0.0");
  EXPECT_EQ(ParseColonKeyValues(Fixture("npu-smi/board_0.txt"))["Serial Number"], "102326218610");
  EXPECT_EQ(NormalizeAscendModel("910B3"), "Ascend910B3");
  EXPECT_EQ(NormalizeAscendModel("Ascend910B"), "Ascend910B");
  EXPECT_EQ(AscendHealth("OK"), DeviceHealth::kHealthy);
  EXPECT_EQ(AscendHealth("Warning"), DeviceHealth::kHealthy);
  EXPECT_EQ(AscendHealth("Critical"), DeviceHealth::kUnhealthy);
  EXPECT_EQ(AscendHealth("UNKNOWN"), DeviceHealth::kUnknown);
}

TEST(AscendTest, SourceBuildsDevicesWithCannAndHccsDomains) {
  auto dir = std::filesystem::temp_directory_path() / ("abacus-ascend-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / "ascend-toolkit/latest/aarch64-linux");
  std::filesystem::copy_file(std::string(ABACUS_SOURCE_DIR) + "/tests/fixtures/ascend/ascend_toolkit_install.info",
                             dir / "ascend-toolkit/latest/aarch64-linux/ascend_toolkit_install.info",
                             std::filesystem::copy_options::overwrite_existing);
  auto runner = std::make_shared<ReplayCommandRunner>();
  runner->SetOutput("npu-smi info", Fixture("npu-smi/info_910b_8.txt"));
  runner->SetOutput("npu-smi info -t topo", Fixture("npu-smi/topo_910b_8.txt"));
  runner->SetOutput("npu-smi info -t board -i 0", Fixture("npu-smi/board_0.txt"));
  AscendDeviceSource source(runner, dir.string());
  auto devices = source.Discover(TwoNumaHost(), {});
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  ASSERT_EQ(devices->size(), 8u);
  const Device& d0 = (*devices)[0];
  EXPECT_EQ(d0.flavor.name(), "npu/huawei/Ascend910B3");
  EXPECT_EQ(d0.uuid, "NPU-102326218610-0");
  EXPECT_EQ((*devices)[1].uuid, "NPU-0000:c2:00.0");  // no board info for card 1
  EXPECT_EQ(d0.runtime_versions.at("cann"), "8.0.RC1");
  EXPECT_EQ(d0.driver_version, "23.0.6");
  EXPECT_EQ(d0.topology.numa_node, 1);
  EXPECT_EQ((*devices)[4].topology.numa_node, 0);
  for (const auto& d : *devices) EXPECT_EQ(d.topology.interconnect_domain, "hccs-0");
  EXPECT_EQ((*devices)[7].health, DeviceHealth::kHealthy);  // Warning still schedulable
}

TEST(AscendTest, SourceFallsBackToModelDomainsAndMarksAlarmUnhealthy) {
  auto runner = std::make_shared<ReplayCommandRunner>();
  runner->SetOutput("npu-smi info", Fixture("npu-smi/info_310p_duo_alarm.txt"));
  AscendDeviceSource source(runner, "/nonexistent");
  auto devices = source.Discover(HostInfo{}, {});
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  ASSERT_EQ(devices->size(), 4u);
  EXPECT_EQ((*devices)[2].index, 2);
  EXPECT_EQ((*devices)[2].health, DeviceHealth::kUnhealthy);
  EXPECT_EQ((*devices)[0].health, DeviceHealth::kHealthy);
  EXPECT_TRUE((*devices)[0].topology.interconnect_domain.empty());  // 310P: PCIe only
  EXPECT_EQ((*devices)[0].runtime_versions.count("cann"), 0u);
}

TEST(AscendTest, MissingToolMeansNoDevicesAndMalformedIsAnError) {
  auto runner = std::make_shared<ReplayCommandRunner>();
  AscendDeviceSource source(runner);
  auto none = source.Discover(HostInfo{}, {});
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  runner->SetOutput("npu-smi info", Fixture("npu-smi/info_malformed.txt"));
  auto bad = source.Discover(HostInfo{}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("npu-smi info: line 10"), std::string::npos);
}

// ---- rocm-smi / hy-smi ----

TEST(RocmTest, ParsesMi250xJson) {
  auto cards = ParseRocmSmiJson(Fixture("rocm-smi/mi250x_4.json"));
  ASSERT_TRUE(cards.ok()) << cards.status().ToString();
  ASSERT_EQ(cards->size(), 4u);
  EXPECT_EQ((*cards)[3].index, 3);
  EXPECT_EQ((*cards)[0].memory_bytes, 68702699520);
  EXPECT_EQ(NormalizeAmdModel((*cards)[0].product), "MI250X");
  EXPECT_EQ(NormalizeAmdModel("Radeon RX 7900 XTX"), "RX-7900-XTX");
}

TEST(RocmTest, SourceMarksUnreadableCardUnhealthy) {
  auto runner = std::make_shared<ReplayCommandRunner>();
  runner->SetOutput("rocm-smi --showproductname --showmeminfo vram --showbus --showuniqueid --showdriverversion --json",
                    Fixture("rocm-smi/mi210_2_one_unreadable.json"));
  RocmDeviceSource source(runner, "/nonexistent");
  auto devices = source.Discover(HostInfo{}, {});
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  ASSERT_EQ(devices->size(), 2u);
  EXPECT_EQ((*devices)[0].flavor.name(), "gpu/amd/MI210");
  EXPECT_EQ((*devices)[0].health, DeviceHealth::kHealthy);
  EXPECT_EQ((*devices)[0].driver_version, "6.3.6");
  EXPECT_EQ((*devices)[0].uuid, "AMD-0x5d3c8e2a90b1f467");
  EXPECT_EQ((*devices)[1].health, DeviceHealth::kUnhealthy);
  EXPECT_EQ((*devices)[1].uuid, "AMD-0000:83:00.0");
}

TEST(RocmTest, MalformedJsonNamesToolAndLine) {
  auto cards = ParseRocmSmiJson(Fixture("rocm-smi/malformed.json"));
  ASSERT_FALSE(cards.ok());
  EXPECT_NE(cards.status().message().find("rocm-smi"), std::string::npos);
  EXPECT_NE(cards.status().message().find("line 8"), std::string::npos) << cards.status().message();
  auto bad_value = ParseRocmSmiJson(R"j({"card0": {"Card series": "MI210", "VRAM Total Memory (B)": "64 GB"}})j");
  ASSERT_FALSE(bad_value.ok());
  EXPECT_NE(bad_value.status().message().find("card0"), std::string::npos);
}

TEST(HygonTest, ParsesHySmi) {
  auto cards = ParseHySmi(Fixture("hy-smi/z100l_4.txt"));
  ASSERT_TRUE(cards.ok()) << cards.status().ToString();
  ASSERT_EQ(cards->size(), 4u);
  EXPECT_EQ((*cards)[2].product, "Z100L");
  EXPECT_EQ((*cards)[2].memory_used_bytes, 1218510848);
  EXPECT_EQ((*cards)[3].bus_id, "0000:63:00.0");
  EXPECT_EQ(NormalizeHygonModel("Z100L"), "DCU-Z100L");
  EXPECT_EQ(NormalizeHygonModel("K100_AI"), "DCU-K100_AI");
}

TEST(HygonTest, SourceMarksUnreadableCardUnhealthyAndMalformedNamesLine) {
  auto runner = std::make_shared<ReplayCommandRunner>();
  runner->SetOutput("hy-smi --showproductname --showmeminfo vram --showbus --showuniqueid",
                    Fixture("hy-smi/k100ai_2_one_unreadable.txt"));
  HygonDeviceSource source(runner, "/nonexistent");
  auto devices = source.Discover(HostInfo{}, {});
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  ASSERT_EQ(devices->size(), 2u);
  EXPECT_EQ((*devices)[0].flavor.name(), "gpu/hygon/DCU-K100_AI");
  EXPECT_EQ((*devices)[0].health, DeviceHealth::kHealthy);
  EXPECT_EQ((*devices)[1].health, DeviceHealth::kUnhealthy);
  auto bad = ParseHySmi(Fixture("hy-smi/malformed.txt"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("hy-smi: line 6"), std::string::npos) << bad.status().message();
}

// ---- cnmon ----

TEST(CambriconTest, ParsesCnmonInfo) {
  auto cards = ParseCnmonInfo(Fixture("cnmon/mlu370_x8_2.txt"));
  ASSERT_TRUE(cards.ok()) << cards.status().ToString();
  ASSERT_EQ(cards->size(), 2u);
  EXPECT_EQ((*cards)[0].product, "MLU370-X8");
  EXPECT_EQ((*cards)[0].bus_id, "0000:1a:00.0");
  EXPECT_EQ((*cards)[1].memory_bytes, 24576 * kMiB);
  EXPECT_EQ((*cards)[1].memory_used_bytes, 9012 * kMiB);
  EXPECT_EQ((*cards)[0].uncorrected_ecc, 0);
}

TEST(CambriconTest, SourceMarksEccErrorsUnhealthy) {
  auto runner = std::make_shared<ReplayCommandRunner>();
  runner->SetOutput("cnmon info", Fixture("cnmon/mlu590_2_ecc_error.txt"));
  CambriconDeviceSource source(runner, "/nonexistent");
  auto devices = source.Discover(HostInfo{}, {});
  ASSERT_TRUE(devices.ok()) << devices.status().ToString();
  ASSERT_EQ(devices->size(), 2u);
  EXPECT_EQ((*devices)[0].flavor.name(), "npu/cambricon/MLU590-H8");
  EXPECT_EQ((*devices)[0].health, DeviceHealth::kHealthy);  // corrected errors only
  EXPECT_EQ((*devices)[1].health, DeviceHealth::kUnhealthy);
  EXPECT_EQ((*devices)[1].driver_version, "5.10.29");
  EXPECT_EQ((*devices)[1].memory_bytes, 81920 * kMiB);
}

TEST(CambriconTest, MalformedNamesToolAndLine) {
  auto cards = ParseCnmonInfo(Fixture("cnmon/malformed.txt"));
  ASSERT_FALSE(cards.ok());
  EXPECT_NE(cards.status().message().find("cnmon info: line 5"), std::string::npos) << cards.status().message();
  EXPECT_FALSE(ParseCnmonInfo("Card zero\n").ok());
}

// ---- fake devices ----

TEST(FakeTest, ParsesSpecWithAttributes) {
  auto specs = ParseFakeDeviceSpecs(
      "gpu:nvidia:A100-80G:8:80Gi@cuda=12.4,driver=550.54,npu:huawei:Ascend910B3:4@cann=8.0.RC1,domain=4,unhealthy=2,"
      "gpu:nvidia:V100-32G:2");
  ASSERT_TRUE(specs.ok()) << specs.status().ToString();
  ASSERT_EQ(specs->size(), 3u);
  EXPECT_EQ((*specs)[0].runtime_versions.at("cuda"), "12.4");
  EXPECT_EQ((*specs)[0].driver_version, "550.54");
  EXPECT_EQ((*specs)[1].domain_size, 4);
  EXPECT_EQ((*specs)[1].unhealthy, std::vector<int>{2});
  EXPECT_EQ((*specs)[2].base.count, 2);

  auto devices = MakeFakeDevices(*specs, "n1");
  ASSERT_EQ(devices.size(), 14u);
  const Device& a0 = devices[0];
  EXPECT_TRUE(a0.simulated);
  EXPECT_EQ(a0.uuid, "SIM-nvidia-A100-80G-n1-0");
  EXPECT_EQ(a0.memory_bytes, 80 * kGi);
  EXPECT_EQ(a0.driver_version, "550.54");
  EXPECT_EQ(devices[3].topology.numa_node, 0);
  EXPECT_EQ(devices[4].topology.numa_node, 1);
  EXPECT_EQ(devices[7].topology.interconnect_domain, a0.topology.interconnect_domain);
  const Device& n2 = devices[10];
  EXPECT_EQ(n2.flavor.name(), "npu/huawei/Ascend910B3");
  EXPECT_EQ(n2.index, 2);
  EXPECT_EQ(n2.health, DeviceHealth::kUnhealthy);
  EXPECT_EQ(n2.memory_bytes, 64 * kGi);  // model default
  EXPECT_EQ(n2.runtime_versions.at("cann"), "8.0.RC1");
  const Device& v0 = devices[12];
  EXPECT_EQ(v0.index, 8);  // nvidia indexes continue across models
  EXPECT_EQ(v0.memory_bytes, 32 * kGi);
  EXPECT_EQ(v0.runtime_versions.at("cuda"), "12.4");  // vendor default
}

TEST(FakeTest, RejectsBadSpecs) {
  EXPECT_FALSE(ParseFakeDeviceSpecs("").ok());
  EXPECT_FALSE(ParseFakeDeviceSpecs("cuda=12.4").ok());
  EXPECT_FALSE(ParseFakeDeviceSpecs("gpu:nvidia:A100:8@").ok());
  EXPECT_FALSE(ParseFakeDeviceSpecs("gpu:nvidia:A100:8@domain=x").ok());
  auto bad = ParseFakeDeviceSpecs("gpu:nvidia:A100:2@unhealthy=5");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unhealthy"), std::string::npos);
  EXPECT_FALSE(ParseFakeDeviceSpecs("gpu:nvidia:A100:8@Cuda=12").ok());
}

TEST(FakeTest, DiscovererAddsSimulatedDevicesAfterRealOnes) {
  DiscoveryOptions options;
  options.fake_devices = "gpu:nvidia:H200:2,cpu-less:x";
  EXPECT_FALSE(MakeDiscoverer(options).ok());
  options.fake_devices = "gpu:nvidia:H200:2,npu:huawei:Ascend910B3:2";
  options.node_name = "laptop";
  options.runner = std::make_shared<ReplayCommandRunner>();  // no vendor tools
  options.nvml_library = "libnvidia-ml-does-not-exist.so.1";
  auto discoverer = MakeDiscoverer(options);
  ASSERT_TRUE(discoverer.ok()) << discoverer.status().ToString();
  auto found = (*discoverer)->Discover();
  ASSERT_TRUE(found.ok()) << found.status().ToString();
  EXPECT_TRUE(found->problems.empty());
  ASSERT_EQ(found->devices.size(), 4u);
  EXPECT_EQ(found->devices[1].uuid, "SIM-nvidia-H200-laptop-1");
  EXPECT_EQ(found->devices[1].memory_bytes, 141 * kGi);
  EXPECT_GT(found->host.cpu_milli, 0);

  FakeDeviceSource source(*ParseFakeDeviceSpecs("gpu:nvidia:A10:1"), "n");
  Device real;
  real.flavor = *Flavor::Parse("gpu/nvidia/H100");
  real.index = 3;
  auto more = source.Discover(HostInfo{}, {real});
  ASSERT_TRUE(more.ok());
  EXPECT_EQ((*more)[0].index, 4);
}

// A failing source is reported as a problem; the others still count.
class FailingSource final : public DeviceSource {
 public:
  std::string_view name() const override { return "broken"; }
  Result<std::vector<Device>> Discover(const HostInfo&, const std::vector<Device>&) override {
    return InvalidArgument("tool: line 3: nonsense");
  }
};
class StaticHost final : public HostSource {
 public:
  Result<HostInfo> Read() override { return TwoNumaHost(); }
};

TEST(DiscovererTest, FailingSourceBecomesAProblem) {
  std::vector<std::unique_ptr<DeviceSource>> sources;
  sources.push_back(std::make_unique<FailingSource>());
  sources.push_back(std::make_unique<FakeDeviceSource>(*ParseFakeDeviceSpecs("gpu:nvidia:T4:1"), "n"));
  NodeDiscoverer discoverer(std::make_unique<StaticHost>(), std::move(sources));
  auto found = discoverer.Discover();
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->problems.size(), 1u);
  EXPECT_EQ(found->problems[0].message(), "broken: tool: line 3: nonsense");
  EXPECT_EQ(found->devices.size(), 1u);
  EXPECT_EQ(found->host.numa_nodes.size(), 2u);
}

// ---- diff ----

TEST(DiffTest, ReportsRemovedAddedHealthAndChanges) {
  auto before = MakeFakeDevices(*ParseFakeDeviceSpecs("gpu:nvidia:A100-80G:4"), "n");
  auto after = before;
  after.erase(after.begin() + 3);                  // GPU 3 fell off the bus
  after[1].health = DeviceHealth::kUnhealthy;      // GPU 1 turned bad
  after[2].runtime_versions["cuda"] = "12.6";      // driver upgrade
  Device extra = before[0];
  extra.uuid = "SIM-new";
  extra.index = 4;
  after.push_back(extra);
  DeviceDiff diff = DiffDevices(before, after);
  ASSERT_EQ(diff.removed.size(), 1u);
  EXPECT_EQ(diff.removed[0].index, 3);
  ASSERT_EQ(diff.added.size(), 1u);
  EXPECT_EQ(diff.added[0].uuid, "SIM-new");
  ASSERT_EQ(diff.health_changed.size(), 1u);
  EXPECT_EQ(diff.health_changed[0].second.health, DeviceHealth::kUnhealthy);
  ASSERT_EQ(diff.changed.size(), 1u);
  auto lines = diff.Describe();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "removed gpu/nvidia/A100-80G #3 (SIM-nvidia-A100-80G-n-3)");
  EXPECT_EQ(lines[2], "health gpu/nvidia/A100-80G #1 (SIM-nvidia-A100-80G-n-1): Healthy -> Unhealthy");
  EXPECT_TRUE(DiffDevices(before, before).empty());
}

}  // namespace
}  // namespace abacus::agent
