// The metering reports (`abacus report …`, /api/v1/reports/*). Each is a pure function of its
// inputs and returns a Table; InvalidArgument when the grouping asks for a field the report
// does not have. See docs/metering.md for every rule.
#pragma once

#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "meter/capacity.h"
#include "meter/grouping.h"
#include "meter/price_list.h"
#include "meter/report_inputs.h"
#include "meter/table.h"
#include "meter/usage.h"

namespace abacus::meter {

struct UsageReportOptions {
  ReportWindow window;
  Grouping by;                        // any key; day/week/month buckets allowed
  const PriceList* prices = nullptr;  // none: costs are 0
};
// Device-, core- and GiB-hours and their cost per group over the window; intervals are clipped
// to it and split at bucket and price boundaries.
Result<Table> UsageReport(std::span<const UsageInterval> intervals, const UsageReportOptions& options);

struct WaitReportOptions {
  ReportWindow window;
  Grouping by;  // tenant, project, queue, flavor, kind, priorityClass, model; no buckets
};
// Queue wait (submission to first admission) percentiles, nearest-rank, over the workloads
// admitted in the window; plus those still waiting at its end.
Result<Table> WaitReport(std::span<const WorkloadSummary> workloads, const WaitReportOptions& options);

struct FailureReportOptions {
  ReportWindow window;
  Grouping by;  // reason is always the first column; workload keys and buckets (finish time)
};
// Workloads that finished Failed in the window, by reason and the grouping, with the share of
// the group's finished workloads.
Result<Table> FailureReport(std::span<const WorkloadSummary> workloads,
                            const FailureReportOptions& options);

struct IdleReportOptions {
  ReportWindow window;
  Grouping by;                          // interval keys; no buckets
  double threshold = 0.05;              // utilization below this is idle
  Duration max_sample_gap = std::chrono::minutes(10);  // a sample covers at most this long
  const PriceList* prices = nullptr;    // prices the idle device time
};
// Allocated device-hours, the part with utilization samples, and the part whose measured
// utilization was below the threshold (idle), with its cost; sorted by idle hours.
Result<Table> IdleReport(std::span<const UsageInterval> intervals,
                         std::span<const UtilizationSample> samples, const IdleReportOptions& options);

struct ShortageReportOptions {
  ReportWindow window;
  Grouping by;  // tenant, queue, flavor, workload (the service); no buckets
};
// Time inference services wanted replicas they could not get: episodes, hours, missing
// replica-hours and the longest episode.
Result<Table> ShortageReport(std::span<const ShortageInterval> shortages,
                             const ShortageReportOptions& options);

// Devices a reservation (kind Reservation) held for its owner over one window: reserved
// device-hours, of which what the owner's work did not use is reserved-idle.
struct ReservedSpan {
  std::string reservation;
  std::string node;
  std::string flavor;
  int64_t devices = 0;
  Time from{};
  Time to{};
  std::string tenant, queue, user;  // the owner (one of them)
};

struct UtilizationReportOptions {
  ReportWindow window;
  Grouping by;  // flavor (always first), pool, cluster; no buckets
  // Where each node is (node → {cluster, pool}); a node no longer known reads as "-".
  std::map<std::string, std::pair<std::string, std::string>> node_places;
  // Reservations' windows with an owner (maintenance windows are drained time already).
  std::vector<ReservedSpan> reserved;
};
// The cluster's device-hours as sreport's "cluster utilization" counts them: what existed (over
// each device's life, capacity.h), of which allocated (usage intervals), down (NotReady),
// drained (Cordoned, Draining, Drained), reserved-idle (held by a reservation for its owner, not
// used by the owner) and idle (the rest), with percentages of what existed.
Result<Table> UtilizationReport(std::span<const CapacitySpan> capacity, std::span<const UsageInterval> intervals,
                                const UtilizationReportOptions& options);

// Device-hours borrowed inside each cohort, from lender queue to borrower queue (see
// borrowing.h for the rule).
Table BorrowingReport(std::span<const UsageInterval> intervals, std::span<const QueueQuota> quotas,
                      const ReportWindow& window);

}  // namespace abacus::meter
