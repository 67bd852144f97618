// UsageInterval: one allocation held by one task, from start to end, with everything reports
// group by. The unit of metering: usage and cost are sums over clipped intervals.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace abacus::meter {

// Why an interval ended; kOpen while it has not.
enum class EndReason {
  kOpen,
  kSucceeded,
  kFailed,
  kPreempted,
  kReclaimed,
  kCancelled,
  kNodeLost,
  kScaledDown,
  kServerRestart,
  kDrained,   // its node was drained (abacus drain)
  kRequeued,  // an operator requeued or suspended it (abacus requeue, suspend)
};

// Returns "Open", "Succeeded", "Failed", "Preempted", "Reclaimed", "Cancelled", "NodeLost",
// "ScaledDown", "ServerRestart", "Drained" or "Requeued".
std::string_view EndReasonName(EndReason reason);
// Parses a name EndReasonName returns; InvalidArgument otherwise.
Result<EndReason> ParseEndReason(std::string_view text);

struct UsageInterval {
  std::string id;  // store key, "<task_id>@<start micros>"; set by UsageLedger::Open
  std::string workload_id;
  std::string task_id;
  std::string tenant;
  std::string project;  // "tenant/project"
  std::string queue;
  std::string priority_class;
  std::string kind;   // workload kind: "TrainingJob", "InferenceService", ...
  std::string model;  // the workload's `model` label; may be empty
  std::string user;   // who submitted the workload ("" when not recorded)
  // How reports name the workload: its name, or "name (id)" when the name is ambiguous; set by
  // the report from the ledger, not stored. Empty: reports show workload_id.
  std::string workload_label;
  std::string node;
  std::string cluster;
  std::string pool;
  std::string flavor;             // "gpu/nvidia/A100-80G", or "cpu" for CPU-only work
  int64_t device_milli = 0;       // 1000 per whole device; 500 = half a device
  std::vector<int> devices;       // device indices on the node (for utilization)
  int64_t device_memory_bytes = 0;
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  // Extended resources held, by name ("rdma/hca" → 2, "ephemeral-storage" → bytes).
  std::map<std::string, int64_t> extended;
  Time start{};
  std::optional<Time> end;  // nullopt while open
  EndReason end_reason = EndReason::kOpen;

  bool open() const { return !end.has_value(); }
  bool operator==(const UsageInterval&) const = default;
};

// Returns the store document of `iv` (times as microseconds and RFC 3339).
nlohmann::json UsageToJson(const UsageInterval& iv);
// Reads a document UsageToJson wrote; InvalidArgument naming the problem.
Result<UsageInterval> UsageFromJson(const nlohmann::json& j);

// Returns the part of [iv.start, iv.end or `now`) that lies in [from, to), as [a, b); a >= b
// when they do not overlap.
std::pair<Time, Time> Clip(const UsageInterval& iv, Time from, Time to, Time now);

}  // namespace abacus::meter
