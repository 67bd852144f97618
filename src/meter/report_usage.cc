// The usage and cost report.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

#include "meter/reports.h"
#include "meter/units.h"
#include "model/extended_resource.h"

namespace abacus::meter {
namespace {

struct Sums {
  ResourceTime device = 0;  // milli-devices × us
  ResourceTime cpu = 0;     // millicores × us
  ResourceTime memory = 0;  // bytes × us
  Cost cost;
  std::unordered_set<std::string_view> workloads;
  std::map<std::string, ResourceTime> extended;  // units (bytes for storage) × us, by name
};

// Storage resources are metered in GiB-hours, counted ones in unit-hours.
bool IsStorage(const std::string& name) {
  auto r = ExtendedResource::Parse(name);
  return r.ok() && r->is_bytes();
}

std::string ExtendedColumn(const std::string& name) { return name + (IsStorage(name) ? " GiB-hours" : " hours"); }

// `exact`: with 9 decimals (Table::exact), else 3.
std::string ExtendedCell(const Sums& s, const std::string& name, bool exact = false) {
  auto it = s.extended.find(name);
  ResourceTime v = it == s.extended.end() ? 0 : it->second;
  if (exact) return IsStorage(name) ? FormatGiBHoursExact(v) : FormatMilliHoursExact(v * 1000);
  return IsStorage(name) ? FormatGiBHours(v) : FormatMilliHours(v * 1000);
}

void Add(Sums& s, const UsageInterval& iv, Time a, Time b, Pricer& pricer) {
  int64_t us = (b - a).count();
  s.device += static_cast<ResourceTime>(iv.device_milli) * us;
  s.cpu += static_cast<ResourceTime>(iv.cpu_milli) * us;
  s.memory += static_cast<ResourceTime>(iv.memory_bytes) * us;
  for (const auto& [name, amount] : iv.extended) s.extended[name] += static_cast<ResourceTime>(amount) * us;
  s.cost += pricer.Price(iv, a, b);
  s.workloads.insert(iv.workload_id);
}

// One usage column of a group: its name, the cell as the table prints it, and its exact value
// for JSON ("" where the printed cell is exact already: counts, money in micro-units). The one
// list of these columns: their names, cells and exact values cannot drift apart.
struct UsageCell {
  const char* column;
  std::string printed, exact;
};
std::vector<UsageCell> Cells(const Sums& s) {
  return {{"workloads", std::to_string(s.workloads.size()), ""},
          {"deviceHours", FormatMilliHours(s.device), FormatMilliHoursExact(s.device)},
          {"cpuCoreHours", FormatMilliHours(s.cpu), FormatMilliHoursExact(s.cpu)},
          {"memoryGiBHours", FormatGiBHours(s.memory), FormatGiBHoursExact(s.memory)},
          {"deviceCost", FormatMoney(s.cost.device), ""},
          {"cpuCost", FormatMoney(s.cost.cpu), ""},
          {"memoryCost", FormatMoney(s.cost.memory), ""},
          {"cost", FormatMoney(s.cost.total()), ""}};
}

}  // namespace

Result<Table> UsageReport(std::span<const UsageInterval> intervals, const UsageReportOptions& options) {
  const ReportWindow& w = options.window;
  Pricer pricer(options.prices);
  std::map<std::vector<std::string>, Sums> groups;
  Sums total;
  std::set<std::string> unpriced;
  std::set<std::string> extended;  // extended resources held in the window: a column each
  for (const UsageInterval& iv : intervals) {
    auto [a, b] = Clip(iv, w.from, w.to, w.now);
    if (a >= b) continue;
    for (const auto& [name, amount] : iv.extended) extended.insert(name);
    if (options.prices && iv.device_milli > 0 && !pricer.HasDevicePrice(iv.flavor)) unpriced.insert(iv.flavor);
    std::vector<std::string> key = GroupCells(iv, options.by);
    total.workloads.insert(iv.workload_id);
    // Split at bucket boundaries (none without a bucket: one piece).
    for (Time t = a; t < b;) {
      Time start = BucketStart(t, options.by.bucket);
      Time piece_end = std::min(NextBucket(start, options.by.bucket), b);
      std::vector<std::string> k = key;
      if (options.by.bucket != TimeBucket::kNone) k.insert(k.begin(), BucketLabel(start, options.by.bucket));
      Add(groups[std::move(k)], iv, t, piece_end, pricer);
      t = piece_end;
    }
  }

  Table table;
  table.title = "usage and cost " + FormatTime(w.from) + " .. " + FormatTime(w.to);
  table.columns = GroupColumns(options.by);
  for (const UsageCell& c : Cells(Sums{})) table.columns.push_back({c.column, true});
  for (const std::string& name : extended) table.columns.push_back({ExtendedColumn(name), true});
  for (auto& [key, sums] : groups) {
    // The total is the sum of the rows, so that a CSV adds up to it exactly.
    total.device += sums.device;
    total.cpu += sums.cpu;
    total.memory += sums.memory;
    total.cost += sums.cost;
    for (const auto& [name, v] : sums.extended) total.extended[name] += v;
    std::vector<std::string> row = key;
    std::vector<std::string> exact(key.size());
    for (UsageCell& c : Cells(sums)) {
      row.push_back(std::move(c.printed));
      exact.push_back(std::move(c.exact));
    }
    for (const std::string& name : extended) {
      row.push_back(ExtendedCell(sums, name));
      exact.push_back(ExtendedCell(sums, name, /*exact=*/true));
    }
    table.rows.push_back(std::move(row));
    table.exact.push_back(std::move(exact));
  }
  const std::vector<UsageCell> t = Cells(total);
  table.notes.push_back("total: " + t[0].printed + " workloads, " + t[1].printed + " device-hours, " + t[2].printed +
                        " core-hours, " + t[3].printed + " GiB-hours, cost " + t[7].printed + " " + pricer.currency());
  for (const std::string& name : extended) {
    table.notes.push_back("total " + ExtendedColumn(name) + ": " + ExtendedCell(total, name));
  }
  if (!options.prices) table.notes.push_back("no price list: costs are 0");
  for (const auto& f : unpriced) table.notes.push_back("no price for " + f + ": its devices cost 0");
  return table;
}

}  // namespace abacus::meter
