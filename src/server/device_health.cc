#include "server/device_health.h"

namespace abacus::server {
namespace {

sched::NodeHealth View(const NodeRecord& n) {
  sched::NodeHealth v;
  for (const Device& d : n.node.devices) v.devices[d.index] = d.health;
  v.history = n.health;
  if (n.cordon.state == NodeState::kReady) {
    v.cordon = sched::CordonHolder::kNone;
  } else if (n.cordon.state == NodeState::kCordoned && n.cordon.by == kHealthRule) {
    v.cordon = sched::CordonHolder::kRule;
  } else {
    v.cordon = sched::CordonHolder::kOther;
  }
  v.cordon_since = n.cordon.since;
  return v;
}

void WriteBack(const sched::NodeHealth& v, const HealthOutcome& out, Time now, NodeRecord& n) {
  for (Device& d : n.node.devices) {
    if (auto it = v.devices.find(d.index); it != v.devices.end()) d.health = it->second;
  }
  n.health = v.history;
  if (out.cordoned) n.cordon = NodeCordonRecord{NodeState::kCordoned, now, Time{}, false, kHealthRule, out.cordon_reason};
  if (out.uncordoned) n.cordon = NodeCordonRecord{};
}

}  // namespace

HealthOutcome ApplyHealthReports(NodeRecord& n, const std::map<int32_t, DeviceHealthReport>& reports, Time now,
                                 const HealthPolicy& policy) {
  sched::NodeHealth v = View(n);
  HealthOutcome out = sched::ApplyHealthReports(v, reports, now, policy);
  WriteBack(v, out, now, n);
  return out;
}

HealthOutcome SettleHealth(NodeRecord& n, Time now, const HealthPolicy& policy) {
  sched::NodeHealth v = View(n);
  HealthOutcome out = sched::SettleHealth(v, now, policy);
  WriteBack(v, out, now, n);
  return out;
}

void ClearHealthOnUncordon(NodeRecord& n) {
  sched::NodeHealth v = View(n);
  sched::ClearHealthOnUncordon(v);
  WriteBack(v, HealthOutcome{}, Time{}, n);
}

Time NextHealthDeadline(const NodeRecord& n, const HealthPolicy& policy) {
  return sched::NextHealthDeadline(View(n), policy);
}

}  // namespace abacus::server
