#include "agent/utilization.h"

#include "agent/runtime/process_runtime.h"
#include "common/mutex.h"

namespace abacus::agent {

std::vector<DeviceUtilization> NvmlDeviceSampler::Sample() {
  std::vector<DeviceUtilization> out;
  auto opened = opener_();
  if (!opened.ok()) return out;
  std::shared_ptr<NvmlApi> nvml = *opened;
  if (nvml->Init() != kNvmlSuccess) return out;
  unsigned count = 0;
  if (nvml->DeviceGetCount(&count) == kNvmlSuccess) {
    for (unsigned i = 0; i < count; ++i) {
      DeviceUtilization u;
      u.index = static_cast<int>(i);
      NvmlDevice h = nullptr;
      if (nvml->DeviceGetHandleByIndex(i, &h) != kNvmlSuccess) {
        out.push_back(u);
        continue;
      }
      nvml->DeviceGetUUID(h, &u.uuid);
      NvmlUtilizationRates rates;
      if (nvml->DeviceGetUtilizationRates(h, &rates) == kNvmlSuccess) u.compute_percent = static_cast<int>(rates.gpu);
      NvmlMemoryInfo mem;
      if (nvml->DeviceGetMemoryInfo(h, &mem) == kNvmlSuccess) {
        u.memory_used_bytes = static_cast<int64_t>(mem.used);
        u.memory_total_bytes = static_cast<int64_t>(mem.total);
      }
      out.push_back(u);
    }
  }
  nvml->Shutdown();
  return out;
}

SimulatedDeviceSampler::SimulatedDeviceSampler(const std::vector<Device>& devices) {
  for (const auto& d : devices) {
    if (!d.simulated) continue;
    devices_.push_back({d.uuid, d.index, 0, 0, d.memory_bytes});
  }
}

bool SimulatedDeviceSampler::Set(const std::string& uuid, int compute_percent, int64_t memory_used_bytes) {
  MutexLock lock(mu_);
  for (auto& d : devices_) {
    if (d.uuid != uuid) continue;
    d.compute_percent = compute_percent;
    d.memory_used_bytes = memory_used_bytes;
    return true;
  }
  return false;
}

std::vector<DeviceUtilization> SimulatedDeviceSampler::Sample() {
  MutexLock lock(mu_);
  return devices_;
}

TaskUsageSource TaskUsageFrom(const ProcessRuntime& runtime) {
  return [&runtime] {
    std::map<std::string, CgroupUsage> out;
    for (const auto& rec : runtime.List()) {
      if (rec.phase == TaskPhase::kExited) continue;
      auto usage = runtime.Usage(rec.task_id);
      if (usage.ok()) out[rec.task_id] = *usage;
    }
    return out;
  };
}

UtilizationSnapshot UtilizationSampler::Sample() {
  UtilizationSnapshot snap;
  snap.taken_at = clock_.Now();
  for (const auto& sampler : devices_) {
    for (auto& d : sampler->Sample()) snap.devices.push_back(std::move(d));
  }
  std::map<std::string, int64_t> now_usec;
  if (tasks_) {
    int64_t wall = previous_at_ ? (snap.taken_at - *previous_at_).count() : 0;
    for (const auto& [id, usage] : tasks_()) {
      TaskUtilization t;
      t.task_id = id;
      t.cpu_usage_usec = usage.cpu_usage_usec;
      t.memory_bytes = usage.memory_bytes;
      auto prev = previous_usec_.find(id);
      if (prev != previous_usec_.end() && wall > 0) {
        int64_t delta = usage.cpu_usage_usec - prev->second;
        t.cpu_milli = delta > 0 ? delta * 1000 / wall : 0;
      }
      now_usec[id] = usage.cpu_usage_usec;
      snap.tasks.push_back(std::move(t));
    }
  }
  previous_usec_ = std::move(now_usec);
  previous_at_ = snap.taken_at;
  return snap;
}

}  // namespace abacus::agent
