#include "model/device.h"

#include <charconv>

#include "common/split_list.h"
#include "model/quantity.h"

namespace abacus {

std::string_view DeviceHealthName(DeviceHealth h) {
  switch (h) {
    case DeviceHealth::kHealthy: return "Healthy";
    case DeviceHealth::kUnhealthy: return "Unhealthy";
    case DeviceHealth::kUnknown: return "Unknown";
  }
  return "Unknown";
}

int32_t Device::AllocatedMilli() const {
  int32_t sum = 0;
  for (const auto& a : allocations) sum += a.milli;
  return sum;
}

int64_t Device::AllocatedMemory() const {
  int64_t sum = 0;
  for (const auto& a : allocations) sum += a.memory_bytes;
  return sum;
}

Status Device::Allocate(const std::string& task_id, int32_t milli, int64_t mem) {
  std::string where = flavor.name() + " #" + std::to_string(index);
  if (milli <= 0 || milli > kWholeMilli) {
    return InvalidArgument(where + ": share " + std::to_string(milli) + " outside 1..1000");
  }
  if (mem < 0) return InvalidArgument(where + ": negative device memory");
  if (health != DeviceHealth::kHealthy) {
    return FailedPrecondition(where + " is " + std::string(DeviceHealthName(health)));
  }
  for (const auto& a : allocations) {
    if (a.task_id == task_id) return FailedPrecondition(where + " is already held by " + task_id);
  }
  if (milli > FreeMilli()) {
    return FailedPrecondition(where + ": " + std::to_string(milli) + "m requested, " +
                              std::to_string(FreeMilli()) + "m free");
  }
  if (mem > FreeMemory()) {
    return FailedPrecondition(where + ": device memory " + std::to_string(mem) + " requested, " +
                              std::to_string(FreeMemory()) + " free");
  }
  allocations.push_back({task_id, milli, mem});
  return Status::OK();
}

Status Device::Release(const std::string& task_id) {
  for (auto it = allocations.begin(); it != allocations.end(); ++it) {
    if (it->task_id == task_id) {
      allocations.erase(it);
      return Status::OK();
    }
  }
  return NotFound(flavor.name() + " #" + std::to_string(index) + " is not held by " + task_id);
}

Result<std::vector<DeviceSpec>> ParseDeviceSpecs(std::string_view text) {
  std::vector<DeviceSpec> out;
  for (std::string_view entry : SplitList(text)) {
    auto bad = [&](const std::string& why) {
      return InvalidArgument("device spec '" + std::string(entry) + "': " + why +
                             " (expected KIND:VENDOR:MODEL:COUNT[:MEMORY], e.g. gpu:nvidia:A100-80G:8:80Gi)");
    };
    std::vector<std::string_view> parts;
    size_t p = 0;
    while (true) {
      size_t c = entry.find(':', p);
      parts.push_back(entry.substr(p, c == std::string_view::npos ? std::string_view::npos : c - p));
      if (c == std::string_view::npos) break;
      p = c + 1;
    }
    if (parts.size() != 4 && parts.size() != 5) return bad("wrong number of fields");
    std::string name = std::string(parts[0]) + "/" + std::string(parts[1]) + "/" + std::string(parts[2]);
    auto flavor = Flavor::Parse(name);
    if (!flavor.ok()) return bad(flavor.status().message());
    DeviceSpec spec;
    spec.flavor = *flavor;
    auto [ptr, ec] = std::from_chars(parts[3].data(), parts[3].data() + parts[3].size(), spec.count);
    if (ec != std::errc() || ptr != parts[3].data() + parts[3].size() || spec.count < 1 || spec.count > 64) {
      return bad("COUNT must be an integer 1..64");
    }
    if (parts.size() == 5) {
      auto mem = Quantity::Parse(parts[4]);
      if (!mem.ok()) return bad(mem.status().message());
      if (mem->milli() <= 0) return bad("MEMORY must be positive");
      spec.memory_bytes = mem->CeilUnits();
    }
    out.push_back(std::move(spec));
  }
  if (out.empty()) return InvalidArgument("empty device spec (expected KIND:VENDOR:MODEL:COUNT[:MEMORY])");
  return out;
}

}  // namespace abacus
