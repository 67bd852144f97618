#include "sim/events_rules.h"

#include <algorithm>
#include <set>
#include <utility>

#include "sched/placement_rules.h"

namespace abacus::sim {

ReplayRuleTally::ReplayRuleTally(const std::vector<sched::NodeInfo>& nodes)
    : nodes_(nodes), services_(nodes.size()), repelled_(nodes.size()), used_(nodes.size()) {}

void ReplayRuleTally::Hold(const Running& r, int32_t sign) {
  auto bump = [&](std::unordered_map<std::string, int32_t>& counts, const std::string& key) {
    if ((counts[key] += sign) == 0) counts.erase(key);
  };
  for (const auto& [n, avoids] : r.tasks) {
    bump(services_[n], r.service);
    for (const std::string& a : avoids) bump(repelled_[n], a);
  }
  for (const auto& [n, amounts] : r.held) {
    for (const sched::ExtendedAmount& e : amounts) {
      if ((used_[n][e.id] += sign * e.amount) == 0) used_[n].erase(e.id);
    }
  }
}

void ReplayRuleTally::Start(int32_t job, const sched::WorkloadInfo& w,
                            const std::vector<sched::TaskPlacement>& placements) {
  Stop(job);  // a start after a stop that was not reported: count from a clean slate
  Running r;
  r.service = w.name;
  bool rules = false;
  for (const auto& p : placements) {
    if (p.node < 0 || p.node >= static_cast<sched::NodeIndex>(nodes_.size()) || p.group < 0 ||
        p.group >= static_cast<int32_t>(w.groups.size())) {
      continue;
    }
    const sched::TaskGroupRequest& g = w.groups[p.group];
    rules = rules || !g.rules.empty();
    r.tasks.emplace_back(p.node, g.rules.anti_affinity);
    if (!g.task.extended.empty()) r.held.emplace_back(p.node, g.task.extended);
  }
  if (rules) {
    // maxPerNode, spread and anti-affinity among its own tasks: the scheduler's reference count
    // (sched::CountRuleViolations) over this workload alone, placed where the replay put it.
    sched::WorkloadInfo placed = w;
    placed.admitted = true;
    placed.placements = placements;
    const sched::RuleViolations own = sched::CountRuleViolations(nodes_, {placed});
    v_.max_per_node += own.max_per_node;
    v_.spread += own.spread;
    v_.anti_affinity += own.anti_affinity;
  }
  // Anti-affinity with the services already running: its rules naming them (forward) and
  // theirs naming it (reverse), once per node and service kept apart.
  std::set<std::pair<sched::NodeIndex, std::string>> apart;
  for (const auto& [n, avoids] : r.tasks) {
    for (const std::string& other : avoids) {
      if (other != r.service && services_[n].count(other) > 0) apart.emplace(n, other);
    }
    if (repelled_[n].count(r.service) > 0) apart.emplace(n, r.service);
  }
  v_.anti_affinity += static_cast<int64_t>(apart.size());
  Hold(r, +1);
  // Extended resources: every node this start added to, above what the node declares.
  std::set<std::pair<sched::NodeIndex, ExtendedId>> over;
  for (const auto& [n, amounts] : r.held) {
    for (const sched::ExtendedAmount& e : amounts) {
      int64_t capacity = 0;
      for (const sched::ExtendedAmount& c : nodes_[n].extended) {
        if (c.id == e.id) capacity = c.amount;
      }
      if (used_[n][e.id] > capacity) over.emplace(n, e.id);
    }
  }
  v_.extended += static_cast<int64_t>(over.size());
  running_.emplace(job, std::move(r));
}

void ReplayRuleTally::Stop(int32_t job) {
  auto it = running_.find(job);
  if (it == running_.end()) return;
  Hold(it->second, -1);
  running_.erase(it);
}

}  // namespace abacus::sim
