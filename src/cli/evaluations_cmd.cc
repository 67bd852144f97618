// The tables of `abacus get evaluations`: archived results one per row, or one model's versions
// side by side (the server's control::CompareVersions table).
#include <cstdio>
#include <ostream>

#include "cli/client.h"
#include "cli/output.h"
#include "cli/verbs.h"
#include "common/clock.h"
#include "control/comparison.h"

namespace abacus::cli {

using nlohmann::json;

namespace {

std::string Text(const json& j, const char* key) {
  std::string v = j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
  return v.empty() ? "-" : v;
}

std::string DeviceHours(const json& item) {
  const json usage = item.value("usage", json::object());
  double seconds = usage.is_object() ? usage.value("deviceSeconds", 0.0) : 0.0;
  if (seconds > 0 && seconds < 3.6) return "<0.001";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", seconds / 3600.0);
  return buf;
}

std::string Finished(const json& item) {
  auto t = ParseTime(item.value("finishedAt", ""));
  return t.ok() ? HumanAgo(ToMicros(*t)) : "-";
}

void ResultTable(const json& items, std::ostream& out) {
  std::vector<std::vector<std::string>> rows;
  for (const json& e : items) {
    size_t metrics = e.contains("metrics") && e["metrics"].is_object() ? e["metrics"].size() : 0;
    rows.push_back({Text(e, "workloadId"), Text(e, "model"), Text(e, "version"), Text(e, "dataset"),
                    std::to_string(metrics), DeviceHours(e), Finished(e)});
  }
  PrintTable(out, {"WORKLOAD", "MODEL", "VERSION", "DATASET", "METRICS", "DEVICE-HOURS", "FINISHED"}, rows);
}

}  // namespace

int PrintEvaluations(const json& body, std::ostream& out, std::ostream& err) {
  if (!body.contains("comparison")) {
    const json items = body.value("items", json::array());
    if (items.empty()) {
      out << "No evaluations found.\n";
    } else {
      ResultTable(items, out);
    }
    return kExitOk;
  }
  auto table = control::ComparisonTableFromJson(body["comparison"]);
  if (!table.ok()) {
    err << "error: the server's comparison: " << table.status().message() << "\n";
    return kExitRefused;
  }
  if (table->rows.empty()) {
    out << "No evaluations of model " << table->model << " found.\n";
    return kExitOk;
  }
  out << "Model " << table->model << ", deltas against version " << table->baseline << "\n";
  std::vector<std::vector<std::string>> cells = control::ToCells(*table);
  std::vector<std::string> header = std::move(cells.front());
  cells.erase(cells.begin());
  PrintTable(out, header, cells);
  return kExitOk;
}

}  // namespace abacus::cli
