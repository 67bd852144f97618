// Device health from NVML events and queries (issue 26; docs/agent.md "Health"): the agent's
// upkeep thread polls a DeviceHealthWatcher at every heartbeat, and each device it names reports
// Unhealthy with the watcher's reason, over what discovery says (like an injected fault,
// fault_file.h). The NVML watcher:
//   - registers every GPU for XID critical errors and double-bit ECC errors (nvmlEventSetCreate,
//     nvmlDeviceRegisterEvents) and drains the event set with nvmlEventSetWait_v2 at timeout 0 —
//     it never blocks the heartbeat; a critical XID (ClassifyXid) or a double-bit ECC error marks
//     the GPU until the agent restarts; an application XID (13, 31, 43, 45, …) is only logged;
//   - asks nvmlDeviceGetRetiredPagesPendingStatus at every poll: a page awaiting retirement marks
//     the GPU while it is pending ("retired pages pending, reset the GPU");
//   - takes a missing symbol or NOT_SUPPORTED as "not watched" (the GPU stays healthy), never as a
//     failure; frees the event set and shuts NVML down when destroyed.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agent/discover/nvml.h"

namespace abacus::agent {

// What an XID means for the device.
struct XidVerdict {
  bool critical = false;   // marks the device Unhealthy
  std::string_view text;   // NVIDIA's description ("GPU has fallen off the bus"); "" when unlisted
};

// Returns the verdict for `xid` from NVIDIA's XID catalog: the hardware, driver-recovery and
// memory XIDs (48, 61–64, 74, 79, 92–95, 119, 120, …) are critical; application XIDs (13, 31,
// 43, 45, 68, 109, …) and unlisted ones are not.
XidVerdict ClassifyXid(uint64_t xid);

// "XID 79: GPU has fallen off the bus" ("XID 200" for an unlisted XID).
std::string XidReason(uint64_t xid);

// Watches device health between discoveries; polled by the agent's upkeep thread only.
class DeviceHealthWatcher {
 public:
  virtual ~DeviceHealthWatcher() = default;
  // Returns the devices to report Unhealthy now, by UUID, with the reason. Never blocks.
  virtual std::map<std::string, std::string> Poll() = 0;
};

class NvmlHealthWatcher final : public DeviceHealthWatcher {
 public:
  explicit NvmlHealthWatcher(NvmlOpener opener) : opener_(std::move(opener)) {}
  ~NvmlHealthWatcher() override;
  NvmlHealthWatcher(const NvmlHealthWatcher&) = delete;
  NvmlHealthWatcher& operator=(const NvmlHealthWatcher&) = delete;

  // Opens NVML and registers the GPUs at the first call; then drains the events waiting (at most
  // 256 a call) and asks each GPU for pending page retirements.
  std::map<std::string, std::string> Poll() override;

  // Whether XID/ECC events are watched (the event API exists and a GPU took the registration),
  // and whether the retired-pages query answers; for tests and the agent's log.
  bool events_supported() const { return set_ != nullptr && registered_ > 0; }
  bool retired_pages_supported() const { return retired_supported_; }

 private:
  void Start();
  void Drain();
  // The GPUs with a page awaiting retirement.
  std::vector<std::string> PendingRetirements();
  std::string UuidOf(NvmlDevice device) const;

  NvmlOpener opener_;
  std::shared_ptr<NvmlApi> nvml_;  // null until opened (or when NVML is absent)
  bool started_ = false;
  bool initialized_ = false;
  NvmlEventSet set_ = nullptr;
  int registered_ = 0;
  bool retired_supported_ = false;
  std::vector<std::pair<NvmlDevice, std::string>> gpus_;  // handle, UUID
  std::map<std::string, std::string> marked_;             // by events, until the agent restarts
};

}  // namespace abacus::agent
