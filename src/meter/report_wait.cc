// The queue wait report.
#include <algorithm>
#include <map>

#include "meter/reports.h"
#include "meter/units.h"

namespace abacus::meter {
namespace {

constexpr GroupKey kAllowed[] = {GroupKey::kTenant,        GroupKey::kProject, GroupKey::kQueue,
                                 GroupKey::kFlavor,        GroupKey::kKind,    GroupKey::kModel,
                                 GroupKey::kPriorityClass, GroupKey::kUser};

struct Waits {
  std::vector<int64_t> admitted;  // waits in us of workloads admitted in the window
  int64_t pending = 0;
  int64_t oldest_pending = 0;
};

// Nearest-rank percentile of sorted `v`: the ceil(p/100 · n)-th smallest.
int64_t Percentile(const std::vector<int64_t>& v, int p) {
  size_t rank = (static_cast<size_t>(p) * v.size() + 99) / 100;
  return v[std::max<size_t>(rank, 1) - 1];
}

}  // namespace

Result<Table> WaitReport(std::span<const WorkloadSummary> workloads, const WaitReportOptions& options) {
  ABACUS_RETURN_IF_ERROR(CheckGrouping(options.by, kAllowed, /*allow_bucket=*/false, "wait"));
  const ReportWindow& w = options.window;
  const Time end = w.end();
  std::map<std::vector<std::string>, Waits> groups;
  for (const WorkloadSummary& wl : workloads) {
    if (wl.admitted && *wl.admitted >= w.from && *wl.admitted < end) {
      groups[GroupCells(wl, options.by)].admitted.push_back((*wl.admitted - wl.submitted).count());
    } else if (wl.submitted < end && (!wl.admitted || *wl.admitted >= end) &&
               (!wl.finished || *wl.finished >= end)) {
      Waits& g = groups[GroupCells(wl, options.by)];
      ++g.pending;
      g.oldest_pending = std::max(g.oldest_pending, (end - wl.submitted).count());
    }
  }
  Table table;
  table.title = "queue wait " + FormatTime(w.from) + " .. " + FormatTime(w.to);
  table.columns = GroupColumns(options.by);
  for (const char* name : {"admitted", "p50Seconds", "p95Seconds", "p99Seconds", "maxSeconds", "pending",
                           "oldestPendingSeconds"}) {
    table.columns.push_back({name, true});
  }
  for (auto& [key, g] : groups) {
    std::vector<std::string> row = key;
    std::sort(g.admitted.begin(), g.admitted.end());
    row.push_back(std::to_string(g.admitted.size()));
    for (int p : {50, 95, 99}) {
      row.push_back(g.admitted.empty() ? "" : FormatSeconds(Percentile(g.admitted, p)));
    }
    row.push_back(g.admitted.empty() ? "" : FormatSeconds(g.admitted.back()));
    row.push_back(std::to_string(g.pending));
    row.push_back(g.pending ? FormatSeconds(g.oldest_pending) : "");
    table.rows.push_back(std::move(row));
  }
  table.notes.push_back("wait = first admission - submission; percentiles are nearest-rank over "
                        "workloads admitted in the window");
  return table;
}

}  // namespace abacus::meter
