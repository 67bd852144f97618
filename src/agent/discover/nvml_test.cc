// NVIDIA discovery over a fake NVML function table.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>

#include "agent/discover/nvml.h"
#include "agent/discover/nvml_health.h"

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
    bool retired_pending = false;
    uint64_t registered = 0;  // event types registered
  };
  std::vector<Gpu> gpus;
  int init_result = kNvmlSuccess;
  int init_calls = 0, shutdown_calls = 0;
  // The event API and retired pages: `events` and `retired_pages` false act as missing symbols.
  bool events = true, retired_pages = true;
  struct Event {
    int gpu;
    uint64_t type, data;
  };
  std::vector<Event> queued;  // delivered by EventSetWait, oldest first
  int sets_created = 0, sets_freed = 0, waits = 0;
  std::vector<unsigned> wait_timeouts;

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
  int EventSetCreate(NvmlEventSet* set) override {
    if (!events) return kNvmlErrorFunctionNotFound;
    ++sets_created;
    *set = this;
    return kNvmlSuccess;
  }
  int DeviceRegisterEvents(NvmlDevice d, uint64_t types, NvmlEventSet) override {
    if (!events) return kNvmlErrorFunctionNotFound;
    G(d).registered = types;
    return kNvmlSuccess;
  }
  int EventSetWait(NvmlEventSet, unsigned timeout_ms, NvmlEventData* event) override {
    if (!events) return kNvmlErrorFunctionNotFound;
    ++waits;
    wait_timeouts.push_back(timeout_ms);
    if (queued.empty()) return kNvmlErrorTimeout;
    Event e = queued.front();
    queued.erase(queued.begin());
    *event = {&gpus[e.gpu], e.type, e.data};
    return kNvmlSuccess;
  }
  int EventSetFree(NvmlEventSet) override {
    if (!events) return kNvmlErrorFunctionNotFound;
    ++sets_freed;
    return kNvmlSuccess;
  }
  int DeviceGetRetiredPagesPendingStatus(NvmlDevice d, bool* pending) override {
    if (!retired_pages) return kNvmlErrorFunctionNotFound;
    *pending = G(d).retired_pending;
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

// A stand-in NVML with `n` GPUs named `name` (uuid GPU-i, bus Bus(i)); tests adjust them after.
std::shared_ptr<FakeNvml> Gpus(int n, const std::string& name) {
  auto fake = std::make_shared<FakeNvml>();
  for (int i = 0; i < n; ++i) {
    FakeNvml::Gpu g;
    g.name = name;
    g.uuid = "GPU-" + std::to_string(i);
    g.bus = Bus(i);
    fake->gpus.push_back(g);
  }
  return fake;
}

TEST(NvmlTest, DiscoversHgxBoardWithNvSwitchDomainAndNuma) {
  auto fake = Gpus(8, "NVIDIA H200");
  for (int i = 0; i < 8; ++i) {
    FakeNvml::Gpu& g = fake->gpus[i];
    g.memory = 141 * kGi;
    g.links = {"00000000:A0:00.0", "00000000:A1:00.0", "00000000:A2:00.0", "00000000:A3:00.0"};  // NVSwitches
    g.pcie_group = i / 2;
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
  auto fake = Gpus(5, "NVIDIA A100-SXM4-80GB");
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

std::shared_ptr<FakeNvml> FourGpus() { return Gpus(4, "NVIDIA H100 80GB HBM3"); }

TEST(NvmlHealthTest, ClassifiesXids) {
  for (uint64_t xid : {48, 63, 64, 74, 79, 92, 94, 95, 119, 120}) EXPECT_TRUE(ClassifyXid(xid).critical) << xid;
  for (uint64_t xid : {13, 31, 43, 45, 68, 109, 9999}) EXPECT_FALSE(ClassifyXid(xid).critical) << xid;
  EXPECT_EQ(XidReason(79), "XID 79: GPU has fallen off the bus");
  EXPECT_EQ(XidReason(9999), "XID 9999");
}

TEST(NvmlHealthTest, CriticalXidMarksTheGpuUntilRestartAppXidDoesNot) {
  auto fake = FourGpus();
  {
    NvmlHealthWatcher watcher(OpenerFor(fake));
    EXPECT_TRUE(watcher.Poll().empty());
    EXPECT_TRUE(watcher.events_supported());
    EXPECT_TRUE(watcher.retired_pages_supported());
    for (const auto& g : fake->gpus) EXPECT_EQ(g.registered, kNvmlEventXidCriticalError | kNvmlEventDoubleBitEccError);

    fake->queued = {{1, kNvmlEventXidCriticalError, 79},   // fallen off the bus
                    {2, kNvmlEventXidCriticalError, 13},   // an application's fault
                    {3, kNvmlEventDoubleBitEccError, 0}};
    auto marked = watcher.Poll();
    ASSERT_EQ(marked.size(), 2u);
    EXPECT_EQ(marked.at("GPU-1"), "XID 79: GPU has fallen off the bus");
    EXPECT_EQ(marked.at("GPU-3"), "double-bit ECC error");
    EXPECT_EQ(marked.count("GPU-2"), 0u);
    EXPECT_TRUE(fake->queued.empty());
    // Every wait polls (timeout 0): the heartbeat never blocks.
    for (unsigned t : fake->wait_timeouts) EXPECT_EQ(t, 0u);

    // Sticky: no new event, still Unhealthy.
    EXPECT_EQ(watcher.Poll(), marked);
    EXPECT_EQ(fake->init_calls, 1);  // NVML stays open between polls
  }
  // Destroyed (the agent stops): the set is freed and NVML shut down; a new life starts clean.
  EXPECT_EQ(fake->sets_freed, fake->sets_created);
  EXPECT_EQ(fake->shutdown_calls, fake->init_calls);
  NvmlHealthWatcher restarted(OpenerFor(fake));
  EXPECT_TRUE(restarted.Poll().empty());
}

TEST(NvmlHealthTest, RetiredPagesPendingMarkWhilePending) {
  auto fake = FourGpus();
  NvmlHealthWatcher watcher(OpenerFor(fake));
  fake->gpus[2].retired_pending = true;
  auto marked = watcher.Poll();
  ASSERT_EQ(marked.size(), 1u);
  EXPECT_EQ(marked.at("GPU-2"), "retired pages pending, reset the GPU");
  fake->gpus[2].retired_pending = false;  // the GPU was reset
  EXPECT_TRUE(watcher.Poll().empty());
}

TEST(NvmlHealthTest, MissingSymbolsMeanNotSupportedAndHealthy) {
  auto fake = FourGpus();
  fake->events = false;
  fake->retired_pages = false;
  fake->gpus[0].retired_pending = true;  // not asked: the query is missing
  NvmlHealthWatcher watcher(OpenerFor(fake));
  EXPECT_TRUE(watcher.Poll().empty());
  EXPECT_FALSE(watcher.events_supported());
  EXPECT_FALSE(watcher.retired_pages_supported());
  EXPECT_EQ(fake->waits, 0);

  // No NVML at all: nothing watched, nothing marked.
  NvmlHealthWatcher none([] { return OpenNvml("libnvidia-ml-does-not-exist.so.1"); });
  EXPECT_TRUE(none.Poll().empty());
  EXPECT_FALSE(none.events_supported());
}

#if defined(ABACUS_FAKE_NVML) && defined(ABACUS_FAKE_NVML_OLD)
// Through dlopen/dlsym and NVML's C structures, with a stand-in library (tests/fake_nvml).
TEST(NvmlHealthTest, ThroughTheLibraryEventsAndRetiredPagesMarkGpus) {
  ::setenv("FAKE_NVML_EVENTS", "1:8:79,2:8:13,3:2:0", 1);  // XID 79, app XID 13, a DBE
  ::setenv("FAKE_NVML_RETIRED", "0", 1);
  {
    NvmlHealthWatcher watcher([] { return OpenNvml(ABACUS_FAKE_NVML); });
    auto marked = watcher.Poll();
    EXPECT_TRUE(watcher.events_supported());
    EXPECT_TRUE(watcher.retired_pages_supported());
    ASSERT_EQ(marked.size(), 3u);
    EXPECT_EQ(marked["GPU-fake-1"], "XID 79: GPU has fallen off the bus");
    EXPECT_EQ(marked["GPU-fake-3"], "double-bit ECC error");
    EXPECT_EQ(marked["GPU-fake-0"], "retired pages pending, reset the GPU");
    EXPECT_EQ(marked.count("GPU-fake-2"), 0u);
  }
  ::unsetenv("FAKE_NVML_EVENTS");
  ::unsetenv("FAKE_NVML_RETIRED");
}

// The stand-in's FAKE_NVML_FILE (what the real-process test drives): a line appended while the
// watcher runs is delivered at the next poll, once; a retired-pages line holds while it is there.
TEST(NvmlHealthTest, ThroughTheLibraryFaultsArriveWhileTheWatcherRuns) {
  const std::string file = ::testing::TempDir() + "/fake-nvml-faults";
  std::ofstream(file) << "";
  ::setenv("FAKE_NVML_FILE", file.c_str(), 1);
  ::setenv("FAKE_NVML_GPUS", "2", 1);
  {
    NvmlHealthWatcher watcher([] { return OpenNvml(ABACUS_FAKE_NVML); });
    EXPECT_TRUE(watcher.Poll().empty());
    std::ofstream(file, std::ios::app) << "xid 0 13\nretired 1\n";
    auto marked = watcher.Poll();
    ASSERT_EQ(marked.size(), 1u);
    EXPECT_EQ(marked["GPU-fake-1"], "retired pages pending, reset the GPU");
    std::ofstream(file, std::ios::app) << "xid 0 48\nxid 5 79\n";  // there is no GPU 5
    marked = watcher.Poll();
    ASSERT_EQ(marked.size(), 2u);
    EXPECT_EQ(marked["GPU-fake-0"], "XID 48: double bit ECC error");
    std::ofstream(file, std::ios::trunc) << "";  // the pages are retired; the XID mark stays
    marked = watcher.Poll();
    ASSERT_EQ(marked.size(), 1u);
    EXPECT_EQ(marked["GPU-fake-0"], "XID 48: double bit ECC error");
  }
  ::unsetenv("FAKE_NVML_FILE");
  ::unsetenv("FAKE_NVML_GPUS");
}

TEST(NvmlHealthTest, ThroughALibraryWithoutTheEventApiNothingIsWatched) {
  auto opened = OpenNvml(ABACUS_FAKE_NVML_OLD);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();  // the optional symbols are not required
  NvmlHealthWatcher watcher([] { return OpenNvml(ABACUS_FAKE_NVML_OLD); });
  EXPECT_TRUE(watcher.Poll().empty());
  EXPECT_FALSE(watcher.events_supported());
  EXPECT_FALSE(watcher.retired_pages_supported());
}
#endif

}  // namespace
}  // namespace abacus::agent
