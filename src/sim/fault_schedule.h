// Device faults for a trace replay (`abacus sim events --faults FILE`, `--fault-rate`;
// docs/simulator.md §5 "Device faults"). A schedule is what the agents would report: a device
// Unhealthy (a fault), Healthy again (a recovery), or an operator's uncordon of a node. The
// driver feeds it to the server's health rule (sched/health_rule.h); nothing here decides.
//
// File format, one event a line (`#` starts a comment; blank lines are skipped):
//   TIME NODE DEVICE fault [REASON...]
//   TIME NODE DEVICE recover
//   TIME NODE uncordon
// TIME is seconds from the trace's start ("5400") or a duration ("90m", "2h", "1d12h"); DEVICE is
// a device index of NODE. Lines need not be in time order: events apply in time order, those at
// one time in file order.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "sched/types.h"

namespace abacus::sim {

struct FaultEvent {
  enum class Kind : uint8_t {
    kFault,     // the device is reported Unhealthy
    kRecover,   // the device is reported Healthy again
    kUncordon,  // an operator uncordons the node (ends the health cordon and probations)
  };
  int64_t t_s = 0;       // seconds from the trace's start
  int32_t node = -1;     // index into the cluster's nodes
  int32_t device = -1;   // the device's index (sched::DeviceInfo::index); -1 for kUncordon
  Kind kind = Kind::kFault;
  std::string reason;    // kFault: what the agent said
  std::string where;     // "FILE:LINE", or "fault-rate" for generated events
};

// Parses a fault schedule (`path` names it in errors) against `nodes`. InvalidArgument
// "FILE:LINE: FIELD: expected …, got '…'" at the first bad line. The events come back in time
// order (stable: same-time lines keep their file order).
Result<std::vector<FaultEvent>> ParseFaultSchedule(std::string_view text, const std::string& path,
                                                   const std::vector<sched::NodeInfo>& nodes);

// Reads and parses the fault schedule at `path`.
Result<std::vector<FaultEvent>> LoadFaultSchedule(const std::string& path, const std::vector<sched::NodeInfo>& nodes);

// Random faults: every device of `nodes` fails after an exponentially distributed healthy time
// (mean 1 / per_device_day days) and is reported healthy again `repair` later; from `from_s`
// until `to_s`. The same seed gives the same events.
struct FaultRateOptions {
  double per_device_day = 0;  // faults per device and day while healthy
  Duration repair = std::chrono::hours(4);
  uint64_t seed = 42;
  int64_t from_s = 0, to_s = 0;
};
std::vector<FaultEvent> RandomFaults(const std::vector<sched::NodeInfo>& nodes, const FaultRateOptions& options);

// Merges `b` into `a`, keeping time order (a's events first at equal times).
std::vector<FaultEvent> MergeFaults(std::vector<FaultEvent> a, std::vector<FaultEvent> b);

}  // namespace abacus::sim
