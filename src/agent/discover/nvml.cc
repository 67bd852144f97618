#include "agent/discover/nvml.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "agent/discover/union_find.h"
#include "common/log.h"

namespace abacus::agent {

namespace {

// Mirrors of the NVML C structures used (nvml.h, stable since the _v2/_v3 entry points).
struct CNvmlMemory {
  unsigned long long total, free, used;
};
struct CNvmlUtilization {
  unsigned int gpu, memory;
};
struct CNvmlPciInfo {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};
struct CNvmlEventData {
  void* device;
  unsigned long long eventType, eventData;
  unsigned int gpuInstanceId, computeInstanceId;
};

constexpr int kFeatureEnabled = 1;         // NVML_FEATURE_ENABLED
constexpr int kMemoryErrorUncorrected = 1;  // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
constexpr int kVolatileEcc = 0;             // NVML_VOLATILE_ECC

class DlopenNvml final : public NvmlApi {
 public:
  explicit DlopenNvml(void* handle) : handle_(handle) {}
  ~DlopenNvml() override { ::dlclose(handle_); }

  // Resolves every symbol; returns the name of a missing required one, or empty.
  std::string Resolve() {
    auto sym = [&](auto& fn, const char* name) { fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(::dlsym(handle_, name)); };
    sym(init_, "nvmlInit_v2");
    sym(shutdown_, "nvmlShutdown");
    sym(error_string_, "nvmlErrorString");
    sym(driver_version_, "nvmlSystemGetDriverVersion");
    sym(cuda_version_, "nvmlSystemGetCudaDriverVersion_v2");
    if (cuda_version_ == nullptr) sym(cuda_version_, "nvmlSystemGetCudaDriverVersion");
    sym(count_, "nvmlDeviceGetCount_v2");
    sym(handle_by_index_, "nvmlDeviceGetHandleByIndex_v2");
    sym(name_, "nvmlDeviceGetName");
    sym(uuid_, "nvmlDeviceGetUUID");
    sym(memory_, "nvmlDeviceGetMemoryInfo");
    sym(pci_, "nvmlDeviceGetPciInfo_v3");
    sym(nvlink_state_, "nvmlDeviceGetNvLinkState");
    sym(nvlink_remote_, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
    sym(ancestor_, "nvmlDeviceGetTopologyCommonAncestor");
    sym(utilization_, "nvmlDeviceGetUtilizationRates");
    sym(ecc_, "nvmlDeviceGetTotalEccErrors");
    sym(event_set_create_, "nvmlEventSetCreate");
    sym(register_events_, "nvmlDeviceRegisterEvents");
    sym(event_set_wait_, "nvmlEventSetWait_v2");
    if (event_set_wait_ == nullptr) sym(event_set_wait_, "nvmlEventSetWait");
    sym(event_set_free_, "nvmlEventSetFree");
    sym(retired_pending_, "nvmlDeviceGetRetiredPagesPendingStatus");
    if (init_ == nullptr) return "nvmlInit_v2";
    if (shutdown_ == nullptr) return "nvmlShutdown";
    if (count_ == nullptr) return "nvmlDeviceGetCount_v2";
    if (handle_by_index_ == nullptr) return "nvmlDeviceGetHandleByIndex_v2";
    if (name_ == nullptr) return "nvmlDeviceGetName";
    if (uuid_ == nullptr) return "nvmlDeviceGetUUID";
    if (memory_ == nullptr) return "nvmlDeviceGetMemoryInfo";
    return "";
  }

  int Init() override { return init_(); }
  int Shutdown() override { return shutdown_(); }
  std::string ErrorString(int r) override {
    if (error_string_ == nullptr) return "NVML error " + std::to_string(r);
    const char* s = error_string_(r);
    return s != nullptr ? s : "NVML error " + std::to_string(r);
  }
  int SystemGetDriverVersion(std::string* v) override {
    if (driver_version_ == nullptr) return kNvmlErrorFunctionNotFound;
    char buf[96] = {};
    int r = driver_version_(buf, sizeof buf);
    if (r == kNvmlSuccess) *v = buf;
    return r;
  }
  int SystemGetCudaDriverVersion(int* v) override {
    return cuda_version_ != nullptr ? cuda_version_(v) : kNvmlErrorFunctionNotFound;
  }
  int DeviceGetCount(unsigned* n) override { return count_(n); }
  int DeviceGetHandleByIndex(unsigned i, NvmlDevice* d) override { return handle_by_index_(i, d); }
  int DeviceGetName(NvmlDevice d, std::string* s) override {
    char buf[96] = {};
    int r = name_(d, buf, sizeof buf);
    if (r == kNvmlSuccess) *s = buf;
    return r;
  }
  int DeviceGetUUID(NvmlDevice d, std::string* s) override {
    char buf[96] = {};
    int r = uuid_(d, buf, sizeof buf);
    if (r == kNvmlSuccess) *s = buf;
    return r;
  }
  int DeviceGetMemoryInfo(NvmlDevice d, NvmlMemoryInfo* m) override {
    CNvmlMemory c{};
    int r = memory_(d, &c);
    if (r == kNvmlSuccess) *m = {c.total, c.free, c.used};
    return r;
  }
  int DeviceGetPciBusId(NvmlDevice d, std::string* s) override {
    if (pci_ == nullptr) return kNvmlErrorFunctionNotFound;
    CNvmlPciInfo c{};
    int r = pci_(d, &c);
    if (r == kNvmlSuccess) *s = std::string(c.busId, strnlen(c.busId, sizeof c.busId));
    return r;
  }
  int DeviceGetNvLinkState(NvmlDevice d, unsigned link, bool* active) override {
    if (nvlink_state_ == nullptr) return kNvmlErrorFunctionNotFound;
    int state = 0;
    int r = nvlink_state_(d, link, &state);
    if (r == kNvmlSuccess) *active = state == kFeatureEnabled;
    return r;
  }
  int DeviceGetNvLinkRemoteBusId(NvmlDevice d, unsigned link, std::string* s) override {
    if (nvlink_remote_ == nullptr) return kNvmlErrorFunctionNotFound;
    CNvmlPciInfo c{};
    int r = nvlink_remote_(d, link, &c);
    if (r == kNvmlSuccess) *s = std::string(c.busId, strnlen(c.busId, sizeof c.busId));
    return r;
  }
  int DeviceGetTopologyCommonAncestor(NvmlDevice a, NvmlDevice b, int* level) override {
    return ancestor_ != nullptr ? ancestor_(a, b, level) : kNvmlErrorFunctionNotFound;
  }
  int DeviceGetUtilizationRates(NvmlDevice d, NvmlUtilizationRates* u) override {
    if (utilization_ == nullptr) return kNvmlErrorFunctionNotFound;
    CNvmlUtilization c{};
    int r = utilization_(d, &c);
    if (r == kNvmlSuccess) *u = {c.gpu, c.memory};
    return r;
  }
  int DeviceGetUncorrectedEccErrors(NvmlDevice d, uint64_t* count) override {
    if (ecc_ == nullptr) return kNvmlErrorFunctionNotFound;
    unsigned long long n = 0;
    int r = ecc_(d, kMemoryErrorUncorrected, kVolatileEcc, &n);
    if (r == kNvmlSuccess) *count = n;
    return r;
  }
  int EventSetCreate(NvmlEventSet* set) override {
    return event_set_create_ != nullptr ? event_set_create_(set) : kNvmlErrorFunctionNotFound;
  }
  int DeviceRegisterEvents(NvmlDevice d, uint64_t types, NvmlEventSet set) override {
    return register_events_ != nullptr ? register_events_(d, types, set) : kNvmlErrorFunctionNotFound;
  }
  int EventSetWait(NvmlEventSet set, unsigned timeout_ms, NvmlEventData* event) override {
    if (event_set_wait_ == nullptr) return kNvmlErrorFunctionNotFound;
    CNvmlEventData c{};
    int r = event_set_wait_(set, &c, timeout_ms);
    if (r == kNvmlSuccess) *event = {c.device, c.eventType, c.eventData};
    return r;
  }
  int EventSetFree(NvmlEventSet set) override {
    return event_set_free_ != nullptr ? event_set_free_(set) : kNvmlErrorFunctionNotFound;
  }
  int DeviceGetRetiredPagesPendingStatus(NvmlDevice d, bool* pending) override {
    if (retired_pending_ == nullptr) return kNvmlErrorFunctionNotFound;
    int state = 0;
    int r = retired_pending_(d, &state);
    if (r == kNvmlSuccess) *pending = state == kFeatureEnabled;
    return r;
  }

 private:
  void* handle_;
  int (*init_)() = nullptr;
  int (*shutdown_)() = nullptr;
  const char* (*error_string_)(int) = nullptr;
  int (*driver_version_)(char*, unsigned) = nullptr;
  int (*cuda_version_)(int*) = nullptr;
  int (*count_)(unsigned*) = nullptr;
  int (*handle_by_index_)(unsigned, NvmlDevice*) = nullptr;
  int (*name_)(NvmlDevice, char*, unsigned) = nullptr;
  int (*uuid_)(NvmlDevice, char*, unsigned) = nullptr;
  int (*memory_)(NvmlDevice, CNvmlMemory*) = nullptr;
  int (*pci_)(NvmlDevice, CNvmlPciInfo*) = nullptr;
  int (*nvlink_state_)(NvmlDevice, unsigned, int*) = nullptr;
  int (*nvlink_remote_)(NvmlDevice, unsigned, CNvmlPciInfo*) = nullptr;
  int (*ancestor_)(NvmlDevice, NvmlDevice, int*) = nullptr;
  int (*utilization_)(NvmlDevice, CNvmlUtilization*) = nullptr;
  int (*ecc_)(NvmlDevice, int, int, unsigned long long*) = nullptr;
  int (*event_set_create_)(NvmlEventSet*) = nullptr;
  int (*register_events_)(NvmlDevice, unsigned long long, NvmlEventSet) = nullptr;
  int (*event_set_wait_)(NvmlEventSet, CNvmlEventData*, unsigned) = nullptr;
  int (*event_set_free_)(NvmlEventSet) = nullptr;
  int (*retired_pending_)(NvmlDevice, int*) = nullptr;
};

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool IsMemoryToken(std::string_view t) {
  // "80GB", "141GB", "32G"
  size_t digits = 0;
  while (digits < t.size() && std::isdigit(static_cast<unsigned char>(t[digits]))) ++digits;
  if (digits == 0) return false;
  std::string unit = Upper(t.substr(digits));
  return unit == "GB" || unit == "G";
}

}  // namespace

Result<std::shared_ptr<NvmlApi>> OpenNvml(const std::string& library) {
  void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* err = ::dlerror();
    return NotFound("NVML not available: " + std::string(err != nullptr ? err : library));
  }
  auto api = std::make_shared<DlopenNvml>(handle);
  std::string missing = api->Resolve();
  if (!missing.empty()) return NotFound("NVML library " + library + " lacks " + missing);
  return std::shared_ptr<NvmlApi>(std::move(api));
}

std::string NormalizeNvidiaModel(std::string_view nvml_name) {
  // 1) Split on spaces and dashes. 2) Drop brand words and form factors. 3) Shorten memory
  //    sizes ("80GB" → "80G"). 4) Join with '-', keeping only characters a flavor allows.
  static const std::set<std::string> kDrop = {"NVIDIA", "TESLA", "GEFORCE", "QUADRO", "SXM", "SXM2",
                                              "SXM3", "SXM4", "SXM5", "PCIE", "PCI-E", "HBM2",
                                              "HBM2E", "HBM3", "HBM3E", "MIG"};
  std::vector<std::string> parts;
  std::string token;
  auto flush = [&] {
    if (token.empty()) return;
    std::string up = Upper(token);
    if (kDrop.count(up) == 0) {
      if (IsMemoryToken(token)) {
        size_t digits = 0;
        while (std::isdigit(static_cast<unsigned char>(token[digits]))) ++digits;
        parts.push_back(token.substr(0, digits) + "G");
      } else {
        std::string clean;
        for (char c : token) {
          if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_') clean += c;
        }
        if (!clean.empty()) parts.push_back(clean);
      }
    }
    token.clear();
  };
  for (char c : nvml_name) {
    if (c == ' ' || c == '-' || c == '\t') {
      flush();
    } else {
      token += c;
    }
  }
  flush();
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += '-';
    out += p;
  }
  return out.empty() ? std::string("unknown") : out;
}

std::string FormatCudaDriverVersion(int version) {
  if (version <= 0) return "";
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

Result<std::vector<Device>> NvmlDeviceSource::Discover(const HostInfo& host, const std::vector<Device>&) {
  auto opened = opener_();
  if (!opened.ok()) {
    if (opened.status().code() == StatusCode::kNotFound) return std::vector<Device>{};
    return opened.status();
  }
  std::shared_ptr<NvmlApi> nvml = *opened;
  int r = nvml->Init();
  if (r == kNvmlErrorDriverNotLoaded || r == kNvmlErrorLibraryNotFound) {
    ABACUS_LOG_WARN("NVML present but the NVIDIA driver is not loaded: {}", nvml->ErrorString(r));
    return std::vector<Device>{};
  }
  if (r != kNvmlSuccess) return Unavailable("nvml: nvmlInit failed: " + nvml->ErrorString(r));
  struct Guard {
    NvmlApi* api;
    ~Guard() { api->Shutdown(); }
  } guard{nvml.get()};

  // 1) System-wide versions.
  std::string driver;
  nvml->SystemGetDriverVersion(&driver);
  int cuda = 0;
  nvml->SystemGetCudaDriverVersion(&cuda);
  std::string cuda_text = FormatCudaDriverVersion(cuda);

  unsigned count = 0;
  r = nvml->DeviceGetCount(&count);
  if (r != kNvmlSuccess) return Unavailable("nvml: nvmlDeviceGetCount failed: " + nvml->ErrorString(r));

  // 2) Per device: identity, memory, PCI address, health.
  std::vector<Device> out;
  std::vector<NvmlDevice> handles;
  std::vector<std::string> bus_ids;
  for (unsigned i = 0; i < count; ++i) {
    Device d;
    d.index = static_cast<int>(i);
    d.driver_version = driver;
    if (!cuda_text.empty()) d.runtime_versions["cuda"] = cuda_text;
    NvmlDevice h = nullptr;
    std::string name = "unknown";
    bool broken = false;
    r = nvml->DeviceGetHandleByIndex(i, &h);
    if (r != kNvmlSuccess) {
      ABACUS_LOG_WARN("nvml: GPU {} unreadable: {}", i, nvml->ErrorString(r));
      broken = true;
      h = nullptr;
    } else {
      if (nvml->DeviceGetName(h, &name) != kNvmlSuccess) broken = true;
      if (nvml->DeviceGetUUID(h, &d.uuid) != kNvmlSuccess) broken = true;
      NvmlMemoryInfo mem;
      if (nvml->DeviceGetMemoryInfo(h, &mem) == kNvmlSuccess) {
        d.memory_bytes = static_cast<int64_t>(mem.total);
      } else {
        broken = true;
      }
      uint64_t ecc = 0;
      int er = nvml->DeviceGetUncorrectedEccErrors(h, &ecc);
      if (er == kNvmlSuccess && ecc > 0) broken = true;
      if (er == kNvmlErrorGpuIsLost) broken = true;
    }
    auto flavor = Flavor::Parse("gpu/nvidia/" + NormalizeNvidiaModel(name));
    d.flavor = flavor.ok() ? *flavor : *Flavor::Parse("gpu/nvidia/unknown");
    if (d.uuid.empty()) d.uuid = "GPU-unreadable-" + std::to_string(i);
    d.health = broken ? DeviceHealth::kUnhealthy : DeviceHealth::kHealthy;
    std::string bus;
    if (h != nullptr && nvml->DeviceGetPciBusId(h, &bus) == kNvmlSuccess) {
      bus = CanonicalPciBusId(bus);
      d.topology.numa_node = host.NumaNodeOfPci(bus);
    }
    handles.push_back(h);
    bus_ids.push_back(bus);
    out.push_back(std::move(d));
  }

  // 3) NVLink: join each GPU with the far end of each active link (another GPU or an NVSwitch);
  //    GPUs in one set share a domain.
  UnionFind links;
  std::vector<bool> linked(out.size(), false);
  for (size_t i = 0; i < out.size(); ++i) {
    if (handles[i] == nullptr) continue;
    std::string self = bus_ids[i].empty() ? "gpu" + std::to_string(i) : bus_ids[i];
    for (unsigned link = 0; link < kNvmlNvLinkMaxLinks; ++link) {
      bool active = false;
      if (nvml->DeviceGetNvLinkState(handles[i], link, &active) != kNvmlSuccess || !active) continue;
      std::string remote;
      if (nvml->DeviceGetNvLinkRemoteBusId(handles[i], link, &remote) != kNvmlSuccess) continue;
      links.Union(self, CanonicalPciBusId(remote));
      linked[i] = true;
    }
  }
  std::map<std::string, int> domain_first;  // set representative → smallest GPU index
  for (size_t i = 0; i < out.size(); ++i) {
    if (!linked[i]) continue;
    std::string root = links.Find(bus_ids[i].empty() ? "gpu" + std::to_string(i) : bus_ids[i]);
    auto [it, inserted] = domain_first.emplace(root, out[i].index);
    out[i].topology.interconnect_domain = "nvlink-" + std::to_string(it->second);
  }

  // 4) PCIe switches: GPUs whose common ancestor is a switch (not a host bridge) share one.
  UnionFind pcie;
  for (size_t i = 0; i < out.size(); ++i) {
    for (size_t j = i + 1; j < out.size(); ++j) {
      if (handles[i] == nullptr || handles[j] == nullptr) continue;
      int level = kNvmlTopologySystem;
      if (nvml->DeviceGetTopologyCommonAncestor(handles[i], handles[j], &level) != kNvmlSuccess) continue;
      if (level <= kNvmlTopologyMultiple) pcie.Union(std::to_string(1000 + i), std::to_string(1000 + j));
    }
  }
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t i = 0; i < out.size(); ++i) groups[pcie.Find(std::to_string(1000 + i))].push_back(i);
  for (const auto& [root, members] : groups) {
    if (members.size() < 2) continue;
    for (size_t m : members) out[m].topology.pcie_switch = "pcie-" + std::to_string(out[members.front()].index);
  }
  return out;
}

}  // namespace abacus::agent
