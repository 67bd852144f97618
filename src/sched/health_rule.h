// Device and node health drive placement (issue 26; docs/scheduler.md "Device health"). The one
// copy of the rule, pure over a small NodeHealth so that the server (server/device_health.h,
// over its NodeRecord) and the scenario runner (sim/scenario.h, over a sched::NodeInfo) run the
// same code:
//   - a device reported Unhealthy (it was Healthy, or on probation) is a fault: it is recorded
//     with the reason, and the device takes no new work (its tasks are failed over);
//   - a device reported Healthy again waits out `clean_window` (probation) before work goes
//     there; an operator's uncordon ends the probation at once;
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
#include "sched/types.h"

namespace abacus::sched {

// The cordon's `by` when the health rule cordons a node.
inline constexpr char kHealthRule[] = "abacus/health";

struct HealthPolicy {
  int32_t cordon_after = 3;                            // faults within `window` that cordon; 0: never
  Duration window = std::chrono::hours(24);            // faults older than this are forgotten
  Duration clean_window = std::chrono::minutes(10);    // a recovered device (node) waits this long; 0: at once
};

// What is said of one device (an agent's heartbeat, a scenario's fault/recover line).
struct DeviceHealthReport {
  DeviceHealth health = DeviceHealth::kHealthy;
  std::string reason;  // why Unhealthy, when known
};

// A device fault: the device went from Healthy to Unhealthy.
struct DeviceFault {
  int32_t index = 0;
  Time at{};
  std::string reason;  // what the agent said ("XID 79", "volatile uncorrected ECC errors", …)
  bool operator==(const DeviceFault&) const = default;
};

// A node's device health history: recent faults, and the devices reported healthy again that
// wait out the clean window before work goes there.
struct HealthHistory {
  std::vector<DeviceFault> faults;   // within the policy's window, oldest first
  std::map<int32_t, Time> probation;  // device index → healthy (as reported) since
  bool operator==(const HealthHistory&) const = default;
  bool empty() const { return faults.empty() && probation.empty(); }
};

// Who holds a node's cordon, as far as the rule cares.
enum class CordonHolder : uint8_t {
  kNone,   // not cordoned (nor draining)
  kRule,   // cordoned by kHealthRule
  kOther,  // an operator's cordon or drain: the rule leaves it alone
};

// What the rule reads and writes of one node.
struct NodeHealth {
  std::map<int32_t, DeviceHealth> devices;  // index → the health placement sees
  HealthHistory history;
  CordonHolder cordon = CordonHolder::kNone;
  Time cordon_since{};  // when the current cordon began
};

// Returns what the rule starts from for a snapshot node no report has touched yet: its devices'
// health flags, and a cordon held by someone else when the node is Cordoned, Draining or
// Drained (the simulator and the scenario files seed their nodes with it).
NodeHealth HealthOfSnapshotNode(const NodeInfo& node);

// What applying reports or settling changed, for the event, the audit and the metrics.
struct HealthOutcome {
  std::vector<DeviceFault> faults;   // new faults
  std::vector<int32_t> recovering;   // devices that entered probation
  std::vector<int32_t> recovered;    // devices back in service
  std::vector<int32_t> other;        // other health changes (Unknown, a device unhealthy at first sight)
  bool cordoned = false;             // the rule cordoned the node (n.cordon is kRule since now)
  bool uncordoned = false;           // the rule's cordon ended after a clean window
  std::string cordon_reason;
  bool changed() const {
    return !faults.empty() || !recovering.empty() || !recovered.empty() || !other.empty() || cordoned || uncordoned;
  }
};

// Applies `reports` (by device index) to `n` at `now`: faults, probation, forgetting old faults,
// and the cordon when the node reached cordon_after faults. Unknown device indexes are ignored.
HealthOutcome ApplyHealthReports(NodeHealth& n, const std::map<int32_t, DeviceHealthReport>& reports, Time now,
                                 const HealthPolicy& policy);

// Moves time on for `n` at `now`: devices whose probation passed return to service; the rule's
// cordon ends once clean_window passed since the last fault with every device healthy.
HealthOutcome SettleHealth(NodeHealth& n, Time now, const HealthPolicy& policy);

// An operator's uncordon: devices on probation return to service now and the faults are
// forgotten (the cordon itself is the caller's to lift).
void ClearHealthOnUncordon(NodeHealth& n);

// Returns when `n` next needs SettleHealth (the earliest probation end or cordon end), or
// Time{} when nothing waits.
Time NextHealthDeadline(const NodeHealth& n, const HealthPolicy& policy);

}  // namespace abacus::sched
