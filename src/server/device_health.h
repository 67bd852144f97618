// Device and node health drive placement (issue 26; docs/agent.md "Health", docs/scheduler.md
// "Device health"): the shared rule (sched/health_rule.h) applied to a NodeRecord. These adapt
// the record (its devices' health, its health history, its cordon) to the rule's NodeHealth and
// back; the scenario runner adapts a sched::NodeInfo the same way, so both run one copy.
#pragma once

#include <cstdint>
#include <map>

#include "common/clock.h"
#include "sched/health_rule.h"
#include "server/records.h"

namespace abacus::server {

using sched::DeviceHealthReport;
using sched::HealthOutcome;
using sched::HealthPolicy;
using sched::kHealthRule;

// Applies an agent's heartbeat `reports` (by device index) to `n` at `now`: faults, probation,
// forgetting old faults, and the cordon when the node reached cordon_after faults.
HealthOutcome ApplyHealthReports(NodeRecord& n, const std::map<int32_t, DeviceHealthReport>& reports, Time now,
                                 const HealthPolicy& policy);

// Moves time on for `n` at `now`: devices whose probation passed return to service; the rule's
// cordon ends once clean_window passed since the last fault with every device healthy.
HealthOutcome SettleHealth(NodeRecord& n, Time now, const HealthPolicy& policy);

// An operator's uncordon: devices on probation return to service now and the faults are forgotten.
void ClearHealthOnUncordon(NodeRecord& n);

// Returns when `n` next needs SettleHealth (the earliest probation end or cordon end), or
// Time{} when nothing waits.
Time NextHealthDeadline(const NodeRecord& n, const HealthPolicy& policy);

}  // namespace abacus::server
