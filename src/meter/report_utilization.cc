// The utilization report: capacity over device lifetimes against what was allocated.
#include <algorithm>
#include <map>

#include "meter/reports.h"
#include "meter/units.h"

namespace abacus::meter {
namespace {

struct Hours {
  ResourceTime total = 0, allocated = 0, down = 0, drained = 0;  // milli-devices × us
};

// The group cells of a device on `node` of `flavor`: flavor first, then pool/cluster as asked.
std::vector<std::string> Cells(const std::string& flavor, const std::string& node, const Grouping& by,
                               const UtilizationReportOptions& o) {
  std::vector<std::string> cells{flavor};
  auto place = o.node_places.find(node);
  for (GroupKey k : by.keys) {
    if (k == GroupKey::kFlavor) continue;
    if (place == o.node_places.end()) {
      cells.emplace_back("-");
    } else {
      cells.push_back(k == GroupKey::kCluster ? place->second.first : place->second.second);
    }
  }
  return cells;
}

}  // namespace

Result<Table> UtilizationReport(std::span<const CapacitySpan> capacity, std::span<const UsageInterval> intervals,
                                const UtilizationReportOptions& options) {
  constexpr GroupKey kAllowed[] = {GroupKey::kFlavor, GroupKey::kPool, GroupKey::kCluster};
  ABACUS_RETURN_IF_ERROR(CheckGrouping(options.by, kAllowed, /*allow_bucket=*/false, "utilization"));
  const ReportWindow& w = options.window;
  std::map<std::vector<std::string>, Hours> groups;
  for (const CapacitySpan& span : capacity) {
    const Time a = std::max(span.from, w.from);
    const Time b = std::min(span.to.value_or(w.now), w.end());
    if (a >= b) continue;
    const ResourceTime t = static_cast<ResourceTime>(span.devices) * 1000 * (b - a).count();
    Hours& h = groups[Cells(span.flavor, span.node, options.by, options)];
    h.total += t;
    if (span.condition == NodeCondition::kDown) h.down += t;
    if (span.condition == NodeCondition::kDrained) h.drained += t;
  }
  for (const UsageInterval& iv : intervals) {
    if (iv.device_milli <= 0) continue;
    auto [a, b] = Clip(iv, w.from, w.to, w.now);
    if (a >= b) continue;
    groups[Cells(iv.flavor, iv.node, options.by, options)].allocated +=
        static_cast<ResourceTime>(iv.device_milli) * (b - a).count();
  }
  Table table;
  table.title = "device utilization " + FormatTime(w.from) + " .. " + FormatTime(w.to);
  table.columns.push_back({"flavor", false});
  for (GroupKey k : options.by.keys) {
    if (k != GroupKey::kFlavor) table.columns.push_back({std::string(GroupKeyName(k)), false});
  }
  for (const char* name : {"reportedDeviceHours", "allocatedDeviceHours", "idleDeviceHours", "downDeviceHours",
                           "drainedDeviceHours", "allocatedPercent", "idlePercent", "downPercent", "drainedPercent"}) {
    table.columns.push_back({name, true});
  }
  for (const auto& [key, h] : groups) {
    // Work on a node whose history is incomplete (older than the node events) can exceed what
    // the spans saw; idle never goes below zero.
    const ResourceTime idle = std::max<ResourceTime>(0, h.total - h.down - h.drained - h.allocated);
    std::vector<std::string> row = key;
    for (ResourceTime v : {h.total, h.allocated, idle, h.down, h.drained}) row.push_back(FormatMilliHours(v));
    for (ResourceTime v : {h.allocated, idle, h.down, h.drained}) {
      row.push_back(h.total == 0 ? "" : FormatPercent(static_cast<double>(v) / static_cast<double>(h.total)));
    }
    table.rows.push_back(std::move(row));
  }
  table.notes.push_back(
      "reported: every device that existed, over its node's life within the window; allocated: what work held "
      "(shares as fractions); down: on NotReady nodes; drained: on Cordoned, Draining or Drained nodes; idle: the rest");
  return table;
}

}  // namespace abacus::meter
