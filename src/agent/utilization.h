// Utilization sampling for the heartbeat: per device (NVML, or configured values for simulated
// devices) and per task (CPU rate and memory from the task's cgroup or process).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "agent/discover/nvml.h"
#include "agent/runtime/cgroup.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "model/device.h"

namespace abacus::agent {

class ProcessRuntime;

struct DeviceUtilization {
  std::string uuid;
  int index = 0;
  int compute_percent = -1;         // -1: unknown
  int64_t memory_used_bytes = -1;   // -1: unknown
  int64_t memory_total_bytes = 0;
  bool operator==(const DeviceUtilization&) const = default;
};

struct TaskUtilization {
  std::string task_id;
  int64_t cpu_usage_usec = 0;  // cumulative
  int64_t cpu_milli = -1;      // average since the previous snapshot; -1 on the first
  int64_t memory_bytes = 0;
};

// What one heartbeat carries.
struct UtilizationSnapshot {
  Time taken_at{};
  std::vector<DeviceUtilization> devices;
  std::vector<TaskUtilization> tasks;
};

class DeviceSampler {
 public:
  virtual ~DeviceSampler() = default;
  virtual std::vector<DeviceUtilization> Sample() = 0;
};

// NVIDIA devices through NVML (nvmlDeviceGetUtilizationRates, nvmlDeviceGetMemoryInfo); no
// library: no samples.
class NvmlDeviceSampler final : public DeviceSampler {
 public:
  explicit NvmlDeviceSampler(NvmlOpener opener) : opener_(std::move(opener)) {}
  std::vector<DeviceUtilization> Sample() override;

 private:
  NvmlOpener opener_;
};

// Simulated devices: reports what was last set for each device (0 % and 0 bytes used until
// then). Thread-safe.
class SimulatedDeviceSampler final : public DeviceSampler {
 public:
  explicit SimulatedDeviceSampler(const std::vector<Device>& devices);
  // Sets the utilization reported for `uuid` (tests, demos); false for an unknown device.
  bool Set(const std::string& uuid, int compute_percent, int64_t memory_used_bytes);
  std::vector<DeviceUtilization> Sample() override;

 private:
  Mutex mu_;
  std::vector<DeviceUtilization> devices_ GUARDED_BY(mu_);
};

// Returns the cumulative usage of each live task.
using TaskUsageSource = std::function<std::map<std::string, CgroupUsage>()>;
// The live tasks of `runtime` (it must outlive the returned function).
TaskUsageSource TaskUsageFrom(const ProcessRuntime& runtime);

class UtilizationSampler {
 public:
  UtilizationSampler(const Clock& clock, std::vector<std::unique_ptr<DeviceSampler>> devices, TaskUsageSource tasks)
      : clock_(clock), devices_(std::move(devices)), tasks_(std::move(tasks)) {}
  // Takes a snapshot; a task's cpu_milli is its CPU time since the previous snapshot divided by
  // the clock time between them.
  UtilizationSnapshot Sample();

 private:
  const Clock& clock_;
  std::vector<std::unique_ptr<DeviceSampler>> devices_;
  TaskUsageSource tasks_;
  std::optional<Time> previous_at_;
  std::map<std::string, int64_t> previous_usec_;
};

}  // namespace abacus::agent
