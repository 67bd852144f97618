#include "sim/fault_schedule.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <unordered_map>

#include "common/duration_parse.h"

namespace abacus::sim {
namespace {

constexpr const char* kForms =
    "'TIME NODE DEVICE fault [REASON...]', 'TIME NODE DEVICE recover' or 'TIME NODE uncordon'";

// Whitespace-separated fields up to a `#` that starts a field (the rest of the line is a comment).
std::vector<std::string> Fields(std::string_view line) {
  std::vector<std::string> out;
  std::istringstream in{std::string(line)};
  std::string f;
  while (in >> f) {
    if (f[0] == '#') break;
    out.push_back(f);
  }
  return out;
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "5400" (seconds) or a duration spec ("90m", "1d12h").
Result<int64_t> ParseTime(const std::string& text) {
  if (AllDigits(text)) {
    if (text.size() > 15) return InvalidArgument("too large");
    return static_cast<int64_t>(std::stoll(text));
  }
  auto d = ParseDurationSpec(text);
  if (!d.ok()) return d.status();
  return std::chrono::duration_cast<std::chrono::seconds>(*d).count();
}

void SortByTime(std::vector<FaultEvent>* events) {
  std::stable_sort(events->begin(), events->end(),
                   [](const FaultEvent& a, const FaultEvent& b) { return a.t_s < b.t_s; });
}

}  // namespace

Result<std::vector<FaultEvent>> ParseFaultSchedule(std::string_view text, const std::string& path,
                                                   const std::vector<sched::NodeInfo>& nodes) {
  std::unordered_map<std::string, int32_t> node_of;
  for (size_t i = 0; i < nodes.size(); ++i) node_of.emplace(nodes[i].name, static_cast<int32_t>(i));
  std::vector<FaultEvent> out;
  int line_no = 0;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    const std::vector<std::string> f = Fields(line);
    if (f.empty()) continue;
    const std::string where = path + ":" + std::to_string(line_no);
    auto error = [&](const std::string& message) { return InvalidArgument(where + ": " + message); };
    if (f.size() < 3) {
      return error("expected " + std::string(kForms) + ", got '" + std::string(line) + "'");
    }
    FaultEvent e;
    e.where = where;
    auto t = ParseTime(f[0]);
    if (!t.ok()) {
      return error("time: expected seconds from the trace's start or a duration such as 90m, 2h or 1d, got '" + f[0] +
                   "' (" + t.status().message() + ")");
    }
    e.t_s = *t;
    auto node = node_of.find(f[1]);
    if (node == node_of.end()) {
      return error("node: expected a node of the trace (" + std::to_string(nodes.size()) + " nodes" +
                   (nodes.empty() ? std::string() : ", e.g. " + nodes.front().name) + "), got '" + f[1] + "'");
    }
    e.node = node->second;
    if (f[2] == "uncordon") {
      if (f.size() != 3) return error("uncordon: expected nothing after 'TIME NODE uncordon', got '" + f[3] + "'");
      e.kind = FaultEvent::Kind::kUncordon;
      out.push_back(std::move(e));
      continue;
    }
    const std::vector<sched::DeviceInfo>& devices = nodes[e.node].devices;
    std::string indexes;
    for (const auto& d : devices) indexes += (indexes.empty() ? "" : ",") + std::to_string(d.index);
    const bool known = AllDigits(f[2]) && f[2].size() < 10 &&
                       std::any_of(devices.begin(), devices.end(),
                                   [&](const sched::DeviceInfo& d) { return d.index == std::stoi(f[2]); });
    if (!known) {
      return error("device: expected a device index of node " + f[1] + " (" +
                   (devices.empty() ? std::string("it has no devices") : indexes) + ") or 'uncordon', got '" + f[2] + "'");
    }
    e.device = std::stoi(f[2]);
    if (f.size() < 4) return error("event: expected fault or recover after the device, got nothing");
    if (f[3] == "fault") {
      e.kind = FaultEvent::Kind::kFault;
      for (size_t i = 4; i < f.size(); ++i) e.reason += (i > 4 ? " " : "") + f[i];
    } else if (f[3] == "recover") {
      if (f.size() != 4) return error("recover: expected nothing after 'TIME NODE DEVICE recover', got '" + f[4] + "'");
      e.kind = FaultEvent::Kind::kRecover;
    } else {
      return error("event: expected fault or recover, got '" + f[3] + "'");
    }
    out.push_back(std::move(e));
  }
  SortByTime(&out);
  return out;
}

Result<std::vector<FaultEvent>> LoadFaultSchedule(const std::string& path, const std::vector<sched::NodeInfo>& nodes) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return NotFound("cannot read fault schedule " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ParseFaultSchedule(ss.str(), path, nodes);
}

std::vector<FaultEvent> RandomFaults(const std::vector<sched::NodeInfo>& nodes, const FaultRateOptions& o) {
  std::vector<FaultEvent> out;
  if (o.per_device_day <= 0 || o.to_s <= o.from_s) return out;
  std::mt19937_64 g(o.seed ^ 0x9e3779b97f4a7c15ULL);
  // Exponential by inversion of the generator's raw bits (the same numbers on every library).
  const double mean_s = 86400.0 / o.per_device_day;
  auto healthy_for = [&]() {
    const double u = static_cast<double>(g() >> 11) * 0x1.0p-53;  // [0, 1)
    return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(-std::log1p(-u) * mean_s)));
  };
  const int64_t repair_s = std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::seconds>(o.repair).count());
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (const auto& d : nodes[n].devices) {
      for (int64_t t = o.from_s + healthy_for(); t < o.to_s; t += repair_s + healthy_for()) {
        out.push_back({t, static_cast<int32_t>(n), d.index, FaultEvent::Kind::kFault, "random fault", "fault-rate"});
        out.push_back({t + repair_s, static_cast<int32_t>(n), d.index, FaultEvent::Kind::kRecover, "", "fault-rate"});
      }
    }
  }
  SortByTime(&out);
  return out;
}

std::vector<FaultEvent> MergeFaults(std::vector<FaultEvent> a, std::vector<FaultEvent> b) {
  std::vector<FaultEvent> out;
  out.reserve(a.size() + b.size());
  std::merge(std::make_move_iterator(a.begin()), std::make_move_iterator(a.end()), std::make_move_iterator(b.begin()),
             std::make_move_iterator(b.end()), std::back_inserter(out),
             [](const FaultEvent& x, const FaultEvent& y) { return x.t_s < y.t_s; });
  return out;
}

}  // namespace abacus::sim
