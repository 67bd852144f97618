#include "sim/scenario_render.h"

#include <algorithm>
#include <set>

#include "sched/explain.h"
#include "sim/scenario_text.h"

namespace abacus::sim {

namespace scenario_text {

std::string DescribePlacements(const sched::Snapshot& s, const std::vector<sched::TaskPlacement>& placements) {
  std::vector<std::string> parts;
  for (const auto& p : placements) {
    if (p.node < 0 || p.node >= static_cast<int32_t>(s.nodes.size())) {
      parts.push_back("?");
      continue;
    }
    const sched::NodeInfo& n = s.nodes[p.node];
    std::string part = n.name;
    for (size_t i = 0; i < p.devices.size(); ++i) {
      const auto& g = p.devices[i];
      part += i == 0 ? ":" : ",";
      part += g.device >= 0 && g.device < static_cast<int32_t>(n.devices.size()) ? std::to_string(n.devices[g.device].index) : "?";
      if (g.milli != 1000) part += "@" + std::to_string(g.milli) + "m";
    }
    parts.push_back(part);
  }
  return Join(parts, ";");
}

std::string FlavorNames(const std::vector<FlavorId>& flavors) {
  std::vector<std::string> names;
  for (FlavorId f : flavors) names.push_back(Flavor::FromId(f).name());
  return Join(names, ",");
}

// "node:dev,dev" per task, devices sorted, tasks sorted (comparison ignores task order).
std::vector<std::string> CanonicalPlaces(const std::vector<ScenarioTaskPlace>& places) {
  std::vector<std::string> out;
  for (auto p : places) {
    std::sort(p.devices.begin(), p.devices.end());
    std::string s = p.node;
    for (size_t i = 0; i < p.devices.size(); ++i) s += (i ? "," : ":") + std::to_string(p.devices[i]);
    out.push_back(s);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<ScenarioTaskPlace> ActualPlaces(const sched::Snapshot& s, const std::vector<sched::TaskPlacement>& placements) {
  std::vector<ScenarioTaskPlace> out;
  for (const auto& p : placements) {
    ScenarioTaskPlace tp;
    tp.node = p.node >= 0 && p.node < static_cast<int32_t>(s.nodes.size()) ? s.nodes[p.node].name : "?";
    for (const auto& g : p.devices) {
      const auto& devs = s.nodes[p.node].devices;
      tp.devices.push_back(g.device >= 0 && g.device < static_cast<int32_t>(devs.size()) ? devs[g.device].index : -1);
    }
    out.push_back(std::move(tp));
  }
  return out;
}

std::vector<std::string> NodeSet(const sched::Snapshot& s, const std::vector<sched::TaskPlacement>& placements) {
  std::set<std::string> names;
  for (const auto& p : placements) {
    if (p.node >= 0 && p.node < static_cast<int32_t>(s.nodes.size())) names.insert(s.nodes[p.node].name);
  }
  return {names.begin(), names.end()};
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

std::string Indent(const std::string& text, const std::string& pad) {
  std::string out;
  bool at_start = true;
  for (char c : text) {
    if (at_start && c != '\n') out += pad;
    out += c;
    at_start = c == '\n';
  }
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out;
}

}  // namespace scenario_text

using namespace scenario_text;

std::string DescribeCycle(const sched::Snapshot& s, const sched::CycleResult& r) {
  std::string out;
  out += "admitted (" + std::to_string(r.admissions.size()) + "):\n";
  for (const auto& a : r.admissions) {
    out += "  " + a.workload_id + " on " + DescribePlacements(s, a.placements);
    if (!a.group_flavors.empty()) out += " flavor " + FlavorNames(a.group_flavors);
    if (a.borrowing) out += " borrowing";
    out += " priority " + std::to_string(a.effective_priority) + "\n";
  }
  out += "preempted (" + std::to_string(r.preemptions.size()) + "):\n";
  for (const auto& p : r.preemptions) {
    out += "  " + p.victim_id + " by " + p.preemptor_id + " " + std::string(sched::PreemptionReasonName(p.reason)) +
           " grace " + std::to_string(p.grace_seconds) + "s\n";
  }
  out += "reserved (" + std::to_string(r.reservations.size()) + "):\n";
  for (const auto& res : r.reservations) {
    std::vector<std::string> names;
    for (auto n : res.nodes) names.push_back(n >= 0 && n < static_cast<int32_t>(s.nodes.size()) ? s.nodes[n].name : "?");
    out += "  " + res.workload_id + " on " + Join(names, ",") + "\n";
  }
  out += "pending (" + std::to_string(r.pending.size()) + "):\n";
  for (const auto& p : r.pending) {
    out += "  " + p.workload_id + " — " + Indent(sched::DescribePending(p), "    ").substr(4);
  }
  return out;
}

}  // namespace abacus::sim
