// The idle and waste report.
#include <algorithm>
#include <map>

#include "meter/reports.h"
#include "meter/units.h"
#include "meter/utilization.h"

namespace abacus::meter {
namespace {

struct Idle {
  ResourceTime allocated = 0;  // milli-devices × us
  ResourceTime measured = 0;
  ResourceTime idle = 0;
  int64_t idle_cost = 0;
};

}  // namespace

Result<Table> IdleReport(std::span<const UsageInterval> intervals,
                         std::span<const UtilizationSample> samples, const IdleReportOptions& options) {
  constexpr GroupKey kAllowed[] = {GroupKey::kTenant,  GroupKey::kProject, GroupKey::kQueue,
                                   GroupKey::kFlavor,  GroupKey::kModel,   GroupKey::kCluster,
                                   GroupKey::kPool,    GroupKey::kKind,    GroupKey::kNode,
                                   GroupKey::kWorkload, GroupKey::kPriorityClass, GroupKey::kUser};
  ABACUS_RETURN_IF_ERROR(CheckGrouping(options.by, kAllowed, /*allow_bucket=*/false, "idle"));
  const ReportWindow& w = options.window;
  UtilizationIndex index(samples, options.max_sample_gap);
  Pricer pricer(options.prices);
  std::map<std::vector<std::string>, Idle> groups;
  for (const UsageInterval& iv : intervals) {
    if (iv.device_milli <= 0) continue;
    auto [a, b] = Clip(iv, w.from, w.to, w.now);
    if (a >= b) continue;
    Idle& g = groups[GroupCells(iv, options.by)];
    g.allocated += static_cast<ResourceTime>(iv.device_milli) * (b - a).count();
    IntervalUtilization u = Measure(index, iv, a, b, options.threshold, &pricer);
    g.measured += u.measured;
    g.idle += u.idle;
    g.idle_cost += u.idle_cost;
  }
  std::vector<std::pair<std::vector<std::string>, Idle>> sorted(groups.begin(), groups.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& x, const auto& y) { return x.second.idle > y.second.idle; });
  Table table;
  table.title = "idle devices " + FormatTime(w.from) + " .. " + FormatTime(w.to);
  table.columns = GroupColumns(options.by);
  for (const char* name : {"allocatedDeviceHours", "measuredDeviceHours", "idleDeviceHours", "idlePercent",
                           "idleCost"}) {
    table.columns.push_back({name, true});
  }
  for (const auto& [key, g] : sorted) {
    std::vector<std::string> row = key;
    row.push_back(FormatMilliHours(g.allocated));
    row.push_back(FormatMilliHours(g.measured));
    row.push_back(FormatMilliHours(g.idle));
    row.push_back(g.measured == 0 ? "" : FormatPercent(static_cast<double>(g.idle) / static_cast<double>(g.measured)));
    row.push_back(FormatMoney(g.idle_cost));
    table.rows.push_back(std::move(row));
  }
  table.notes.push_back("idle: measured utilization below " + FormatPercent(options.threshold) +
                        "%; a sample counts for at most " + FormatDuration(options.max_sample_gap));
  return table;
}

}  // namespace abacus::meter
