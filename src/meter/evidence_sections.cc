// Evidence sections over the ledger: inventory, queues and quotas, submissions, utilization.
#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "meter/borrowing.h"
#include "meter/evidence_model.h"
#include "meter/units.h"
#include "meter/utilization.h"
#include "model/resources.h"

namespace abacus::meter {
namespace {

int64_t WindowMicros(const ReportWindow& w) { return std::max<int64_t>(0, (w.end() - w.from).count()); }

std::string Percent(ResourceTime part, ResourceTime whole) {
  if (whole <= 0) return "";
  return FormatPercent(static_cast<double>(part) / static_cast<double>(whole));
}

}  // namespace

EvidenceSection InventorySection(const EvidenceInput& in) {
  EvidenceSection s{"inventory", "Resource inventory", "", {}, {}};
  std::vector<InventoryRow> rows(in.inventory.begin(), in.inventory.end());
  std::sort(rows.begin(), rows.end(), [](const InventoryRow& a, const InventoryRow& b) {
    return std::tie(a.cluster, a.pool, a.flavor) < std::tie(b.cluster, b.pool, b.flavor);
  });
  Table t;
  t.columns = {{"cluster", false}, {"pool", false}, {"flavor", false},
               {"nodes", true},    {"devices", true}, {"healthyDevices", true}};
  std::map<std::string, double> by_flavor;
  int64_t devices = 0;
  for (const auto& r : rows) {
    t.rows.push_back({r.cluster, r.pool, r.flavor, std::to_string(r.nodes), std::to_string(r.devices),
                      std::to_string(r.healthy_devices)});
    by_flavor[r.flavor] += static_cast<double>(r.devices);
    devices += r.devices;
  }
  s.text = "The ledger holds " + std::to_string(devices) + " devices in " + std::to_string(rows.size()) +
           " cluster/pool/flavor groups (as of the report's generation).";
  s.tables.push_back(std::move(t));
  s.charts.push_back({"Devices by flavor", "devices", {by_flavor.begin(), by_flavor.end()}});
  return s;
}

EvidenceSection QueueSection(const EvidenceInput& in) {
  EvidenceSection s{"queues", "Queues, quotas, use and borrowing", "", {}, {}};
  BorrowingResult borrowing = ComputeBorrowing(in.intervals, in.quotas, in.window);
  struct Row {
    std::string tenant, cohort;
    int64_t nominal = 0;
    ResourceTime used = 0, borrowed = 0, lent = 0;
  };
  std::map<std::pair<std::string, std::string>, Row> rows;  // (queue, flavor)
  for (const QueueQuota& q : in.quotas) {
    Row& r = rows[{q.queue, q.flavor}];
    r.tenant = q.tenant;
    r.cohort = q.cohort;
    r.nominal = q.nominal_milli;
  }
  for (const UsageInterval& iv : in.intervals) {
    if (iv.device_milli <= 0) continue;
    auto [a, b] = Clip(iv, in.window.from, in.window.to, in.window.now);
    if (a >= b) continue;
    Row& r = rows[{iv.queue, iv.flavor}];
    if (r.tenant.empty()) r.tenant = iv.tenant;
    r.used += static_cast<ResourceTime>(iv.device_milli) * (b - a).count();
  }
  for (const QueueUse& u : borrowing.queues) {
    Row& r = rows[{u.queue, u.flavor}];
    r.borrowed = u.borrowed;
    r.lent = u.lent;
  }
  Table t;
  t.columns = {{"queue", false},        {"tenant", false},          {"cohort", false},
               {"flavor", false},       {"nominal", true},          {"usedDeviceHours", true},
               {"percentOfNominal", true}, {"borrowedDeviceHours", true}, {"lentDeviceHours", true}};
  const ResourceTime window_us = WindowMicros(in.window);
  for (const auto& [key, r] : rows) {
    t.rows.push_back({key.first, r.tenant, r.cohort, key.second, FormatDeviceMilli(r.nominal),
                      FormatMilliHours(r.used), Percent(r.used, r.nominal * window_us),
                      FormatMilliHours(r.borrowed), FormatMilliHours(r.lent)});
  }
  s.text = "Device-hours each queue used per flavor against its nominal quota over the window; "
           "borrowed is use above nominal, lent is what other queues of its cohort borrowed from it.";
  s.charts.push_back(ChartOf(t, "Device-hours used by queue", "device-hours", {"queue", "flavor"}, "usedDeviceHours"));
  s.tables.push_back(std::move(t));
  Table flows = BorrowFlowTable(borrowing, in.window);
  flows.title = "Who lent to whom";
  s.tables.push_back(std::move(flows));
  return s;
}

EvidenceSection SubmissionSection(const EvidenceInput& in) {
  EvidenceSection s{"submissions", "Submissions and scheduling results", "", {}, {}};
  const ReportWindow& w = in.window;
  auto in_window = [&](const std::optional<Time>& t) { return t && *t >= w.from && *t < w.end(); };
  enum { kSubmitted, kAdmitted, kSucceeded, kFailed, kCancelled, kPreemptions, kPending, kCount };
  std::map<std::string, std::array<int64_t, kCount>> by_kind;
  std::map<std::string, std::string> kind_of;
  for (const WorkloadSummary& wl : in.workloads) {
    kind_of[wl.id] = wl.kind;
    auto& c = by_kind[wl.kind];
    if (in_window(wl.submitted)) ++c[kSubmitted];
    if (in_window(wl.admitted)) ++c[kAdmitted];
    if (in_window(wl.finished)) {
      if (wl.state == "Succeeded") ++c[kSucceeded];
      if (wl.state == "Failed") ++c[kFailed];
      if (wl.state == "Cancelled") ++c[kCancelled];
    }
    bool waiting = wl.submitted < w.end() && (!wl.admitted || *wl.admitted >= w.end()) &&
                   (!wl.finished || *wl.finished >= w.end());
    if (waiting) ++c[kPending];
  }
  for (const PreemptionEvent& e : in.preemptions) {
    if (!in_window(e.time)) continue;
    auto it = kind_of.find(e.workload_id);
    ++by_kind[it == kind_of.end() ? "unknown" : it->second][kPreemptions];
  }
  Table t;
  t.columns = {{"kind", false},     {"submitted", true}, {"admitted", true},    {"succeeded", true},
               {"failed", true},    {"cancelled", true}, {"preemptions", true}, {"pendingAtEnd", true}};
  std::array<int64_t, kCount> total{};
  for (const auto& [kind, c] : by_kind) {
    std::vector<std::string> row{kind};
    for (int i = 0; i < kCount; ++i) {
      row.push_back(std::to_string(c[i]));
      total[i] += c[i];
    }
    t.rows.push_back(std::move(row));
  }
  s.charts.push_back(ChartOf(t, "Workloads submitted by kind", "workloads", {"kind"}, "submitted"));
  std::vector<std::string> row{"all"};
  for (int64_t v : total) row.push_back(std::to_string(v));
  t.rows.push_back(std::move(row));
  s.text = std::to_string(total[kSubmitted]) + " workloads submitted, " + std::to_string(total[kAdmitted]) +
           " admitted, " + std::to_string(total[kPending]) + " still waiting at the end of the window.";
  s.tables.push_back(std::move(t));
  return s;
}

EvidenceSection UtilizationSection(const EvidenceInput& in) {
  EvidenceSection s{"utilization", "Utilization", "", {}, {}};
  struct Row {
    int64_t devices = 0;
    ResourceTime allocated = 0;
    IntervalUtilization measured;
  };
  std::map<std::string, Row> rows;
  for (const InventoryRow& r : in.inventory) rows[r.flavor].devices += r.devices;
  UtilizationIndex index(in.utilization, in.max_sample_gap);
  for (const UsageInterval& iv : in.intervals) {
    if (iv.device_milli <= 0) continue;
    auto [a, b] = Clip(iv, in.window.from, in.window.to, in.window.now);
    if (a >= b) continue;
    Row& r = rows[iv.flavor];
    r.allocated += static_cast<ResourceTime>(iv.device_milli) * (b - a).count();
    IntervalUtilization u = Measure(index, iv, a, b, in.idle_threshold, nullptr);
    r.measured.measured += u.measured;
    r.measured.idle += u.idle;
    r.measured.busy += u.busy;
  }
  // Capacity is what existed in the window (capacity.h), not today's inventory × the window.
  const std::map<std::string, FlavorCapacity> existed = CapacityByFlavor(in.capacity, in.window);
  for (const auto& [flavor, c] : existed) rows[flavor];
  Table t;
  t.columns = {{"flavor", false},          {"devices", true},      {"capacityDeviceHours", true},
               {"allocatedDeviceHours", true}, {"allocationPercent", true}, {"measuredDeviceHours", true},
               {"meanUtilizationPercent", true}, {"idleDeviceHours", true}, {"downDeviceHours", true},
               {"drainedDeviceHours", true}};
  for (const auto& [flavor, r] : rows) {
    auto it = existed.find(flavor);
    const FlavorCapacity c = it == existed.end() ? FlavorCapacity{} : it->second;
    const ResourceTime capacity = c.total;
    std::string mean = r.measured.measured > 0
                           ? FormatPercent(r.measured.busy / static_cast<double>(r.measured.measured))
                           : "";
    t.rows.push_back({flavor, std::to_string(r.devices), FormatMilliHours(capacity), FormatMilliHours(r.allocated),
                      Percent(r.allocated, capacity), FormatMilliHours(r.measured.measured), mean,
                      FormatMilliHours(r.measured.idle), FormatMilliHours(c.down), FormatMilliHours(c.drained)});
  }
  s.text = "Capacity is the device-hours that existed in the window: each node's devices from its "
           "registration on, with the time its node was down (NotReady) or drained (cordoned, draining) "
           "also shown apart. Allocation is device-hours held by tasks over that capacity; "
           "mean utilization is measured by the agents over the allocated devices, and idle is "
           "allocated time measured below " + FormatPercent(in.idle_threshold) + "%.";
  s.charts.push_back(ChartOf(t, "Allocation by flavor", "%", {"flavor"}, "allocationPercent"));
  s.charts.push_back(ChartOf(t, "Mean measured utilization by flavor", "%", {"flavor"}, "meanUtilizationPercent"));
  s.tables.push_back(std::move(t));
  return s;
}

}  // namespace abacus::meter
