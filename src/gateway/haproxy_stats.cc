#include "gateway/haproxy_stats.h"

#include <sstream>


namespace abacus::gateway {

using nlohmann::json;

namespace {

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) out.push_back(cell);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

std::optional<int64_t> Number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  try {
    return std::stoll(s);
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace

Result<std::vector<ServerStats>> ParseShowStat(const std::string& csv) {
  std::istringstream in(csv);
  std::string line;
  std::map<std::string, size_t> column;
  std::vector<ServerStats> out;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line.rfind("# ", 0) == 0) {
      const auto names = SplitCsv(line.substr(2));
      for (size_t i = 0; i < names.size(); ++i) column[names[i]] = i;
      for (const char* need : {"pxname", "svname", "req_tot"}) {
        if (column.count(need) == 0) return InvalidArgument(std::string("show stat: no column ") + need);
      }
      continue;
    }
    if (column.empty()) return InvalidArgument("show stat: no header line");
    const auto cells = SplitCsv(line);
    auto cell = [&](const char* name) -> std::string {
      auto it = column.find(name);
      return it != column.end() && it->second < cells.size() ? cells[it->second] : "";
    };
    const std::string server = cell("svname");
    if (server == "FRONTEND" || server == "BACKEND") continue;
    ServerStats s;
    s.backend = cell("pxname");
    s.server = server;
    s.requests = Number(cell("req_tot")).value_or(0);
    s.ttime_ms = Number(cell("ttime"));
    out.push_back(std::move(s));
  }
  return out;
}

json MetricSamples(const std::string& backend, const std::vector<ServerStats>& now_rows,
                   std::chrono::steady_clock::time_point now, const std::map<std::string, int32_t>& replicas,
                   const std::string& metric, StatsRead& before,
                   const std::map<std::string, LatencyCounts>& latencies) {
  json samples = json::array();
  const double seconds = std::chrono::duration<double>(now - before.at).count();
  StatsRead next;
  next.at = now;
  for (const ServerStats& s : now_rows) {
    if (s.backend != backend) continue;
    next.requests[s.server] = s.requests;
    auto replica = replicas.find(s.server);
    auto seen = before.requests.find(s.server);
    if (replica == replicas.end() || seen == before.requests.end()) continue;
    double value = 0;
    if (metric == kGatewayRequestsPerSecond) {
      if (seconds <= 0) continue;
      value = std::max<int64_t>(0, s.requests - seen->second) / seconds;
    } else if (metric == kGatewayP99LatencyMs) {
      auto l = latencies.find(s.server);
      value = l == latencies.end() ? 0 : Percentile(l->second, 0.99);
    } else {
      continue;
    }
    samples.push_back({{"metric", metric}, {"value", value}, {"replica", replica->second}});
  }
  before = std::move(next);
  return samples;
}

}  // namespace abacus::gateway
