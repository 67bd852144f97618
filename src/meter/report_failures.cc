// The failures report.
#include <map>

#include "meter/reports.h"
#include "meter/units.h"

namespace abacus::meter {
namespace {

constexpr GroupKey kAllowed[] = {GroupKey::kTenant, GroupKey::kProject,       GroupKey::kQueue,
                                 GroupKey::kFlavor, GroupKey::kKind,          GroupKey::kModel,
                                 GroupKey::kReason, GroupKey::kPriorityClass, GroupKey::kUser};

bool Finished(const WorkloadSummary& w, const ReportWindow& win) {
  return w.finished && *w.finished >= win.from && *w.finished < win.end();
}

}  // namespace

Result<Table> FailureReport(std::span<const WorkloadSummary> workloads,
                            const FailureReportOptions& options) {
  ABACUS_RETURN_IF_ERROR(CheckGrouping(options.by, kAllowed, /*allow_bucket=*/true, "failures"));
  Grouping by = options.by;
  std::erase(by.keys, GroupKey::kReason);
  const ReportWindow& w = options.window;
  // group key (period + keys) → finished count; (group key, reason) → failures.
  std::map<std::vector<std::string>, int64_t> finished;
  std::map<std::pair<std::string, std::vector<std::string>>, int64_t> failures;
  for (const WorkloadSummary& wl : workloads) {
    if (!Finished(wl, w)) continue;
    std::vector<std::string> key = GroupCells(wl, by);
    if (by.bucket != TimeBucket::kNone) {
      key.insert(key.begin(), BucketLabel(BucketStart(*wl.finished, by.bucket), by.bucket));
    }
    ++finished[key];
    if (wl.state == "Failed") {
      ++failures[{wl.failure_reason.empty() ? "Unknown" : wl.failure_reason, key}];
    }
  }
  Table table;
  table.title = "failures " + FormatTime(w.from) + " .. " + FormatTime(w.to);
  table.columns.push_back({"reason", false});
  for (auto& c : GroupColumns(by)) table.columns.push_back(std::move(c));
  table.columns.push_back({"failures", true});
  table.columns.push_back({"percentOfFinished", true});
  int64_t total = 0;
  for (const auto& [k, n] : failures) {
    std::vector<std::string> row{k.first};
    row.insert(row.end(), k.second.begin(), k.second.end());
    row.push_back(std::to_string(n));
    row.push_back(FormatPercent(static_cast<double>(n) / static_cast<double>(finished[k.second])));
    table.rows.push_back(std::move(row));
    total += n;
  }
  int64_t all_finished = 0;
  for (const auto& [k, n] : finished) all_finished += n;
  table.notes.push_back(std::to_string(total) + " of " + std::to_string(all_finished) +
                        " workloads finished in the window failed");
  return table;
}

}  // namespace abacus::meter
