// NVIDIA GPUs through NVML, opened at run time with dlopen("libnvidia-ml.so.1") and never
// linked. The NVML calls used sit behind NvmlApi so tests drive the discovery with a fake table.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agent/discover/discoverer.h"

namespace abacus::agent {

// nvmlReturn_t values this code tells apart.
enum NvmlReturn : int {
  kNvmlSuccess = 0,
  kNvmlErrorUninitialized = 1,
  kNvmlErrorInvalidArgument = 2,
  kNvmlErrorNotSupported = 3,
  kNvmlErrorNoPermission = 4,
  kNvmlErrorNotFound = 6,
  kNvmlErrorDriverNotLoaded = 9,
  kNvmlErrorTimeout = 10,  // nvmlEventSetWait: no event waiting
  kNvmlErrorLibraryNotFound = 12,
  kNvmlErrorFunctionNotFound = 13,
  kNvmlErrorGpuIsLost = 15,
  kNvmlErrorUnknown = 999,
};

// nvmlGpuTopologyLevel_t: how far apart two GPUs are on PCIe.
enum NvmlTopologyLevel : int {
  kNvmlTopologyInternal = 0,
  kNvmlTopologySingle = 10,    // one PCIe switch between them
  kNvmlTopologyMultiple = 20,  // several PCIe switches, no host bridge
  kNvmlTopologyHostBridge = 30,
  kNvmlTopologyNode = 40,
  kNvmlTopologySystem = 50,
};

inline constexpr unsigned kNvmlNvLinkMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS

// An opaque device handle (nvmlDevice_t).
using NvmlDevice = void*;
// An opaque event set (nvmlEventSet_t).
using NvmlEventSet = void*;

// nvmlEventType bits the health watcher registers for.
inline constexpr uint64_t kNvmlEventDoubleBitEccError = 0x2;  // nvmlEventTypeDoubleBitEccError
inline constexpr uint64_t kNvmlEventXidCriticalError = 0x8;   // nvmlEventTypeXidCriticalError

// One event (nvmlEventData_t): for an XID event `data` is the XID.
struct NvmlEventData {
  NvmlDevice device = nullptr;
  uint64_t type = 0;
  uint64_t data = 0;
};

struct NvmlMemoryInfo {
  uint64_t total = 0, free = 0, used = 0;
};
struct NvmlUtilizationRates {
  unsigned gpu = 0, memory = 0;  // percent over the last sample period
};

// The NVML functions Abacus calls, with C++ out parameters. Each returns an NvmlReturn.
class NvmlApi {
 public:
  virtual ~NvmlApi() = default;
  virtual int Init() = 0;                                    // nvmlInit_v2
  virtual int Shutdown() = 0;                                // nvmlShutdown
  virtual std::string ErrorString(int result) = 0;           // nvmlErrorString
  virtual int SystemGetDriverVersion(std::string* version) = 0;
  virtual int SystemGetCudaDriverVersion(int* version) = 0;  // 12040 for CUDA 12.4
  virtual int DeviceGetCount(unsigned* count) = 0;           // nvmlDeviceGetCount_v2
  virtual int DeviceGetHandleByIndex(unsigned index, NvmlDevice* device) = 0;
  virtual int DeviceGetName(NvmlDevice device, std::string* name) = 0;
  virtual int DeviceGetUUID(NvmlDevice device, std::string* uuid) = 0;
  virtual int DeviceGetMemoryInfo(NvmlDevice device, NvmlMemoryInfo* memory) = 0;
  virtual int DeviceGetPciBusId(NvmlDevice device, std::string* bus_id) = 0;  // nvmlDeviceGetPciInfo_v3
  // `active`: nvmlDeviceGetNvLinkState == NVML_FEATURE_ENABLED.
  virtual int DeviceGetNvLinkState(NvmlDevice device, unsigned link, bool* active) = 0;
  virtual int DeviceGetNvLinkRemoteBusId(NvmlDevice device, unsigned link, std::string* bus_id) = 0;
  virtual int DeviceGetTopologyCommonAncestor(NvmlDevice a, NvmlDevice b, int* level) = 0;
  virtual int DeviceGetUtilizationRates(NvmlDevice device, NvmlUtilizationRates* rates) = 0;
  // Volatile uncorrected ECC errors (nvmlDeviceGetTotalEccErrors, UNCORRECTED, VOLATILE_ECC).
  virtual int DeviceGetUncorrectedEccErrors(NvmlDevice device, uint64_t* count) = 0;
  // The event API and retired pages: optional symbols, kNvmlErrorFunctionNotFound when the
  // library lacks them (an old driver), which callers take as "not supported".
  virtual int EventSetCreate(NvmlEventSet* set) = 0;                                    // nvmlEventSetCreate
  virtual int DeviceRegisterEvents(NvmlDevice device, uint64_t types, NvmlEventSet set) = 0;  // nvmlDeviceRegisterEvents
  // nvmlEventSetWait_v2: kNvmlErrorTimeout when no event came within `timeout_ms` (0: none waiting).
  virtual int EventSetWait(NvmlEventSet set, unsigned timeout_ms, NvmlEventData* event) = 0;
  virtual int EventSetFree(NvmlEventSet set) = 0;                                       // nvmlEventSetFree
  // `pending`: nvmlDeviceGetRetiredPagesPendingStatus == NVML_FEATURE_ENABLED (a page awaits
  // retirement, which takes effect at the next GPU reset).
  virtual int DeviceGetRetiredPagesPendingStatus(NvmlDevice device, bool* pending) = 0;
};

// Opens `library` with dlopen and resolves the NVML symbols. NotFound when the library (or one of
// the required symbols) is missing: the node has no NVIDIA driver.
Result<std::shared_ptr<NvmlApi>> OpenNvml(const std::string& library = "libnvidia-ml.so.1");

// Returns the flavor model for an NVML product name (docs/agent.md has the table):
// "NVIDIA H200" → "H200", "NVIDIA A100-SXM4-80GB" → "A100-80G", "Tesla V100-SXM2-32GB" →
// "V100-32G", "NVIDIA GeForce RTX 4090" → "RTX-4090", "NVIDIA H100 NVL" → "H100-NVL".
std::string NormalizeNvidiaModel(std::string_view nvml_name);

// Returns "12.4" for 12040, "11.8" for 11080; empty for values <= 0.
std::string FormatCudaDriverVersion(int version);

// Produces an NvmlApi on demand (OpenNvml in production, a fake in tests).
using NvmlOpener = std::function<Result<std::shared_ptr<NvmlApi>>()>;

// Discovers NVIDIA GPUs: flavor gpu/nvidia/<normalized model>, UUID, memory, driver and CUDA
// versions, NUMA node (PCI affinity from the host), NVLink domains ("nvlink-<n>": GPUs joined by
// active links, directly or through an NVSwitch), PCIe switch groups ("pcie-<n>": GPUs whose
// common ancestor is a PCIe switch) and health (Unhealthy when NVML reports the GPU lost, cannot
// read it, or counts volatile uncorrected ECC errors; ECC not supported counts as healthy).
class NvmlDeviceSource final : public DeviceSource {
 public:
  explicit NvmlDeviceSource(NvmlOpener opener) : opener_(std::move(opener)) {}
  std::string_view name() const override { return "nvml"; }
  Result<std::vector<Device>> Discover(const HostInfo& host, const std::vector<Device>& so_far) override;

 private:
  NvmlOpener opener_;
};

}  // namespace abacus::agent
