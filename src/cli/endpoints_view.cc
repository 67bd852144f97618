#include "cli/endpoints_view.h"

#include <sstream>
#include <vector>

#include "cli/output.h"

namespace abacus::cli {

using nlohmann::json;

void PrintEndpoints(const json& answers, std::ostream& out, const std::string& indent) {
  std::vector<std::vector<std::string>> rows;
  for (const json& a : answers) {
    for (const json& e : a.value("items", json::array())) {
      std::string version = e.value("version", "stable");
      if (!e.value("release", "").empty()) version += " (" + e.value("release", "") + ")";
      rows.push_back({a.value("name", ""), std::to_string(e.value("replica", 0)), e.value("address", ""), version,
                      e.value("ready", false) ? "yes" : "no", e.value("state", ""), e.value("taskId", "")});
    }
  }
  if (rows.empty()) {
    out << indent << "no endpoints yet (replicas report their address once they run)\n";
    return;
  }
  std::ostringstream table;
  PrintTable(table, {"SERVICE", "REPLICA", "ADDRESS", "VERSION", "READY", "STATE", "TASK"}, rows);
  std::istringstream lines(table.str());
  for (std::string line; std::getline(lines, line);) out << indent << line << "\n";
}

}  // namespace abacus::cli
