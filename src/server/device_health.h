// Device and node health drive placement (issue 26; docs/agent.md "Device health"). The rules,
// pure over a NodeRecord so that tests and the server run the same code:
//   - a device the agent reports Unhealthy (it was Healthy) is a fault: it is recorded with the
//     agent's reason, and the device takes no new work (the server also fails its tasks over);
//   - a device the agent reports Healthy again waits out `clean_window` (probation) before work
//     goes there; an operator's uncordon ends the probation at once;
//   - a node with `cordon_after` faults within `window` is cordoned by the rule "abacus/health"
//     (new work goes elsewhere; what runs on its healthy devices keeps running), and comes back
//     after an operator's uncordon or once `clean_window` passed without a fault and every
//     device is healthy.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/clock.h"
#include "model/device.h"
#include "server/records.h"

namespace abacus::server {

// The cordon's `by` when the health rule cordons a node.
inline constexpr char kHealthRule[] = "abacus/health";

struct HealthPolicy {
  int32_t cordon_after = 3;                            // faults within `window` that cordon; 0: never
  Duration window = std::chrono::hours(24);            // faults older than this are forgotten
  Duration clean_window = std::chrono::minutes(10);    // a recovered device (node) waits this long; 0: at once
};

// What an agent says of one device in a heartbeat.
struct DeviceHealthReport {
  DeviceHealth health = DeviceHealth::kHealthy;
  std::string reason;  // why Unhealthy, when the agent knows
};

// What applying reports or settling changed, for the event, the audit and the metrics.
struct HealthOutcome {
  std::vector<DeviceFaultRecord> faults;  // new faults
  std::vector<int32_t> recovering;        // devices that entered probation
  std::vector<int32_t> recovered;         // devices back in service
  std::vector<int32_t> other;             // other health changes (Unknown, a device unhealthy at first sight)
  bool cordoned = false;                  // the rule cordoned the node
  bool uncordoned = false;                // the rule's cordon ended after a clean window
  std::string cordon_reason;
  bool changed() const {
    return !faults.empty() || !recovering.empty() || !recovered.empty() || !other.empty() || cordoned || uncordoned;
  }
};

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
