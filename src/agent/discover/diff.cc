#include "agent/discover/diff.h"

#include <map>

namespace abacus::agent {

namespace {

std::string Identity(const Device& d) {
  if (!d.uuid.empty()) return "uuid:" + d.uuid;
  return "index:" + d.flavor.name() + "#" + std::to_string(d.index);
}

std::string Label(const Device& d) {
  std::string s = d.flavor.name() + " #" + std::to_string(d.index);
  if (!d.uuid.empty()) s += " (" + d.uuid + ")";
  return s;
}

bool SameAttributes(const Device& a, const Device& b) {
  return a.flavor == b.flavor && a.index == b.index && a.memory_bytes == b.memory_bytes &&
         a.driver_version == b.driver_version && a.runtime_versions == b.runtime_versions &&
         a.topology == b.topology && a.simulated == b.simulated;
}

}  // namespace

DeviceDiff DiffDevices(const std::vector<Device>& previous, const std::vector<Device>& current) {
  DeviceDiff diff;
  std::map<std::string, const Device*> before;
  for (const auto& d : previous) before[Identity(d)] = &d;
  std::map<std::string, const Device*> now;
  for (const auto& d : current) now[Identity(d)] = &d;
  for (const auto& d : current) {
    auto it = before.find(Identity(d));
    if (it == before.end()) {
      diff.added.push_back(d);
    } else if (it->second->health != d.health) {
      diff.health_changed.emplace_back(*it->second, d);
    } else if (!SameAttributes(*it->second, d)) {
      diff.changed.emplace_back(*it->second, d);
    }
  }
  for (const auto& d : previous) {
    if (now.find(Identity(d)) == now.end()) diff.removed.push_back(d);
  }
  return diff;
}

std::vector<std::string> DeviceDiff::Describe() const {
  std::vector<std::string> out;
  for (const auto& d : removed) out.push_back("removed " + Label(d));
  for (const auto& d : added) out.push_back("added " + Label(d));
  for (const auto& [a, b] : health_changed) {
    out.push_back("health " + Label(b) + ": " + std::string(DeviceHealthName(a.health)) + " -> " +
                  std::string(DeviceHealthName(b.health)));
  }
  for (const auto& [a, b] : changed) out.push_back("changed " + Label(b));
  return out;
}

}  // namespace abacus::agent
