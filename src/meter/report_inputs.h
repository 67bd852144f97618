// What the reports read besides usage intervals; the server fills these from its records.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/clock.h"

namespace abacus::meter {

// The period a report covers, [from, to). Open intervals and episodes run until min(now, to).
struct ReportWindow {
  Time from{};
  Time to{};
  Time now = Time::max();

  // Returns the end of what has happened in the window: min(to, now).
  Time end() const { return to < now ? to : now; }
};

// One workload as the reports need it.
struct WorkloadSummary {
  std::string id;
  std::string name;
  std::string tenant;
  std::string project;
  std::string queue;
  std::string kind;            // "TrainingJob", ...
  std::string flavor;          // main accelerator flavor, "cpu" when none
  std::string priority_class;
  std::string model;
  std::string user;   // who submitted it ("" when not recorded)
  std::string label;  // its name, or "name (id)" when ambiguous; empty: reports show the id
  Time submitted{};
  std::optional<Time> admitted;  // first admission
  std::optional<Time> finished;  // when it reached a terminal state
  std::string state;             // "Pending", "Running", "Succeeded", "Failed", "Cancelled", ...
  std::string failure_reason;    // when Failed: "OOMKilled", "ExitCode", "NodeLost", ...
};

// A preemption or reclaim the scheduler issued.
struct PreemptionEvent {
  Time time{};
  std::string reason;  // "Reclaim" (quota taken back), "Priority", "Idle", ...
  std::string workload_id;  // the victim
  std::string tenant;
  std::string queue;
  std::string flavor;
  int64_t device_milli = 0;  // what the victim gave back
  std::string by_workload;   // the preemptor, empty for an idle reclaim
  std::string by_queue;
};

// Measured utilization of one device from `time` until the next sample of that device
// (at most the report's sample gap).
struct UtilizationSample {
  std::string node;
  int device = 0;  // device index on the node
  Time time{};
  double ratio = 0;  // 0..1
};

// A period when an inference service wanted more replicas than it could get.
struct ShortageInterval {
  std::string service_id;
  std::string service_name;
  std::string tenant;
  std::string queue;
  std::string flavor;
  int32_t wanted = 0;     // replicas it asked for
  int32_t available = 0;  // replicas it had
  Time start{};
  std::optional<Time> end;  // nullopt while it lasts
};

// One queue's quota of one accelerator flavor, for the borrowing rule.
struct QueueQuota {
  std::string queue;
  std::string tenant;
  std::string cohort;  // empty: not in a cohort (never lends or borrows)
  std::string flavor;
  int64_t nominal_milli = 0;
  std::optional<int64_t> lending_limit_milli;  // nullopt: all idle nominal may be lent
};

}  // namespace abacus::meter
