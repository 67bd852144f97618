// The inference shortage report.
#include <algorithm>
#include <map>

#include "meter/reports.h"
#include "meter/units.h"

namespace abacus::meter {
namespace {

struct Shortage {
  int64_t episodes = 0;
  int64_t micros = 0;
  ResourceTime missing = 0;  // milli-replicas × us
  int64_t longest = 0;
};

}  // namespace

Result<Table> ShortageReport(std::span<const ShortageInterval> shortages,
                             const ShortageReportOptions& options) {
  constexpr GroupKey kAllowed[] = {GroupKey::kTenant, GroupKey::kQueue, GroupKey::kFlavor,
                                   GroupKey::kWorkload};
  ABACUS_RETURN_IF_ERROR(CheckGrouping(options.by, kAllowed, /*allow_bucket=*/false, "shortage"));
  const ReportWindow& w = options.window;
  std::map<std::vector<std::string>, Shortage> groups;
  for (const ShortageInterval& s : shortages) {
    Time a = std::max(s.start, w.from);
    Time b = std::min(s.end.value_or(w.end()), w.end());
    if (a >= b) continue;
    Shortage& g = groups[GroupCells(s, options.by)];
    int64_t us = (b - a).count();
    ++g.episodes;
    g.micros += us;
    g.missing += static_cast<ResourceTime>(std::max(0, s.wanted - s.available)) * 1000 * us;
    g.longest = std::max(g.longest, us);
  }
  Table table;
  table.title = "inference shortages " + FormatTime(w.from) + " .. " + FormatTime(w.to);
  table.columns = GroupColumns(options.by);
  for (const char* name : {"episodes", "shortageHours", "missingReplicaHours", "longestSeconds"}) {
    table.columns.push_back({name, true});
  }
  for (const auto& [key, g] : groups) {
    std::vector<std::string> row = key;
    row.push_back(std::to_string(g.episodes));
    row.push_back(FormatMilliHours(static_cast<ResourceTime>(g.micros) * 1000));
    row.push_back(FormatMilliHours(g.missing));
    row.push_back(FormatSeconds(g.longest));
    table.rows.push_back(std::move(row));
  }
  return table;
}

}  // namespace abacus::meter
