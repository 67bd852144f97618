#include "agent/discover/fake.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "model/quantity.h"

namespace abacus::agent {

namespace {

constexpr int64_t kGi = int64_t{1} << 30;

bool ParseInt(std::string_view s, int& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

// Default device memory: a trailing "-<N>G" in the model, a few well-known models, else 16Gi.
int64_t DefaultMemory(const Flavor& f) {
  const std::string& m = f.model();
  size_t dash = m.rfind('-');
  if (dash != std::string::npos && m.size() > dash + 2 && m.back() == 'G') {
    int gb = 0;
    if (ParseInt(std::string_view(m).substr(dash + 1, m.size() - dash - 2), gb) && gb > 0) return gb * kGi;
  }
  static const std::map<std::string, int64_t> kKnown = {
      {"H200", 141 * kGi}, {"H100", 80 * kGi},   {"H800", 80 * kGi},  {"H20", 96 * kGi},
      {"L40S", 48 * kGi},  {"L4", 24 * kGi},     {"T4", 16 * kGi},    {"A10", 24 * kGi},
      {"Ascend910B1", 64 * kGi}, {"Ascend910B2", 64 * kGi}, {"Ascend910B3", 64 * kGi},
      {"Ascend910B4", 32 * kGi}, {"Ascend910B", 64 * kGi},  {"Ascend910A", 32 * kGi},
      {"MI300X", 192 * kGi}, {"MI250X", 128 * kGi}, {"MI210", 64 * kGi},
      {"DCU-Z100", 32 * kGi}, {"DCU-K100", 64 * kGi}, {"MLU370-X8", 48 * kGi}};
  auto it = kKnown.find(m);
  return it != kKnown.end() ? it->second : 16 * kGi;
}

struct VendorDefaults {
  std::string driver;
  std::map<std::string, std::string> runtimes;
  std::string link;
};

VendorDefaults DefaultsFor(const std::string& vendor) {
  if (vendor == "nvidia") return {"550.54.15", {{"cuda", "12.4"}}, "nvlink"};
  if (vendor == "huawei") return {"23.0.6", {{"cann", "8.0.RC1"}}, "hccs"};
  if (vendor == "amd") return {"6.7.0", {{"rocm", "6.1"}}, "xgmi"};
  if (vendor == "hygon") return {"6.3.8", {{"dtk", "24.04"}, {"rocm", "5.7"}}, "xgmi"};
  if (vendor == "cambricon") return {"5.10.22", {{"neuware", "3.10.2"}}, "mlulink"};
  return {"1.0", {}, "link"};
}

}  // namespace

Result<std::vector<FakeDeviceSpec>> ParseFakeDeviceSpecs(std::string_view text) {
  // 1) Split on commas; items with '=' and no ':' are attributes of the entry before them.
  struct Raw {
    std::string base;
    std::vector<std::string> attrs;
  };
  std::vector<Raw> raws;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item(text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    start = comma == std::string_view::npos ? text.size() + 1 : comma + 1;
    if (item.empty()) continue;
    size_t at = item.find('@');
    if (at == std::string::npos && item.find(':') == std::string::npos && item.find('=') != std::string::npos) {
      if (raws.empty()) return InvalidArgument("fake device spec: attribute '" + item + "' before any device entry");
      raws.back().attrs.push_back(item);
      continue;
    }
    Raw raw;
    raw.base = item.substr(0, at);
    if (at != std::string::npos) {
      std::string attr = item.substr(at + 1);
      if (attr.empty()) return InvalidArgument("fake device spec '" + item + "': empty attribute after '@'");
      raw.attrs.push_back(attr);
    }
    raws.push_back(std::move(raw));
  }
  if (raws.empty()) return InvalidArgument("empty fake device spec (expected KIND:VENDOR:MODEL:COUNT[:MEMORY][@KEY=VALUE,...])");

  // 2) Parse each entry's base with the ledger's parser, then its attributes.
  std::vector<FakeDeviceSpec> out;
  for (const auto& raw : raws) {
    ABACUS_ASSIGN_OR_RETURN(auto bases, ParseDeviceSpecs(raw.base));
    FakeDeviceSpec spec;
    spec.base = bases.front();
    for (const auto& attr : raw.attrs) {
      size_t eq = attr.find('=');
      auto bad = [&](const std::string& why) {
        return InvalidArgument("fake device spec '" + raw.base + "': attribute '" + attr + "': " + why);
      };
      if (eq == std::string::npos || eq == 0 || eq + 1 == attr.size()) return bad("expected KEY=VALUE");
      std::string key = attr.substr(0, eq);
      std::string value = attr.substr(eq + 1);
      if (key == "driver") {
        spec.driver_version = value;
      } else if (key == "domain") {
        if (!ParseInt(value, spec.domain_size) || spec.domain_size < 0) return bad("domain must be an integer >= 0");
      } else if (key == "numa") {
        if (!ParseInt(value, spec.numa_nodes) || spec.numa_nodes < 1) return bad("numa must be an integer >= 1");
      } else if (key == "unhealthy") {
        int idx = 0;
        if (!ParseInt(value, idx) || idx < 0 || idx >= spec.base.count) {
          return bad("unhealthy must be a device index 0.." + std::to_string(spec.base.count - 1));
        }
        spec.unhealthy.push_back(idx);
      } else {
        for (char c : key) {
          if (!(std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)))) {
            return bad("runtime name must be lower-case letters and digits");
          }
        }
        spec.runtime_versions[key] = value;
      }
    }
    out.push_back(std::move(spec));
  }
  return out;
}

std::vector<Device> MakeFakeDevices(const std::vector<FakeDeviceSpec>& specs, std::string_view node_name,
                                    std::map<std::string, int> first_index) {
  std::vector<Device> out;
  std::string node = node_name.empty() ? std::string("node") : std::string(node_name);
  for (const auto& spec : specs) {
    const Flavor& f = spec.base.flavor;
    VendorDefaults defaults = DefaultsFor(f.vendor());
    int& next = first_index[f.vendor()];
    for (int i = 0; i < spec.base.count; ++i) {
      Device d;
      d.index = next++;
      d.flavor = f;
      d.memory_bytes = spec.base.memory_bytes > 0 ? spec.base.memory_bytes : DefaultMemory(f);
      d.uuid = "SIM-" + f.vendor() + "-" + f.model() + "-" + node + "-" + std::to_string(d.index);
      d.driver_version = spec.driver_version.empty() ? defaults.driver : spec.driver_version;
      d.runtime_versions = defaults.runtimes;
      for (const auto& [k, v] : spec.runtime_versions) d.runtime_versions[k] = v;
      d.simulated = true;
      d.health = std::find(spec.unhealthy.begin(), spec.unhealthy.end(), i) != spec.unhealthy.end()
                     ? DeviceHealth::kUnhealthy
                     : DeviceHealth::kHealthy;
      d.topology.numa_node = i * spec.numa_nodes / spec.base.count;
      if (spec.domain_size > 0) {
        d.topology.interconnect_domain = defaults.link + "-" + f.model() + "-" + std::to_string(i / spec.domain_size);
      }
      d.topology.pcie_switch = "sim-pcie-" + f.model() + "-" + std::to_string(i / 2);
      out.push_back(std::move(d));
    }
  }
  return out;
}

Result<std::vector<Device>> FakeDeviceSource::Discover(const HostInfo&, const std::vector<Device>& so_far) {
  std::map<std::string, int> first;
  for (const auto& d : so_far) {
    int& n = first[d.flavor.vendor()];
    n = std::max(n, d.index + 1);
  }
  return MakeFakeDevices(specs_, node_name_, std::move(first));
}

}  // namespace abacus::agent
