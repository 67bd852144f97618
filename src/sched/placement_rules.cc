#include "sched/placement_rules.h"

#include <algorithm>
#include <map>
#include <set>

#include "common/check.h"
#include "workload/workload.h"

namespace abacus::sched {
namespace {

constexpr std::string_view kNodeTopology = "node";

// Whether `node` may hold tasks of a group with `selector` (Ready, labels match).
bool Eligible(const NodeInfo& node, const std::map<std::string, std::string>& selector) {
  if (node.state != NodeState::kReady) return false;
  for (const auto& [k, v] : selector) {
    auto it = node.labels.find(k);
    if (it == node.labels.end() || it->second != v) return false;
  }
  return true;
}

std::string GroupName(const WorkloadInfo& w, int32_t g) {
  if (w.groups.size() <= 1) return w.name.empty() ? w.id : w.name;
  return (w.name.empty() ? w.id : w.name) + "/" + w.groups[g].name;
}

}  // namespace

PlacementRules RulesFromSpec(const PlacementSpec& spec, std::string count_key) {
  PlacementRules r;
  if (spec.empty()) return r;
  r.max_per_node = spec.max_per_node;
  for (const auto& c : spec.spread) r.spread.push_back({c.topology_key, c.max_skew});
  r.anti_affinity = spec.anti_affinity;
  r.count_key = std::move(count_key);
  return r;
}

std::string RuleCountKey(const WorkloadInfo& w, int32_t g) {
  const PlacementRules& r = w.groups[g].rules;
  return r.count_key.empty() ? w.id + "/" + w.groups[g].name : r.count_key;
}

std::string DescribeRuleBlock(const RuleBlock& b) {
  switch (b.kind) {
    case RuleKind::kNone: return "";
    case RuleKind::kMaxPerNode:
      return std::to_string(b.have) + " of " + b.subject + " already on " + b.where + ", maxPerNode " +
             std::to_string(b.limit);
    case RuleKind::kSpread:
      if (b.have < 0) return b.where + " has no such label, so it is outside the spread of " + b.subject;
      return std::to_string(b.have) + " of " + b.subject + " already in " + b.where + ", the least loaded has " +
             std::to_string(b.least) + ", maxSkew " + std::to_string(b.limit);
    case RuleKind::kAntiAffinity:
      if (b.reverse) {
        return b.where + " runs " + std::to_string(b.have) + " task(s) whose antiAffinity keeps " + b.subject + " away";
      }
      return b.where + " runs " + std::to_string(b.have) + " task(s) of " + b.subject + ", which antiAffinity keeps away";
  }
  return "";
}

int32_t RuleCounts::Counter(const std::string& name) {
  return counters_.emplace(name, static_cast<int32_t>(counters_.size())).first->second;
}

int32_t RuleCounts::Find(const std::string& name) const {
  auto it = counters_.find(name);
  return it == counters_.end() ? -1 : it->second;
}

int32_t RuleCounts::Topology(const std::vector<NodeInfo>& nodes, const std::string& key) {
  for (size_t i = 0; i < topology_keys_.size(); ++i) {
    if (topology_keys_[i] == key) return static_cast<int32_t>(i);
  }
  std::vector<int32_t> domain(nodes.size(), -1);
  std::vector<std::string> names;
  if (key == kNodeTopology) {
    for (size_t n = 0; n < nodes.size(); ++n) {
      domain[n] = static_cast<int32_t>(n);
      names.push_back(nodes[n].name);
    }
  } else {
    std::map<std::string, int32_t> ids;
    for (size_t n = 0; n < nodes.size(); ++n) {
      auto it = nodes[n].labels.find(key);
      if (it == nodes[n].labels.end()) continue;
      auto [id, fresh] = ids.emplace(it->second, static_cast<int32_t>(names.size()));
      if (fresh) names.push_back(it->second);
      domain[n] = id->second;
    }
  }
  topology_keys_.push_back(key);
  domain_of_.push_back(std::move(domain));
  domain_names_.push_back(std::move(names));
  return static_cast<int32_t>(topology_keys_.size() - 1);
}

void RuleCounts::Build(const std::vector<NodeInfo>& nodes, const std::vector<WorkloadInfo>& workloads) {
  *this = RuleCounts();
  for (const auto& w : workloads) {
    for (int32_t g = 0; g < static_cast<int32_t>(w.groups.size()); ++g) {
      const PlacementRules& r = w.groups[g].rules;
      if (r.empty()) continue;
      active_ = true;
      if (r.max_per_node > 0 || !r.spread.empty()) {
        int32_t key = Counter("k:" + RuleCountKey(w, g));
        for (const SpreadRule& s : r.spread) {
          int32_t topo = Topology(nodes, s.topology_key);
          auto [it, fresh] = table_of_.emplace(Slot(key, topo), static_cast<int32_t>(tables_.size()));
          if (!fresh) continue;
          SpreadTable t;
          t.topology = topo;
          const size_t domains = domain_names_[topo].size();
          t.count.assign(domains, 0);
          t.eligible.assign(domains, 0);
          for (size_t n = 0; n < nodes.size(); ++n) {
            int32_t d = domain_of_[topo][n];
            if (d >= 0 && Eligible(nodes[n], w.groups[g].task.node_selector)) t.eligible[d] = 1;
          }
          t.hist.assign(1, static_cast<int32_t>(std::count(t.eligible.begin(), t.eligible.end(), 1)));
          tables_.push_back(std::move(t));
        }
      }
      for (const std::string& other : r.anti_affinity) {
        Counter("s:" + other);
        Counter("r:" + other);
      }
    }
  }
}

void RuleCounts::AddSpread(SpreadTable& t, NodeIndex n, int32_t delta) {
  int32_t d = domain_of_[t.topology][n];
  if (d < 0) return;
  int32_t before = t.count[d];
  int32_t after = before + delta;
  ABACUS_CHECK(after >= 0, "placement rule counts released more tasks than they held");
  t.count[d] = after;
  if (!t.eligible[d]) return;
  if (static_cast<size_t>(after) >= t.hist.size()) t.hist.resize(after + 1, 0);
  --t.hist[before];
  ++t.hist[after];
  if (after < t.least) {
    t.least = after;
  } else if (before == t.least && t.hist[before] == 0) {
    t.least = after;  // +1: the next count up holds this domain now
  }
}

void RuleCounts::Add(const WorkloadInfo& w, const TaskPlacement& p, int32_t delta) {
  if (!active_) return;
  const PlacementRules& r = w.groups[p.group].rules;
  auto bump = [&](int32_t counter) {
    int32_t& c = node_count_[Slot(counter, p.node)];
    c += delta;
    ABACUS_CHECK(c >= 0, "placement rule counts released more tasks than they held");
  };
  if (r.max_per_node > 0 || !r.spread.empty()) {
    int32_t key = Find("k:" + RuleCountKey(w, p.group));
    if (key >= 0) {
      bump(key);
      for (const SpreadRule& s : r.spread) {
        for (size_t topo = 0; topo < topology_keys_.size(); ++topo) {
          if (topology_keys_[topo] != s.topology_key) continue;
          auto it = table_of_.find(Slot(key, static_cast<int32_t>(topo)));
          if (it != table_of_.end()) AddSpread(tables_[it->second], p.node, delta);
        }
      }
    }
  }
  if (int32_t svc = Find("s:" + w.name); svc >= 0) bump(svc);
  for (const std::string& other : r.anti_affinity) {
    if (int32_t rep = Find("r:" + other); rep >= 0) bump(rep);
  }
}

RuleProbe RuleCounts::Resolve(const WorkloadInfo& w, int32_t group) const {
  RuleProbe probe;
  if (!active_) return probe;
  const PlacementRules& r = w.groups[group].rules;
  if (r.max_per_node > 0 || !r.spread.empty()) {
    probe.key = Find("k:" + RuleCountKey(w, group));
    probe.max_per_node = r.max_per_node;
    for (const SpreadRule& s : r.spread) {
      for (size_t topo = 0; topo < topology_keys_.size(); ++topo) {
        if (topology_keys_[topo] != s.topology_key) continue;
        auto it = table_of_.find(Slot(probe.key, static_cast<int32_t>(topo)));
        if (it != table_of_.end()) probe.spread.push_back({it->second, s.max_skew});
      }
    }
  }
  for (const std::string& other : r.anti_affinity) {
    if (int32_t svc = Find("s:" + other); svc >= 0) probe.avoid.push_back(svc);
  }
  probe.repelled = Find("r:" + w.name);
  return probe;
}

RuleBlock RuleCounts::Check(const RuleProbe& probe, NodeIndex n) const {
  RuleBlock b;
  if (probe.key >= 0 && probe.max_per_node > 0) {
    if (int32_t c = Count(probe.key, n); c >= probe.max_per_node) {
      b.kind = RuleKind::kMaxPerNode;
      b.have = c;
      b.limit = probe.max_per_node;
      return b;
    }
  }
  for (int32_t svc : probe.avoid) {
    if (int32_t c = Count(svc, n); c > 0) {
      b.kind = RuleKind::kAntiAffinity;
      b.have = c;
      b.ref = svc;
      return b;
    }
  }
  if (probe.repelled >= 0) {
    if (int32_t c = Count(probe.repelled, n); c > 0) {
      b.kind = RuleKind::kAntiAffinity;
      b.have = c;
      b.reverse = true;
      return b;
    }
  }
  for (const auto& [table, skew] : probe.spread) {
    const SpreadTable& t = tables_[table];
    int32_t d = domain_of_[t.topology][n];
    if (d < 0) {
      b.kind = RuleKind::kSpread;
      b.have = -1;
      b.ref = table;
      return b;
    }
    if (t.count[d] + 1 - t.least > skew) {
      b.kind = RuleKind::kSpread;
      b.have = t.count[d];
      b.least = t.least;
      b.limit = skew;
      b.ref = table;
      return b;
    }
  }
  return b;
}

void RuleCounts::Name(const std::vector<NodeInfo>& nodes, const WorkloadInfo& w, int32_t group, NodeIndex n,
                      RuleBlock* b) const {
  const std::string& node = nodes[n].name;
  b->where = node;
  b->subject = GroupName(w, group);
  if (b->kind == RuleKind::kAntiAffinity && !b->reverse) {
    for (const auto& [name, id] : counters_) {
      if (id == b->ref && name.starts_with("s:")) b->subject = name.substr(2);
    }
  } else if (b->kind == RuleKind::kSpread && b->ref >= 0) {
    const SpreadTable& t = tables_[b->ref];
    const std::string& key = topology_keys_[t.topology];
    int32_t d = domain_of_[t.topology][n];
    if (d < 0) {
      b->where = node + " (label " + key + ")";
    } else if (key == kNodeTopology) {
      b->where = "node " + node;
    } else {
      b->where = key + "=" + domain_names_[t.topology][d];
    }
  }
}

RuleViolations CountRuleViolations(const std::vector<NodeInfo>& nodes, const std::vector<WorkloadInfo>& workloads) {
  RuleViolations v;
  auto example = [&](std::string text) {
    if (v.examples.size() < 5) v.examples.push_back(std::move(text));
  };
  // Tasks per (count key, node) and per (service, node) over admitted workloads.
  std::map<std::pair<std::string, NodeIndex>, int32_t> per_node;
  std::map<std::string, std::map<NodeIndex, int32_t>> service_nodes;
  std::map<std::string, std::pair<const WorkloadInfo*, int32_t>> key_group;
  for (const auto& w : workloads) {
    if (!w.admitted) continue;
    for (const auto& p : w.placements) {
      if (p.node < 0 || p.group < 0 || p.group >= static_cast<int32_t>(w.groups.size())) continue;
      ++service_nodes[w.name][p.node];
      const PlacementRules& r = w.groups[p.group].rules;
      if (r.max_per_node > 0 || !r.spread.empty()) {
        std::string key = RuleCountKey(w, p.group);
        ++per_node[{key, p.node}];
        key_group.emplace(key, std::make_pair(&w, p.group));
      }
    }
  }
  for (const auto& [slot, count] : per_node) {
    const auto& [w, g] = key_group[slot.first];
    int32_t max = w->groups[g].rules.max_per_node;
    if (max > 0 && count > max) {
      ++v.max_per_node;
      example(std::to_string(count) + " of " + GroupName(*w, g) + " on " + nodes[slot.second].name + ", maxPerNode " +
              std::to_string(max));
    }
  }
  // Anti-affinity: each (node, group, other service) where both run, once.
  std::set<std::tuple<NodeIndex, std::string, std::string>> seen;
  for (const auto& w : workloads) {
    if (!w.admitted) continue;
    for (const auto& p : w.placements) {
      if (p.node < 0 || p.group < 0 || p.group >= static_cast<int32_t>(w.groups.size())) continue;
      for (const std::string& other : w.groups[p.group].rules.anti_affinity) {
        auto it = service_nodes.find(other);
        if (it == service_nodes.end()) continue;
        auto on = it->second.find(p.node);
        if (on == it->second.end()) continue;
        int32_t others = on->second - (other == w.name ? 1 : 0);  // itself does not count
        if (others <= 0) continue;
        if (!seen.emplace(p.node, RuleCountKey(w, p.group), other).second) continue;
        ++v.anti_affinity;
        example(GroupName(w, p.group) + " shares " + nodes[p.node].name + " with " + other + " (antiAffinity)");
      }
    }
  }
  // Spread: per group and topology key, the most and least loaded eligible domains.
  for (const auto& [key, wg] : key_group) {
    const auto& [w, g] = wg;
    for (const SpreadRule& s : w->groups[g].rules.spread) {
      std::map<std::string, int32_t> domains;
      for (const auto& node : nodes) {
        if (!Eligible(node, w->groups[g].task.node_selector)) continue;
        if (s.topology_key == kNodeTopology) {
          domains.emplace(node.name, 0);
        } else if (auto it = node.labels.find(s.topology_key); it != node.labels.end()) {
          domains.emplace(it->second, 0);
        }
      }
      for (NodeIndex n = 0; n < static_cast<NodeIndex>(nodes.size()); ++n) {
        auto it = per_node.find({key, n});
        if (it == per_node.end()) continue;
        std::string d = s.topology_key == kNodeTopology ? nodes[n].name : "";
        if (s.topology_key != kNodeTopology) {
          auto l = nodes[n].labels.find(s.topology_key);
          if (l == nodes[n].labels.end()) continue;
          d = l->second;
        }
        auto dom = domains.find(d);
        if (dom != domains.end()) dom->second += it->second;
      }
      if (domains.empty()) continue;
      auto [lo, hi] = std::minmax_element(domains.begin(), domains.end(),
                                          [](const auto& a, const auto& b) { return a.second < b.second; });
      if (hi->second - lo->second > s.max_skew) {
        ++v.spread;
        example(GroupName(*w, g) + " over " + s.topology_key + ": " + std::to_string(hi->second) + " in " + hi->first +
                ", " + std::to_string(lo->second) + " in " + lo->first + ", maxSkew " + std::to_string(s.max_skew));
      }
    }
  }
  return v;
}

}  // namespace abacus::sched
