#include "sim/scenario.h"
#include "sim/scenario_tenancy.h"
#include "sim/scenario_text.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include "common/diagnostic.h"
#include "common/duration_parse.h"
#include "model/extended_resource.h"
#include "model/quantity.h"
#include "model/version.h"
#include "sched/claims.h"
#include "sched/cluster_state.h"
#include "sched/invariants.h"

namespace abacus::sim {

using sched::PendingCode;
using sched::PreemptionReason;
using sched::WorkloadInfo;
using namespace scenario_text;

Time ScenarioEpoch() { return FromMicros(1'767'225'600'000'000); }  // 2026-01-01T00:00:00Z

namespace {

// `s` without the spaces, tabs and carriage returns around it.
std::string_view Trimmed(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// ------------------------------------------------------------------ parser

class Parser {
 public:
  explicit Parser(std::string file) : file_(std::move(file)) {
    sc_.file = file_;
    now_ = ScenarioEpoch();
    config_ = sc_.config;
  }

  void Line(int line, std::string_view raw);
  // A `tenancy` block's YAML, its first line `line` of the file (sim/scenario_tenancy.h).
  void Tenancy(int line, std::string_view yaml) {
    AddTenancyBlock(yaml, file_, line, &sc_.cluster, &queues_, &cohorts_, &diags_);
  }
  void Error(int line, const std::string& message) { diags_.Add(file_, line, "", message); }
  Result<Scenario> Finish();

 private:
  using Fields = std::vector<std::pair<std::string, std::string>>;  // key, value ("" for flags)

  // Reports a failed field parse; returns true when `s` is OK.
  bool Check(int line, const std::string& field, const Status& s) {
    if (s.ok()) return true;
    diags_.Add(file_, line, field, s.message());
    return false;
  }
  Result<ResourceKey> Resource(std::string_view text);
  Result<int64_t> ResourceAmount(ResourceKey r, std::string_view text);
  void Mention(FlavorId f) {
    if (std::find(mentioned_.begin(), mentioned_.end(), f) == mentioned_.end()) mentioned_.push_back(f);
  }
  Fields KeyValues(const std::vector<Token>& tokens, size_t from);

  void OnFlavor(int line, const std::vector<Token>& t);
  void OnNode(int line, const std::vector<Token>& t);
  void OnPool(int line, const std::vector<Token>& t);
  void OnReservation(int line, const std::vector<Token>& t);
  void OnCohort(int line, const std::vector<Token>& t);
  void OnQueue(int line, const std::vector<Token>& t);
  void OnWorkload(int line, const std::vector<Token>& t, bool running);
  void OnGroup(int line, const std::vector<Token>& t);
  bool TaskField(int line, const std::string& k, const std::string& v, sched::TaskGroupRequest* g, std::string* pattern);
  void OnConfig(int line, const std::vector<Token>& t);
  void OnExpect(int line, const std::vector<Token>& t, std::string_view raw);
  void OnHealth(int line, const std::vector<Token>& t);
  // `fault node=N device=I reason="…"` / `recover node=N device=I` into `step`; false on error.
  bool OnDeviceReport(int line, const std::vector<Token>& t, ScenarioStep* step);
  void ResolveWorkloads();

  std::string file_;
  Scenario sc_;
  Diagnostics diags_;
  std::map<std::string, int32_t> nodes_, queues_, cohorts_;
  std::vector<FlavorId> mentioned_;
  Time now_;
  sched::SchedulerConfig config_;
  int32_t last_workload_step_ = -1;
  std::set<std::string> workload_names_;
};

Result<ResourceKey> Parser::Resource(std::string_view text) {
  if (text == "cpu") return ResourceKey::Cpu();
  if (text == "memory") return ResourceKey::Memory();
  if (std::count(text.begin(), text.end(), '/') < 2) {
    auto x = ExtendedResource::Parse(text);
    if (!x.ok()) return x.status();
    return ResourceKey::Extended(x->Intern());
  }
  auto f = Flavor::Parse(text);
  if (!f.ok()) return f.status();
  if (!f->is_accelerator()) return ResourceKey::Cpu();
  FlavorId id = f->Intern();
  Mention(id);
  return ResourceKey::Devices(id);
}

Result<int64_t> Parser::ResourceAmount(ResourceKey r, std::string_view text) {
  if (r.type == ResourceType::kMemory) return ParseBytes(text);
  if (r.type == ResourceType::kExtended) return ExtendedResource::FromId(r.flavor).ParseAmount(text);
  return ParseMilli(text);  // cpu: millicores; devices: milli-devices
}

Parser::Fields Parser::KeyValues(const std::vector<Token>& tokens, size_t from) {
  Fields out;
  for (size_t i = from; i < tokens.size(); ++i) {
    const std::string& s = tokens[i].text;
    size_t eq = s.find('=');
    if (eq == std::string::npos || tokens[i].quoted) {
      out.emplace_back(s, "");
    } else {
      out.emplace_back(s.substr(0, eq), s.substr(eq + 1));
    }
  }
  return out;
}

void Parser::Line(int line, std::string_view raw) {
  std::vector<Token> t;
  if (!Check(line, "", Tokenize(raw, &t)) || t.empty()) return;
  const std::string& verb = t[0].text;
  if (verb == "flavor") return OnFlavor(line, t);
  if (verb == "node") return OnNode(line, t);
  if (verb == "pool") return OnPool(line, t);
  if (verb == "reservation") return OnReservation(line, t);
  if (verb == "cohort") return OnCohort(line, t);
  if (verb == "queue") return OnQueue(line, t);
  if (verb == "workload") return OnWorkload(line, t, false);
  if (verb == "running") return OnWorkload(line, t, true);
  if (verb == "group") return OnGroup(line, t);
  if (verb == "config") return OnConfig(line, t);
  if (verb == "expect") return OnExpect(line, t, raw);
  if (verb == "health") return OnHealth(line, t);
  ScenarioStep step;
  step.line = line;
  if (verb == "now") {
    if (t.size() != 2) return Error(line, "expected 'now TIME' or 'now +DURATION'");
    std::string v = t[1].text;
    bool relative = !v.empty() && v[0] == '+';
    auto d = ParseDurationSpec(relative ? std::string_view(v).substr(1) : std::string_view(v));
    if (!Check(line, "now", d.status())) return;
    Time next = relative ? now_ + *d : ScenarioEpoch() + *d;
    if (next < now_) return Error(line, "time goes backwards (" + v + ")");
    now_ = next;
    step.kind = ScenarioStep::Kind::kNow;
    step.time = now_;
  } else if (verb == "cycle") {
    if (t.size() != 1) return Error(line, "'cycle' takes no arguments");
    step.kind = ScenarioStep::Kind::kCycle;
  } else if (verb == "finish" || verb == "requeue") {
    if (t.size() < 2) return Error(line, "expected '" + verb + " WORKLOAD...'");
    step.kind = verb == "finish" ? ScenarioStep::Kind::kFinish : ScenarioStep::Kind::kRequeue;
    for (size_t i = 1; i < t.size(); ++i) step.names.push_back(t[i].text);
  } else if (verb == "fault" || verb == "recover") {
    step.kind = verb == "fault" ? ScenarioStep::Kind::kFault : ScenarioStep::Kind::kRecover;
    if (!OnDeviceReport(line, t, &step)) return;
  } else if (verb == "uncordon") {
    if (t.size() != 2) return Error(line, "expected 'uncordon NODE'");
    if (nodes_.count(t[1].text) == 0) return Error(line, "uncordon: no node '" + t[1].text + "'");
    step.kind = ScenarioStep::Kind::kUncordon;
    step.node = t[1].text;
  } else {
    return Error(line, "unknown statement '" + verb +
                           "' (expected flavor, node, pool, reservation, cohort, queue, health, workload, running, group, "
                           "now, cycle, finish, requeue, fault, recover, uncordon, config or expect)");
  }
  sc_.steps.push_back(std::move(step));
}

void Parser::OnHealth(int line, const std::vector<Token>& t) {
  for (const auto& [k, v] : KeyValues(t, 1)) {
    if (k == "cordonAfter") {
      auto n = ParseNonNegative(v);
      if (Check(line, k, n.status())) sc_.health.cordon_after = static_cast<int32_t>(*n);
    } else if (k == "window" || k == "cleanWindow") {
      auto d = ParseDurationSpec(v);
      if (!Check(line, k, d.status())) continue;
      (k == "window" ? sc_.health.window : sc_.health.clean_window) = *d;
    } else {
      Error(line, "health: unknown field '" + k + "' (expected cordonAfter, window, cleanWindow)");
    }
  }
}

bool Parser::OnDeviceReport(int line, const std::vector<Token>& t, ScenarioStep* step) {
  const std::string& verb = t[0].text;
  bool has_device = false;
  for (const auto& [k, v] : KeyValues(t, 1)) {
    if (k == "node") {
      step->node = v;
    } else if (k == "device") {
      auto d = ParseNonNegative(v);
      if (!Check(line, k, d.status())) return false;
      step->device = static_cast<int32_t>(*d);
      has_device = true;
    } else if (k == "reason" && verb == "fault") {
      step->reason = v;
    } else {
      Error(line, verb + ": unknown field '" + k + "' (expected node, device" + (verb == "fault" ? ", reason)" : ")"));
      return false;
    }
  }
  auto it = nodes_.find(step->node);
  if (it == nodes_.end() || !has_device) {
    Error(line, "expected '" + verb + " node=NODE device=INDEX" + (verb == "fault" ? " [reason=\"TEXT\"]'" : "'") +
                    (step->node.empty() || it != nodes_.end() ? "" : " (no node '" + step->node + "')"));
    return false;
  }
  const auto& devices = sc_.cluster.nodes[it->second].devices;
  if (std::none_of(devices.begin(), devices.end(), [&](const auto& d) { return d.index == step->device; })) {
    Error(line, verb + ": node " + step->node + " has no device " + std::to_string(step->device));
    return false;
  }
  return true;
}

void Parser::OnFlavor(int line, const std::vector<Token>& t) {
  if (t.size() < 2) return Error(line, "expected 'flavor KIND/VENDOR/MODEL [weight=W]'");
  auto f = Flavor::Parse(t[1].text);
  if (!Check(line, "flavor", f.status())) return;
  if (!f->is_accelerator()) return Error(line, "flavor: 'cpu' is not an accelerator flavor");
  FlavorId id = f->Intern();
  Mention(id);
  for (const auto& [k, v] : KeyValues(t, 2)) {
    if (k == "weight") {
      auto w = ParseMilli(v);
      if (Check(line, k, w.status())) sc_.cluster.flavor_weight_milli[id] = *w;
    } else {
      Error(line, "flavor: unknown field '" + k + "' (expected weight)");
    }
  }
}

void Parser::OnNode(int line, const std::vector<Token>& t) {
  if (t.size() < 2) return Error(line, "expected 'node NAME field=value...'");
  auto names = ExpandNames(t[1].text);
  if (!Check(line, "node", names.status())) return;
  sched::NodeInfo n;
  n.cpu_milli = 64'000;
  n.memory_bytes = 512 * kGiB;
  struct DevSpec {
    FlavorId flavor;
    int64_t count;
    std::optional<int64_t> memory;
  };
  std::vector<DevSpec> specs;
  std::optional<int64_t> devmem;
  std::vector<int64_t> domains, numa, unhealthy;
  const auto& known_runtimes = VersionConstraint::KnownNames();
  for (const auto& [k, v] : KeyValues(t, 2)) {
    if (k == "cluster") {
      n.cluster = v;
    } else if (k == "pool") {
      n.pool = v;
    } else if (k == "cpu") {
      auto x = ParseMilli(v);
      if (Check(line, k, x.status())) n.cpu_milli = *x;
    } else if (k == "memory") {
      auto x = ParseBytes(v);
      if (Check(line, k, x.status())) n.memory_bytes = *x;
    } else if (k.rfind("res.", 0) == 0) {
      // res.NAME=AMOUNT: an extended resource the node has (res.rdma/hca=4).
      auto x = ExtendedResource::Parse(std::string_view(k).substr(4));
      if (!Check(line, k, x.status())) continue;
      auto amount = x->ParseAmount(v);
      if (Check(line, k, amount.status())) sched::SetExtended(&n.extended, x->Intern(), *amount);
    } else if (k == "devices") {
      for (const auto& item : Split(v, ',')) {
        // FLAVOR[*COUNT][:MEMORY]
        std::string s = item;
        DevSpec d{};
        d.count = 1;
        size_t colon = s.find(':');
        if (colon != std::string::npos) {
          auto m = ParseBytes(s.substr(colon + 1));
          if (!Check(line, k, m.status())) continue;
          d.memory = *m;
          s = s.substr(0, colon);
        }
        size_t star = s.find('*');
        if (star != std::string::npos) {
          auto c = ParseNonNegative(s.substr(star + 1));
          if (!Check(line, k, c.status())) continue;
          d.count = *c;
          s = s.substr(0, star);
        }
        auto f = Flavor::Parse(s);
        if (!Check(line, k, f.status())) continue;
        if (!f->is_accelerator()) {
          Error(line, "devices: 'cpu' is not a device flavor");
          continue;
        }
        d.flavor = f->Intern();
        Mention(d.flavor);
        specs.push_back(d);
      }
    } else if (k == "devmem") {
      auto x = ParseBytes(v);
      if (Check(line, k, x.status())) devmem = *x;
    } else if (k == "domains" || k == "numa" || k == "unhealthy") {
      auto& list = k == "domains" ? domains : (k == "numa" ? numa : unhealthy);
      for (const auto& item : Split(v, ',')) {
        auto x = ParseNonNegative(item);
        if (Check(line, k, x.status())) list.push_back(*x);
      }
    } else if (k == "labels") {
      Check(line, k, ParseLabels(v, &n.labels));
    } else if (k == "taints") {
      for (const auto& item : Split(v, ',')) {
        auto taint = ParseTaint(item);
        if (Check(line, k, taint.status())) n.taints.push_back(*taint);
      }
    } else if (k == "state") {
      auto s = ParseNodeState(v);
      if (Check(line, k, s.status())) n.state = *s;
    } else if (std::find(known_runtimes.begin(), known_runtimes.end(), k) != known_runtimes.end()) {
      auto ver = Version::Parse(v);
      if (Check(line, k, ver.status())) n.runtime_versions[k] = ver->numbers();
    } else {
      Error(line, "node: unknown field '" + k +
                      "' (expected cluster, pool, cpu, memory, devices, devmem, domains, numa, labels, taints, state, "
                      "unhealthy, cuda, cann, rocm, driver, res.NAME)");
    }
  }
  for (const auto& s : specs) {
    for (int64_t i = 0; i < s.count; ++i) {
      sched::DeviceInfo d;
      d.index = static_cast<int>(n.devices.size());
      d.flavor = s.flavor;
      d.memory_bytes = s.memory.value_or(devmem.value_or(kDefaultDeviceMemory));
      n.devices.push_back(d);
    }
  }
  if (!domains.empty()) {
    int64_t sum = 0;
    for (int64_t d : domains) sum += d;
    if (sum != static_cast<int64_t>(n.devices.size())) {
      Error(line, "domains: sizes add up to " + std::to_string(sum) + " but the node has " +
                      std::to_string(n.devices.size()) + " devices");
    } else {
      size_t pos = 0;
      for (size_t dom = 0; dom < domains.size(); ++dom) {
        for (int64_t i = 0; i < domains[dom]; ++i) n.devices[pos++].domain = static_cast<int32_t>(dom);
      }
    }
  }
  if (!numa.empty()) {
    if (numa.size() != n.devices.size()) {
      Error(line, "numa: " + std::to_string(numa.size()) + " entries for " + std::to_string(n.devices.size()) + " devices");
    } else {
      for (size_t i = 0; i < numa.size(); ++i) n.devices[i].numa = static_cast<int32_t>(numa[i]);
    }
  }
  for (int64_t u : unhealthy) {
    if (u >= static_cast<int64_t>(n.devices.size())) {
      Error(line, "unhealthy: no device " + std::to_string(u));
    } else {
      n.devices[u].healthy = false;
    }
  }
  for (const auto& name : *names) {
    if (nodes_.count(name)) {
      Error(line, "node '" + name + "' declared twice");
      continue;
    }
    n.name = name;
    nodes_[name] = static_cast<int32_t>(sc_.cluster.nodes.size());
    sc_.cluster.nodes.push_back(n);
  }
}

void Parser::OnPool(int line, const std::vector<Token>& t) {
  if (t.size() < 2) return Error(line, "expected 'pool NAME tenants=a,b'");
  auto& tenants = sc_.cluster.pool_tenants[t[1].text];
  for (const auto& [k, v] : KeyValues(t, 2)) {
    if (k == "tenants") {
      for (const auto& s : Split(v, ',')) tenants.push_back(s);
    } else {
      Error(line, "pool: unknown field '" + k + "' (expected tenants)");
    }
  }
}

void Parser::OnReservation(int line, const std::vector<Token>& t) {
  if (t.size() < 2) {
    return Error(line, "expected 'reservation NAME nodes=a,b|devices=FLAVOR*N start=T end=T [owner fields]'");
  }
  sched::WindowReservation r;
  r.name = t[1].text;
  bool has_start = false, has_end = false;
  for (const auto& [k, v] : KeyValues(t, 2)) {
    if (k == "nodes") {
      for (const auto& s : Split(v, ',')) {
        auto names = ExpandNames(s);
        if (Check(line, k, names.status())) r.nodes.insert(r.nodes.end(), names->begin(), names->end());
      }
    } else if (k == "devices") {
      size_t star = v.rfind('*');
      auto f = Flavor::Parse(v.substr(0, star));
      auto n = ParseInt(star == std::string::npos ? "" : v.substr(star + 1));
      if (star == std::string::npos || !f.ok() || !n.ok() || *n < 1) {
        Error(line, "devices: expected FLAVOR*N, got '" + v + "'");
      } else {
        r.flavor = f->Intern();
        Mention(r.flavor);
        r.devices = static_cast<int32_t>(*n);
      }
    } else if (k == "pool" || k == "cluster" || k == "tenant" || k == "queue" || k == "user") {
      (k == "pool" ? r.pool : k == "cluster" ? r.cluster : k == "tenant" ? r.tenant : k == "queue" ? r.queue : r.user) = v;
    } else if (k == "start" || k == "end") {
      bool relative = !v.empty() && v[0] == '+';
      auto d = ParseDurationSpec(relative ? std::string_view(v).substr(1) : std::string_view(v));
      if (!Check(line, k, d.status())) continue;
      (k == "start" ? r.start : r.end) = (relative ? now_ : ScenarioEpoch()) + *d;
      (k == "start" ? has_start : has_end) = true;
    } else if (k == "every") {
      auto d = ParseDurationSpec(v);
      if (Check(line, k, d.status())) r.every = *d;
    } else if (k == "drain" && v.empty()) {
      r.drain = true;
    } else {
      Error(line, "reservation: unknown field '" + k +
                      "' (expected nodes, devices, pool, cluster, tenant, queue, user, start, end, every, drain)");
    }
  }
  if (!has_start || !has_end || r.end <= r.start) Error(line, "reservation " + r.name + ": start= and end= after it are required");
  if (r.nodes.empty() == (r.devices == 0)) Error(line, "reservation " + r.name + ": give nodes= or devices=, one of them");
  if (r.every.count() > 0 && r.every < r.end - r.start) Error(line, "reservation " + r.name + ": every= is shorter than the window");
  sc_.cluster.window_reservations.push_back(std::move(r));
}

void Parser::OnCohort(int line, const std::vector<Token>& t) {
  if (t.size() < 2) return Error(line, "expected 'cohort NAME [parent=P] [borrow.RESOURCE=N]...'");
  if (cohorts_.count(t[1].text)) return Error(line, "cohort '" + t[1].text + "' declared twice");
  sched::CohortInfo c;
  c.name = t[1].text;
  for (const auto& [k, v] : KeyValues(t, 2)) {
    if (k == "parent") {
      auto it = cohorts_.find(v);
      if (it == cohorts_.end()) {
        Error(line, "parent: cohort '" + v + "' is not declared above");
      } else {
        c.parent = it->second;
      }
    } else if (k.rfind("borrow.", 0) == 0) {
      auto r = Resource(k.substr(7));
      if (!Check(line, k, r.status())) continue;
      auto amount = ResourceAmount(*r, v);
      if (!Check(line, k, amount.status())) continue;
      c.quotas.push_back({*r, 0, *amount, std::nullopt});
    } else {
      Error(line, "cohort: unknown field '" + k + "' (expected parent, borrow.RESOURCE)");
    }
  }
  cohorts_[c.name] = static_cast<int32_t>(sc_.cluster.cohorts.size());
  sc_.cluster.cohorts.push_back(std::move(c));
}

void Parser::OnQueue(int line, const std::vector<Token>& t) {
  if (t.size() < 2) return Error(line, "expected 'queue NAME field=value...'");
  if (queues_.count(t[1].text)) return Error(line, "queue '" + t[1].text + "' declared twice");
  sched::QueueInfo q;
  q.name = t[1].text;
  q.tenant = q.name;
  auto entry = [&](ResourceKey r) -> sched::QuotaInfo& {
    for (auto& e : q.quotas) {
      if (e.resource == r) return e;
    }
    q.quotas.push_back({r, 0, std::nullopt, std::nullopt});
    return q.quotas.back();
  };
  for (const auto& [k, v] : KeyValues(t, 2)) {
    if (k == "tenant") {
      q.tenant = v;
    } else if (k == "cohort") {
      auto it = cohorts_.find(v);
      if (it == cohorts_.end()) {
        Error(line, "cohort: cohort '" + v + "' is not declared above");
      } else {
        q.cohort = it->second;
      }
    } else if (k == "weight") {
      auto w = ParseMilli(v);
      if (Check(line, k, w.status())) q.weight_milli = *w;
    } else if (k == "strategy") {
      if (v == "StrictFIFO") {
        q.strategy = sched::QueueingStrategy::kStrictFifo;
      } else if (v == "BestEffortFIFO") {
        q.strategy = sched::QueueingStrategy::kBestEffortFifo;
      } else {
        Error(line, "strategy: expected StrictFIFO or BestEffortFIFO, got '" + v + "'");
      }
    } else if (k == "reclaim") {
      if (v == "Any" || v == "LowerPriority") {
        q.reclaim_lower_priority_only = v == "LowerPriority";
      } else {
        Error(line, "reclaim: expected Any or LowerPriority, got '" + v + "'");
      }
    } else if (k == "pools") {
      q.allowed_pools = Split(v, ',');
    } else if (k.rfind("quota.", 0) == 0 || k.rfind("borrow.", 0) == 0 || k.rfind("lend.", 0) == 0) {
      size_t dot = k.find('.');
      std::string kind = k.substr(0, dot);
      auto r = Resource(k.substr(dot + 1));
      if (!Check(line, k, r.status())) continue;
      auto amount = ResourceAmount(*r, v);
      if (!Check(line, k, amount.status())) continue;
      sched::QuotaInfo& e = entry(*r);
      if (kind == "quota") {
        e.nominal = *amount;
      } else if (kind == "borrow") {
        e.borrowing_limit = *amount;
      } else {
        e.lending_limit = *amount;
      }
    } else {
      Error(line, "queue: unknown field '" + k +
                      "' (expected tenant, cohort, weight, strategy, reclaim, pools, quota.R, borrow.R, lend.R)");
    }
  }
  queues_[q.name] = static_cast<int32_t>(sc_.cluster.queues.size());
  sc_.cluster.queues.push_back(std::move(q));
}

bool Parser::TaskField(int line, const std::string& k, const std::string& v, sched::TaskGroupRequest* g,
                       std::string* pattern) {
  sched::TaskRequest& task = g->task;
  if (k == "cpu") {
    auto x = ParseMilli(v);
    if (Check(line, k, x.status())) task.cpu_milli = *x;
  } else if (k == "memory") {
    auto x = ParseBytes(v);
    if (Check(line, k, x.status())) task.memory_bytes = *x;
  } else if (k == "gpus" || k == "npus" || k == "devices") {
    // PATTERN[:COUNT]
    std::string p = v;
    int64_t count = 1;
    size_t colon = p.rfind(':');
    if (colon != std::string::npos) {
      auto c = ParseNonNegative(p.substr(colon + 1));
      if (!Check(line, k, c.status())) return true;
      count = *c;
      p = p.substr(0, colon);
    }
    auto fp = FlavorPattern::Parse(p);
    if (!Check(line, k, fp.status())) return true;
    *pattern = p;
    task.flavor_pattern = p;
    if (task.share_milli > 0 && count != 1) {
      Error(line, k + ": a shared device task takes one device");
    } else if (task.share_milli == 0) {
      task.device_count = static_cast<int32_t>(count);
    }
  } else if (k == "share") {
    auto x = ParseInt(v);
    if (!Check(line, k, x.status())) return true;
    if (*x < 1 || *x > 999) {
      Error(line, "share: expected milli-device 1..999, got " + v);
    } else if (task.device_count > 1) {
      Error(line, "share: a shared device task takes one device");
    } else {
      task.share_milli = static_cast<int32_t>(*x);
      task.device_count = 1;
    }
  } else if (k == "devmem") {
    auto x = ParseBytes(v);
    if (Check(line, k, x.status())) task.device_memory = *x;
  } else if (k.rfind("res.", 0) == 0) {
    // res.NAME=AMOUNT: an extended resource each task takes (res.rdma/hca=1).
    auto x = ExtendedResource::Parse(std::string_view(k).substr(4));
    if (!Check(line, k, x.status())) return true;
    auto amount = x->ParseAmount(v);
    if (Check(line, k, amount.status())) sched::SetExtended(&task.extended, x->Intern(), *amount);
  } else if (k == "topology") {
    if (v == "same-interconnect") {
      task.topology = sched::TopologyRequirement::kSameInterconnect;
    } else if (v == "same-numa") {
      task.topology = sched::TopologyRequirement::kSameNuma;
    } else if (v == "none") {
      task.topology = sched::TopologyRequirement::kNone;
    } else {
      Error(line, "topology: expected same-interconnect, same-numa or none, got '" + v + "'");
    }
  } else if (k == "maxPerNode") {
    auto x = ParseInt(v);
    if (!Check(line, k, x.status())) return true;
    if (*x < 1) {
      Error(line, "maxPerNode: expected tasks per node, 1 or more, got " + v);
    } else {
      g->rules.max_per_node = static_cast<int32_t>(*x);
    }
  } else if (k == "spread") {
    // TOPOLOGY_KEY:MAX_SKEW (zone:1, node:1)
    size_t colon = v.rfind(':');
    auto skew = colon == std::string::npos ? ParseInt("") : ParseInt(v.substr(colon + 1));
    if (colon == std::string::npos || colon == 0 || !skew.ok() || *skew < 1) {
      Error(line, "spread: expected TOPOLOGY_KEY:MAX_SKEW such as zone:1, got '" + v + "'");
    } else {
      g->rules.spread.push_back({v.substr(0, colon), static_cast<int32_t>(*skew)});
    }
  } else if (k == "antiAffinity") {
    g->rules.anti_affinity.push_back(v);
  } else if (k == "reservedPool") {
    task.reserved_pool = v;
  } else if (k == "overflow") {
    if (v == "Allow" || v == "Deny") {
      task.pool_overflow = v == "Allow";
    } else {
      Error(line, "overflow: expected Allow or Deny, got '" + v + "'");
    }
  } else if (k == "selector") {
    Check(line, k, ParseLabels(v, &task.node_selector));
  } else if (k == "tolerate") {
    for (const auto& item : Split(v, ',')) {
      auto tol = ParseToleration(item);
      if (Check(line, k, tol.status())) task.tolerations.push_back(*tol);
    }
  } else if (k == "runtime") {
    for (const auto& item : Split(v, ',')) {
      auto r = ParseRuntime(item);
      if (Check(line, k, r.status())) task.runtime.push_back(*r);
    }
  } else if (k == "replicas") {
    auto x = ParseInt(v);
    if (!Check(line, k, x.status())) return true;
    if (*x < 1 || *x > 100000) {
      Error(line, "replicas: expected 1..100000, got " + v);
    } else {
      g->replicas = static_cast<int32_t>(*x);
    }
  } else {
    return false;
  }
  return true;
}

void Parser::OnWorkload(int line, const std::vector<Token>& t, bool running) {
  std::string verb = running ? "running" : "workload";
  if (t.size() < 2) return Error(line, "expected '" + verb + " NAME queue=Q field=value...'");
  ScenarioStep step;
  step.line = line;
  step.kind = running ? ScenarioStep::Kind::kRunning : ScenarioStep::Kind::kSubmit;
  WorkloadInfo& w = step.workload;
  w.id = w.name = t[1].text;
  if (!workload_names_.insert(w.id).second) return Error(line, "workload '" + w.id + "' declared twice");
  w.groups.push_back({"main", 1, {}, {}});
  w.groups[0].task.cpu_milli = 1000;
  w.groups[0].task.memory_bytes = kGiB;
  std::string pattern;
  std::optional<Time> submitted, admitted_at;
  bool has_queue = false;
  for (const auto& [k, v] : KeyValues(t, 2)) {
    if (TaskField(line, k, v, &w.groups[0], &pattern)) continue;
    if (k == "queue") {
      auto it = queues_.find(v);
      if (it == queues_.end()) {
        Error(line, "queue: queue '" + v + "' is not declared above");
      } else {
        w.queue = it->second;
        has_queue = true;
      }
    } else if (k == "service") {
      w.name = v;  // the service name anti-affinity rules match (default: the workload's name)
    } else if (k == "priority") {
      auto p = ParsePriority(v);
      if (Check(line, k, p.status())) w.priority = *p;
    } else if (k == "submit" || k == "admitted") {
      bool relative = !v.empty() && v[0] == '+';
      auto d = ParseDurationSpec(relative ? std::string_view(v).substr(1) : std::string_view(v));
      if (!Check(line, k, d.status())) continue;
      Time at = relative ? now_ + *d : ScenarioEpoch() + *d;
      (k == "submit" ? submitted : admitted_at) = at;
    } else if (k == "gang") {
      if (v.empty()) {
        w.gang = true;
      } else if (auto b = ParseBool(v); Check(line, k, b.status())) {
        w.gang = *b;
      }
    } else if (k == "borrowedOnly" || k == "reserved") {
      bool& flag = k == "reserved" ? w.reserved : w.borrowed_only;
      if (v.empty()) {
        flag = true;
      } else if (auto b = ParseBool(v); Check(line, k, b.status())) {
        flag = *b;
      }
    } else if (k == "preemptible" || k == "canPreempt") {
      auto b = ParseBool(v);
      if (Check(line, k, b.status())) (k == "preemptible" ? w.preemptible : w.can_preempt) = *b;
    } else if (k == "grace") {
      auto s = ParseSeconds(v);
      if (Check(line, k, s.status())) w.grace_seconds = *s;
    } else if (k == "maxQueueWait") {
      auto d = ParseDurationSpec(v);
      if (Check(line, k, d.status())) w.max_queue_wait = *d;
    } else if (k == "maxRuntime") {
      auto d = ParseDurationSpec(v);
      if (Check(line, k, d.status())) w.max_runtime = *d;
    } else if (k == "user") {
      w.user = v;
    } else if (k == "agingStep" || k == "ceiling") {
      auto p = ParsePriority(v);
      if (Check(line, k, p.status())) (k == "agingStep" ? w.aging_step : w.priority_ceiling) = *p;
    } else if (running && k == "on") {
      auto places = ParsePlaces(v);
      if (Check(line, k, places.status())) step.places = std::move(*places);
    } else if (running && k == "flavor") {
      step.running_flavor = v;
    } else if (running && k == "auto" && v.empty()) {
      // placed at once by a cycle of its own (the default without on=)
    } else {
      Error(line, verb + ": unknown field '" + k +
                      "' (expected queue, priority, submit, replicas, gang, gpus, share, devmem, cpu, memory, topology, "
                      "selector, tolerate, runtime, preemptible, canPreempt, borrowedOnly, reserved, grace, maxQueueWait, "
                      "maxRuntime, user, agingStep, ceiling, res.NAME" + (running ? ", on, flavor, admitted, auto)" : ")"));
    }
  }
  if (!has_queue) Error(line, verb + " " + w.id + ": queue=Q is required");
  if (w.groups[0].task.share_milli > 0 && pattern.empty()) Error(line, "share: needs gpus=PATTERN");
  if (w.groups[0].task.device_memory > 0 && pattern.empty()) Error(line, "devmem: needs gpus=PATTERN");
  if (!running && !step.places.empty()) Error(line, "on= is only for running workloads");
  // Without submit=/admitted=, the current scenario time. The scheduler orders equal
  // submission times by id, and equal admission times by declaration (later = newer).
  w.submitted = submitted.value_or(now_);
  if (running) w.admitted_at = admitted_at.value_or(now_);
  step.patterns.push_back(pattern);
  last_workload_step_ = static_cast<int32_t>(sc_.steps.size());
  sc_.steps.push_back(std::move(step));
}

void Parser::OnGroup(int line, const std::vector<Token>& t) {
  if (last_workload_step_ < 0 || last_workload_step_ != static_cast<int32_t>(sc_.steps.size()) - 1) {
    return Error(line, "'group' must follow a workload or running line");
  }
  if (t.size() < 2) return Error(line, "expected 'group NAME field=value...'");
  ScenarioStep& step = sc_.steps[last_workload_step_];
  sched::TaskGroupRequest g{t[1].text, 1, {}, {}};
  g.task.cpu_milli = 1000;
  g.task.memory_bytes = kGiB;
  std::string pattern;
  for (const auto& [k, v] : KeyValues(t, 2)) {
    if (!TaskField(line, k, v, &g, &pattern)) {
      Error(line, "group: unknown field '" + k +
                      "' (expected replicas, gpus, share, devmem, cpu, memory, topology, selector, tolerate, runtime, res.NAME)");
    }
  }
  step.workload.groups.push_back(std::move(g));
  step.patterns.push_back(pattern);
}

void Parser::OnConfig(int line, const std::vector<Token>& t) {
  for (const auto& [k, v] : KeyValues(t, 1)) {
    if (k == "policy") {
      auto p = sched::ParseScoringPolicy(v);
      if (Check(line, k, p.status())) config_.policy = *p;
    } else if (k == "preemption" || k == "reservation") {
      auto b = ParseBool(v);
      if (Check(line, k, b.status())) (k == "preemption" ? config_.enable_preemption : config_.enable_gang_reservation) = *b;
    } else if (k == "reasons") {
      if (v == "detailed" || v == "brief") {
        config_.detailed_reasons = v == "detailed";
      } else {
        Error(line, "reasons: expected detailed or brief");
      }
    } else if (k == "fairShareHalfLife") {
      auto d = ParseDurationSpec(v);
      if (Check(line, k, d.status())) config_.fair_share_half_life = *d;
    } else {
      Error(line, "config: unknown field '" + k +
                      "' (expected policy, preemption, reservation, reasons, fairShareHalfLife)");
    }
  }
  ScenarioStep step;
  step.line = line;
  step.kind = ScenarioStep::Kind::kConfig;
  step.config = config_;
  sc_.steps.push_back(std::move(step));
}

void Parser::OnExpect(int line, const std::vector<Token>& t, std::string_view raw) {
  using K = ScenarioExpect::Kind;
  if (t.size() < 2) return Error(line, "expected 'expect WHAT ...'");
  ScenarioExpect e;
  e.line = line;
  std::string text(raw);
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.erase(0, 1);
  e.text_as_written = text;
  static const std::pair<std::string_view, K> kKinds[] = {
      {"admitted", K::kAdmitted},   {"not-admitted", K::kNotAdmitted}, {"pending", K::kPending},
      {"preempted", K::kPreempted}, {"not-preempted", K::kNotPreempted}, {"reserved", K::kReserved},
      {"not-reserved", K::kNotReserved}, {"explain", K::kExplain}, {"count", K::kCount},
      {"order", K::kOrder},         {"running", K::kRunning},           {"evicting", K::kEvicting},
      {"node", K::kNode}};
  bool known = false;
  for (const auto& [name, kind] : kKinds) {
    if (t[1].text == name) {
      e.kind = kind;
      known = true;
    }
  }
  if (!known) {
    return Error(line, "expect: unknown check '" + t[1].text +
                           "' (expected admitted, not-admitted, pending, preempted, not-preempted, reserved, "
                           "not-reserved, explain, count, order, running, evicting, node)");
  }
  size_t i = 2;
  if (e.kind == K::kNode) {
    if (t.size() < 3 || nodes_.count(t[2].text) == 0) {
      return Error(line, "expect node: name a declared node ('expect node NODE [STATE] [unhealthy=1,2|none]')");
    }
    e.node = t[2].text;
    for (i = 3; i < t.size(); ++i) {
      const std::string& s = t[i].text;
      if (s.rfind("unhealthy=", 0) == 0) {
        std::vector<int> list;
        if (s != "unhealthy=none") {
          for (const auto& item : Split(s.substr(10), ',')) {
            auto n = ParseNonNegative(item);
            if (Check(line, "unhealthy", n.status())) list.push_back(static_cast<int>(*n));
          }
        }
        std::sort(list.begin(), list.end());
        e.unhealthy = std::move(list);
      } else if (auto st = ParseNodeState(s); st.ok() && !e.node_state) {
        e.node_state = *st;
      } else {
        Error(line, "expect node: unexpected '" + s + "' (expected a node state or unhealthy=INDEXES)");
      }
    }
    if (!e.node_state && !e.unhealthy) Error(line, "expect node: give a state and/or unhealthy=…");
  } else if (e.kind == K::kCount) {
    for (const auto& [k, v] : KeyValues(t, 2)) {
      if (k != "admitted" && k != "pending" && k != "preempted" && k != "reserved" && k != "running" && k != "evicting") {
        Error(line, "expect count: unknown counter '" + k + "' (expected admitted, pending, preempted, reserved, running, evicting)");
        continue;
      }
      auto n = ParseNonNegative(v);
      if (Check(line, k, n.status())) e.counts[k] = *n;
    }
    if (e.counts.empty()) Error(line, "expect count: name at least one counter");
  } else if (e.kind == K::kOrder) {
    for (; i < t.size(); ++i) e.order.push_back(t[i].text);
    if (e.order.size() < 2) Error(line, "expect order: name at least two workloads");
  } else {
    if (t.size() < 3) return Error(line, "expect " + t[1].text + ": name the workload");
    e.workload = t[2].text;
    i = 3;
    auto need = [&](const std::string& what) -> const std::string* {
      if (i + 1 >= t.size()) {
        Error(line, "expect: '" + what + "' needs a value");
        ++i;
        return nullptr;
      }
      i += 2;
      return &t[i - 1].text;
    };
    while (i < t.size()) {
      const Token& tok = t[i];
      const std::string& s = tok.text;
      bool placed_kind = e.kind == K::kAdmitted || e.kind == K::kRunning;
      if (tok.quoted) {
        if (e.kind == K::kPending || e.kind == K::kExplain) {
          e.texts.push_back(s);
        } else {
          Error(line, "expect " + t[1].text + ": unexpected text \"" + s + "\"");
        }
        ++i;
      } else if (s == "on" && (placed_kind || e.kind == K::kReserved)) {
        if (const std::string* v = need("on")) e.nodes = Split(*v, ',');
      } else if (s == "borrowing" && e.kind == K::kAdmitted) {
        e.borrowing = true;
        ++i;
      } else if (s == "not-borrowing" && e.kind == K::kAdmitted) {
        e.borrowing = false;
        ++i;
      } else if (s == "flavor" && placed_kind) {
        if (const std::string* v = need("flavor")) e.flavor = *v;
      } else if (s == "devices" && placed_kind) {
        if (const std::string* v = need("devices")) {
          auto places = ParsePlaces(*v);
          if (Check(line, "devices", places.status())) e.devices = std::move(*places);
        }
      } else if (s.rfind("priority=", 0) == 0 && e.kind == K::kAdmitted) {
        auto p = ParsePriority(s.substr(9));
        if (Check(line, "priority", p.status())) e.priority = *p;
        ++i;
      } else if (e.kind == K::kPending && IsPendingCode(s) && !e.code) {
        e.code = *ParsePendingCode(s);
        ++i;
      } else if (s == "by" && e.kind == K::kPreempted) {
        if (const std::string* v = need("by")) e.by = *v;
      } else if (e.kind == K::kPreempted && ParsePreemptionReason(s).ok()) {
        e.reason = *ParsePreemptionReason(s);
        ++i;
      } else if (s.rfind("grace=", 0) == 0 && e.kind == K::kPreempted) {
        auto g = ParseSeconds(s.substr(6));
        if (Check(line, "grace", g.status())) e.grace_seconds = *g;
        ++i;
      } else if (s.rfind("nodes=", 0) == 0 && e.kind == K::kReserved) {
        auto n = ParseNonNegative(s.substr(6));
        if (Check(line, "nodes", n.status())) e.node_count = static_cast<int32_t>(*n);
        ++i;
      } else {
        Error(line, "expect " + t[1].text + ": unexpected '" + s + "'" +
                        (e.kind == K::kPending && !e.code ? " (not a pending code; quote text to match)" : ""));
        ++i;
      }
    }
    if (e.kind == K::kExplain && e.texts.empty()) Error(line, "expect explain: give the \"text\" to find");
  }
  ScenarioStep step;
  step.line = line;
  step.kind = ScenarioStep::Kind::kExpect;
  step.expect = std::move(e);
  sc_.steps.push_back(std::move(step));
}

void Parser::ResolveWorkloads() {
  for (auto& step : sc_.steps) {
    if (step.kind != ScenarioStep::Kind::kSubmit && step.kind != ScenarioStep::Kind::kRunning) continue;
    WorkloadInfo& w = step.workload;
    for (size_t g = 0; g < w.groups.size(); ++g) {
      const std::string& p = step.patterns[g];
      if (p.empty()) continue;
      auto fp = FlavorPattern::Parse(p);
      if (!fp.ok()) continue;  // reported already
      for (FlavorId f : mentioned_) {
        if (fp->Matches(Flavor::FromId(f))) w.groups[g].task.flavors.push_back(f);
      }
      if (w.groups[g].task.flavors.empty()) {
        Error(step.line, "gpus: pattern '" + p + "' matches no flavor of this scenario (declare it with 'flavor')");
      }
    }
    if (step.kind != ScenarioStep::Kind::kRunning || step.places.empty()) continue;
    // Explicit places: one per task, groups in order.
    size_t tasks = 0;
    for (const auto& g : w.groups) tasks += static_cast<size_t>(g.replicas);
    if (step.places.size() != tasks) {
      Error(step.line, "on: " + std::to_string(step.places.size()) + " place(s) for " + std::to_string(tasks) +
                           " task(s) (separate tasks with ';')");
      continue;
    }
    size_t k = 0;
    w.group_flavors.assign(w.groups.size(), kCpuFlavorId);
    bool bad = false;
    for (int32_t g = 0; g < static_cast<int32_t>(w.groups.size()) && !bad; ++g) {
      const sched::TaskRequest& t = w.groups[g].task;
      for (int32_t r = 0; r < w.groups[g].replicas && !bad; ++r) {
        const ScenarioTaskPlace& place = step.places[k++];
        auto it = nodes_.find(place.node);
        if (it == nodes_.end()) {
          Error(step.line, "on: no node '" + place.node + "'");
          bad = true;
          break;
        }
        const sched::NodeInfo& node = sc_.cluster.nodes[it->second];
        sched::TaskPlacement p;
        p.group = g;
        p.replica = r;
        p.node = it->second;
        p.cpu_milli = t.cpu_milli;
        p.memory_bytes = t.memory_bytes;
        p.extended = t.extended;
        size_t want = t.needs_devices() ? (t.share_milli > 0 ? 1 : static_cast<size_t>(t.device_count)) : 0;
        if (place.devices.size() != want) {
          Error(step.line, "on: task " + std::to_string(k) + " on " + place.node + " lists " +
                               std::to_string(place.devices.size()) + " device(s), the task takes " + std::to_string(want));
          bad = true;
          break;
        }
        for (int idx : place.devices) {
          auto d = std::find_if(node.devices.begin(), node.devices.end(), [&](const auto& x) { return x.index == idx; });
          if (d == node.devices.end()) {
            Error(step.line, "on: node " + place.node + " has no device " + std::to_string(idx));
            bad = true;
            break;
          }
          if (std::find(t.flavors.begin(), t.flavors.end(), d->flavor) == t.flavors.end()) {
            Error(step.line, "on: device " + std::to_string(idx) + " of " + place.node + " is " +
                                 Flavor::FromId(d->flavor).name() + ", not a flavor the task accepts");
            bad = true;
            break;
          }
          if (w.group_flavors[g] != kCpuFlavorId && w.group_flavors[g] != d->flavor) {
            Error(step.line, "on: tasks of group " + w.groups[g].name + " use different flavors");
            bad = true;
            break;
          }
          w.group_flavors[g] = d->flavor;
          int32_t pos = static_cast<int32_t>(d - node.devices.begin());
          if (t.share_milli > 0) {
            p.devices.push_back({pos, t.share_milli, t.device_memory});
          } else {
            p.devices.push_back({pos, 1000, d->memory_bytes});
          }
        }
        w.placements.push_back(std::move(p));
      }
    }
    if (!bad) w.admitted = true;
  }
}

Result<Scenario> Parser::Finish() {
  ResolveWorkloads();
  if (!diags_.empty()) return diags_.ToStatus();
  return std::move(sc_);
}

}  // namespace

Result<Scenario> ParseScenario(std::string_view text, const std::string& file) {
  Parser parser(file);
  std::string known_bug, title;
  int line = 0;
  size_t pos = 0;
  bool seen_statement = false;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    std::string_view raw = text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
    ++line;
    int first_line = line;
    std::string joined(raw);
    // A line ending with '\' continues on the next.
    while (!joined.empty() && joined.back() == '\\' && end != std::string_view::npos) {
      joined.pop_back();
      pos = end + 1;
      end = text.find('\n', pos);
      joined += " ";
      joined += text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
      ++line;
    }
    std::string_view view(joined);
    size_t first = view.find_first_not_of(" \t\r");
    if (first != std::string_view::npos && view[first] == '#') {
      std::string_view comment = view.substr(first + 1);
      size_t c = comment.find_first_not_of(' ');
      comment = c == std::string_view::npos ? std::string_view() : comment.substr(c);
      if (comment.rfind("known-bug:", 0) == 0) {
        std::string_view why = comment.substr(10);
        size_t w = why.find_first_not_of(' ');
        known_bug += (known_bug.empty() ? "" : " ") + std::string(w == std::string_view::npos ? "" : why.substr(w));
        if (known_bug.empty()) known_bug = "(no description)";
      } else if (!seen_statement && title.empty() && !comment.empty()) {
        title = std::string(comment);
      }
    } else if (first != std::string_view::npos && Trimmed(view) == "tenancy") {
      // A block of tenancy YAML up to a line `end` (sim/scenario_tenancy.h).
      seen_statement = true;
      std::string yaml;
      bool closed = false;
      while (end != std::string_view::npos) {
        pos = end + 1;
        end = text.find('\n', pos);
        std::string_view body = text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
        ++line;
        if (Trimmed(body) == "end") {
          closed = true;
          break;
        }
        yaml += body;
        yaml += '\n';
      }
      if (closed) {
        parser.Tenancy(first_line + 1, yaml);
      } else {
        parser.Error(first_line, "tenancy: the block is not closed by a line 'end'");
      }
    } else if (first != std::string_view::npos) {
      seen_statement = true;
      parser.Line(first_line, view);
    }
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  auto sc = parser.Finish();
  if (!sc.ok()) return sc.status();
  sc->known_bug = known_bug;
  sc->title = title;
  return sc;
}

Result<Scenario> LoadScenario(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot open scenario file");
  std::stringstream buf;
  buf << in.rdbuf();
  return ParseScenario(buf.str(), path);
}

}  // namespace abacus::sim
