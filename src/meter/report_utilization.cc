// The utilization report: capacity over device lifetimes against what was allocated.
#include <algorithm>
#include <map>

#include "meter/reports.h"
#include "meter/units.h"

namespace abacus::meter {
namespace {

struct Hours {
  ResourceTime total = 0, allocated = 0, down = 0, drained = 0;  // milli-devices × us
  ResourceTime reserved_idle = 0;  // reserved for an owner, not used by it
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
  // Reserved-idle: each reservation window's devices less what the owner's work held there then.
  for (const ReservedSpan& r : options.reserved) {
    const Time a = std::max(r.from, w.from);
    const Time b = std::min(r.to, w.end());
    if (a >= b || r.devices <= 0) continue;
    ResourceTime reserved = static_cast<ResourceTime>(r.devices) * 1000 * (b - a).count();
    ResourceTime used = 0;
    for (const UsageInterval& iv : intervals) {
      if (iv.device_milli <= 0 || iv.node != r.node || iv.flavor != r.flavor) continue;
      const bool owner = (!r.tenant.empty() && iv.tenant == r.tenant) || (!r.queue.empty() && iv.queue == r.queue) ||
                         (!r.user.empty() && iv.user == r.user);
      if (!owner) continue;
      auto [ia, ib] = Clip(iv, a, b, w.now);
      if (ia < ib) used += static_cast<ResourceTime>(iv.device_milli) * (ib - ia).count();
    }
    groups[Cells(r.flavor, r.node, options.by, options)].reserved_idle += std::max<ResourceTime>(0, reserved - used);
  }
  Table table;
  table.title = "device utilization " + FormatTime(w.from) + " .. " + FormatTime(w.to);
  table.columns.push_back({"flavor", false});
  for (GroupKey k : options.by.keys) {
    if (k != GroupKey::kFlavor) table.columns.push_back({std::string(GroupKeyName(k)), false});
  }
  for (const char* name : {"reportedDeviceHours", "allocatedDeviceHours", "idleDeviceHours", "downDeviceHours",
                           "drainedDeviceHours", "reservedIdleDeviceHours", "allocatedPercent", "idlePercent",
                           "downPercent", "drainedPercent", "reservedIdlePercent"}) {
    table.columns.push_back({name, true});
  }
  for (const auto& [key, h] : groups) {
    // Work on a node whose history is incomplete (older than the node events) can exceed what
    // the spans saw; idle never goes below zero.
    // Reserved-idle is counted apart from idle (never more than what was otherwise idle).
    const ResourceTime unused = std::max<ResourceTime>(0, h.total - h.down - h.drained - h.allocated);
    const ResourceTime reserved_idle = std::min(unused, h.reserved_idle);
    const ResourceTime idle = unused - reserved_idle;
    std::vector<std::string> row = key;
    for (ResourceTime v : {h.total, h.allocated, idle, h.down, h.drained, reserved_idle}) row.push_back(FormatMilliHours(v));
    for (ResourceTime v : {h.allocated, idle, h.down, h.drained, reserved_idle}) {
      row.push_back(h.total == 0 ? "" : FormatPercent(static_cast<double>(v) / static_cast<double>(h.total)));
    }
    table.rows.push_back(std::move(row));
  }
  table.notes.push_back(
      "reported: every device that existed, over its node's life within the window; allocated: what work held "
      "(shares as fractions); down: on NotReady nodes; drained: on Cordoned, Draining or Drained nodes; reservedIdle: held by a reservation for its owner in its window "
      "and not used by the owner; idle: the rest");
  return table;
}

}  // namespace abacus::meter
