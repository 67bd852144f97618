#include "agent/runtime/env.h"

namespace abacus::agent {

std::string_view VisibilityVariable(std::string_view vendor) {
  if (vendor == "nvidia") return "CUDA_VISIBLE_DEVICES";
  if (vendor == "huawei") return "ASCEND_RT_VISIBLE_DEVICES";
  if (vendor == "amd" || vendor == "hygon") return "HIP_VISIBLE_DEVICES";
  if (vendor == "cambricon") return "MLU_VISIBLE_DEVICES";
  return "";
}

std::map<std::string, std::string> DeviceEnvironment(const std::vector<DeviceGrant>& grants,
                                                     const std::vector<std::string>& node_vendors) {
  std::map<std::string, std::string> env;
  auto append = [&](const std::string& key, const std::string& value) {
    std::string& v = env[key];
    if (!v.empty()) v += ',';
    v += value;
  };
  for (const auto& vendor : node_vendors) {
    std::string_view var = VisibilityVariable(vendor);
    if (!var.empty()) env[std::string(var)] = "";
  }
  bool shares = false;
  for (const auto& g : grants) shares = shares || g.IsShare();
  for (const auto& g : grants) {
    std::string_view var = VisibilityVariable(g.device.flavor.vendor());
    if (!var.empty()) append(std::string(var), std::to_string(g.device.index));
    append("ABACUS_DEVICES", g.device.uuid);
    if (shares) {
      append("ABACUS_DEVICE_SHARE_MILLI", std::to_string(g.milli));
      append("ABACUS_DEVICE_MEMORY_BYTES", std::to_string(g.memory_bytes > 0 ? g.memory_bytes : g.device.memory_bytes));
    }
  }
  return env;
}

}  // namespace abacus::agent
