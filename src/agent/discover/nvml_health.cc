#include "agent/discover/nvml_health.h"

#include "common/log.h"

namespace abacus::agent {
namespace {

struct XidEntry {
  uint64_t xid;
  bool critical;
  std::string_view text;
};

// NVIDIA's XID catalog (docs.nvidia.com/deploy/xid-errors): the XIDs an application causes are
// not critical (the device is fine, the program is not); hardware, memory, interconnect and
// firmware XIDs are.
constexpr XidEntry kXids[] = {
    {13, false, "graphics engine exception"},
    {31, false, "GPU memory page fault"},
    {43, false, "GPU stopped processing"},
    {45, false, "preemptive cleanup, due to previous errors"},
    {48, true, "double bit ECC error"},
    {61, true, "internal micro-controller breakpoint/warning"},
    {62, true, "internal micro-controller halt"},
    {63, true, "ECC page retirement or row remapping recording event"},
    {64, true, "ECC page retirement or row remapper recording failure"},
    {68, false, "NVDEC0 exception"},
    {69, true, "graphics engine class error"},
    {74, true, "NVLink error"},
    {79, true, "GPU has fallen off the bus"},
    {92, true, "high single-bit ECC error rate"},
    {94, true, "contained ECC error"},
    {95, true, "uncontained ECC error"},
    {109, false, "context switch timeout"},
    {119, true, "GSP RPC timeout"},
    {120, true, "GSP error"},
    {140, true, "unrecovered ECC error"},
};

constexpr int kDrainPerPoll = 256;

}  // namespace

XidVerdict ClassifyXid(uint64_t xid) {
  for (const auto& e : kXids) {
    if (e.xid == xid) return {e.critical, e.text};
  }
  return {};
}

std::string XidReason(uint64_t xid) {
  XidVerdict v = ClassifyXid(xid);
  std::string out = "XID " + std::to_string(xid);
  if (!v.text.empty()) out += ": " + std::string(v.text);
  return out;
}

NvmlHealthWatcher::~NvmlHealthWatcher() {
  if (nvml_ == nullptr) return;
  if (set_ != nullptr) nvml_->EventSetFree(set_);
  if (initialized_) nvml_->Shutdown();
}

void NvmlHealthWatcher::Start() {
  started_ = true;
  auto opened = opener_();
  if (!opened.ok()) return;  // no NVIDIA driver: nothing to watch
  nvml_ = *opened;
  int r = nvml_->Init();
  if (r != kNvmlSuccess) {
    ABACUS_LOG_WARN("nvml health: nvmlInit failed ({}); XID events are not watched", nvml_->ErrorString(r));
    return;
  }
  initialized_ = true;
  unsigned count = 0;
  if (nvml_->DeviceGetCount(&count) != kNvmlSuccess) return;
  for (unsigned i = 0; i < count; ++i) {
    NvmlDevice h = nullptr;
    std::string uuid;
    if (nvml_->DeviceGetHandleByIndex(i, &h) != kNvmlSuccess || nvml_->DeviceGetUUID(h, &uuid) != kNvmlSuccess) continue;
    gpus_.emplace_back(h, uuid);
  }
  r = nvml_->EventSetCreate(&set_);
  if (r != kNvmlSuccess) {
    set_ = nullptr;
    ABACUS_LOG_INFO("nvml health: the event API is not supported ({}); XID events are not watched", nvml_->ErrorString(r));
    return;
  }
  for (const auto& [h, uuid] : gpus_) {
    r = nvml_->DeviceRegisterEvents(h, kNvmlEventXidCriticalError | kNvmlEventDoubleBitEccError, set_);
    if (r == kNvmlErrorNotSupported) r = nvml_->DeviceRegisterEvents(h, kNvmlEventXidCriticalError, set_);
    if (r == kNvmlSuccess) {
      ++registered_;
    } else {
      ABACUS_LOG_INFO("nvml health: GPU {} takes no event registration ({})", uuid, nvml_->ErrorString(r));
    }
  }
}

std::string NvmlHealthWatcher::UuidOf(NvmlDevice device) const {
  for (const auto& [h, uuid] : gpus_) {
    if (h == device) return uuid;
  }
  return "";
}

void NvmlHealthWatcher::Drain() {
  if (!events_supported()) return;
  for (int i = 0; i < kDrainPerPoll; ++i) {
    NvmlEventData ev;
    int r = nvml_->EventSetWait(set_, 0, &ev);
    if (r == kNvmlErrorTimeout) return;  // nothing more waiting
    if (r != kNvmlSuccess) {
      ABACUS_LOG_WARN("nvml health: nvmlEventSetWait: {}", nvml_->ErrorString(r));
      return;
    }
    std::string uuid = UuidOf(ev.device);
    if (uuid.empty()) continue;
    if (ev.type & kNvmlEventXidCriticalError) {
      XidVerdict v = ClassifyXid(ev.data);
      if (!v.critical) {
        ABACUS_LOG_INFO("nvml health: GPU {}: {} (an application error; the GPU stays healthy)", uuid, XidReason(ev.data));
        continue;
      }
      ABACUS_LOG_WARN("nvml health: GPU {}: {}: reporting it Unhealthy until the agent restarts", uuid, XidReason(ev.data));
      marked_[uuid] = XidReason(ev.data);
    } else if (ev.type & kNvmlEventDoubleBitEccError) {
      ABACUS_LOG_WARN("nvml health: GPU {}: double-bit ECC error: reporting it Unhealthy until the agent restarts", uuid);
      marked_[uuid] = "double-bit ECC error";
    }
  }
}

std::vector<std::string> NvmlHealthWatcher::PendingRetirements() {
  std::vector<std::string> out;
  retired_supported_ = false;
  for (const auto& [h, uuid] : gpus_) {
    bool pending = false;
    if (nvml_->DeviceGetRetiredPagesPendingStatus(h, &pending) != kNvmlSuccess) continue;
    retired_supported_ = true;
    if (pending) out.push_back(uuid);
  }
  return out;
}

std::map<std::string, std::string> NvmlHealthWatcher::Poll() {
  if (!started_) Start();
  if (!initialized_) return {};
  Drain();
  std::map<std::string, std::string> out = marked_;
  for (const auto& uuid : PendingRetirements()) out.emplace(uuid, "retired pages pending, reset the GPU");
  return out;
}

}  // namespace abacus::agent
