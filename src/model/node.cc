#include "model/node.h"

namespace abacus {

std::string_view NodeStateName(NodeState s) {
  switch (s) {
    case NodeState::kReady: return "Ready";
    case NodeState::kNotReady: return "NotReady";
    case NodeState::kCordoned: return "Cordoned";
    case NodeState::kDraining: return "Draining";
    case NodeState::kDrained: return "Drained";
  }
  return "NotReady";
}

Result<NodeState> ParseNodeState(std::string_view text) {
  for (auto s : {NodeState::kReady, NodeState::kNotReady, NodeState::kCordoned, NodeState::kDraining,
                 NodeState::kDrained}) {
    if (text == NodeStateName(s)) return s;
  }
  return InvalidArgument("unknown node state '" + std::string(text) +
                         "' (expected Ready, NotReady, Cordoned, Draining or Drained)");
}

std::string_view TaintEffectName(TaintEffect e) {
  switch (e) {
    case TaintEffect::kNoSchedule: return "NoSchedule";
    case TaintEffect::kPreferNoSchedule: return "PreferNoSchedule";
    case TaintEffect::kNoExecute: return "NoExecute";
  }
  return "NoSchedule";
}

Result<TaintEffect> ParseTaintEffect(std::string_view text) {
  for (auto e : {TaintEffect::kNoSchedule, TaintEffect::kPreferNoSchedule, TaintEffect::kNoExecute}) {
    if (text == TaintEffectName(e)) return e;
  }
  return InvalidArgument("unknown taint effect '" + std::string(text) +
                         "' (expected NoSchedule, PreferNoSchedule or NoExecute)");
}

bool Toleration::Tolerates(const Taint& taint) const {
  if (effect.has_value() && *effect != taint.effect) return false;
  if (op == Op::kExists) return key.empty() || key == taint.key;
  return key == taint.key && value == taint.value;
}

bool ToleratesAll(const std::vector<Taint>& taints, const std::vector<Toleration>& tolerations) {
  for (const auto& t : taints) {
    if (t.effect == TaintEffect::kPreferNoSchedule) continue;
    bool covered = false;
    for (const auto& tol : tolerations) {
      if (tol.Tolerates(t)) {
        covered = true;
        break;
      }
    }
    if (!covered) return false;
  }
  return true;
}

ResourceVector Node::Capacity() const {
  ResourceVector v;
  v.Set(ResourceKey::Cpu(), cpu_milli);
  v.Set(ResourceKey::Memory(), memory_bytes);
  for (const auto& d : devices) {
    if (d.health != DeviceHealth::kHealthy) continue;
    FlavorId f = d.flavor.Intern();
    v.Add(ResourceKey::Devices(f), Device::kWholeMilli);
    v.Add(ResourceKey::DeviceMemory(f), d.memory_bytes);
  }
  for (const auto& [name, amount] : extended) {
    if (auto r = ExtendedResource::Parse(name); r.ok()) v.Set(ResourceKey::Extended(r->Intern()), amount);
  }
  return v;
}

ResourceVector Node::Allocated() const {
  ResourceVector v;
  v.Set(ResourceKey::Cpu(), cpu_milli - FreeCpuMilli());
  v.Set(ResourceKey::Memory(), memory_bytes - FreeMemory());
  for (const auto& d : devices) {
    if (d.health != DeviceHealth::kHealthy) continue;
    FlavorId f = d.flavor.Intern();
    v.Add(ResourceKey::Devices(f), d.AllocatedMilli());
    v.Add(ResourceKey::DeviceMemory(f), d.AllocatedMemory());
  }
  return v;
}

int64_t Node::FreeCpuMilli() const {
  int64_t used = 0;
  for (const auto& [task, cm] : cpu_memory_allocations) used += cm.first;
  return cpu_milli - used;
}

int64_t Node::FreeMemory() const {
  int64_t used = 0;
  for (const auto& [task, cm] : cpu_memory_allocations) used += cm.second;
  return memory_bytes - used;
}

Device* Node::FindDevice(int index) {
  for (auto& d : devices) {
    if (d.index == index) return &d;
  }
  return nullptr;
}

const Device* Node::FindDevice(int index) const {
  for (const auto& d : devices) {
    if (d.index == index) return &d;
  }
  return nullptr;
}

}  // namespace abacus
