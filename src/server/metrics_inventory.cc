// The inventory and queue families of GET /metrics (docs/metrics.md): devices and nodes by
// cluster, pool, flavor and state; quotas with their limits, tenant and cohort; cohort totals;
// pending work by reason, active or inadmissible, and the oldest wait per queue. Labels stay
// bounded: names of clusters, pools, flavors, queues, tenants and cohorts, states and reason
// codes — never workload ids.
#include "server/metrics_inventory.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "sched/explain.h"
#include "server/metrics.h"
#include "server/quota_view.h"

namespace abacus::server {
namespace {

// A quantity in ledger units (tenancy/queue.h).
int64_t LedgerUnits(const QuotaResource& r, const Quantity& q) { return LedgerAmount(r, q); }

void Family(std::string& out, const char* name, const char* type, const char* help) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

std::string Label(const char* key, const std::string& value) {
  return std::string(key) + "=\"" + EscapeLabel(value) + "\"";
}

// What one device counts as, most telling first. `milli`: what placements hold of it.
const char* DeviceState(const NodeRecord& n, const Device& d, int64_t milli) {
  if (d.health != DeviceHealth::kHealthy) return "unhealthy";
  switch (n.EffectiveState()) {
    case NodeState::kNotReady: return "notready";
    case NodeState::kCordoned:
    case NodeState::kDraining:
    case NodeState::kDrained: return "cordoned";
    case NodeState::kReady: break;
  }
  if (milli >= Device::kWholeMilli) return "allocated";
  if (milli > 0) return "shared";
  return "free";
}

// Pending codes a workload cannot leave by waiting (Kueue's "inadmissible").
bool Inadmissible(sched::PendingCode c) {
  return c == sched::PendingCode::kNoFlavor || c == sched::PendingCode::kInvalid;
}

}  // namespace

std::string NaturalQuantity(const QuotaResource& r, int64_t ledger_units) {
  if (r.kind == QuotaResource::Kind::kMemory || r.kind == QuotaResource::Kind::kExtended) return std::to_string(ledger_units);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ledger_units) / 1000.0);
  return buf;
}

void RenderInventoryMetrics(const Ledger& ledger, const QuotaUse& used, Time now, std::string& out) {
  // ---- devices and nodes
  constexpr const char* kDeviceStates[] = {"free", "allocated", "shared", "unhealthy", "cordoned", "notready"};
  std::map<std::tuple<std::string, std::string, std::string>, std::map<std::string, int64_t>> devices;
  std::map<std::tuple<std::string, std::string>, std::map<std::string, int64_t>> nodes;
  // Device shares held, by (node, device index): the placements of work that holds quota.
  std::map<std::pair<std::string, int>, int64_t> held;
  for (const auto& [id, r] : ledger.workloads()) {
    if (!r.holds_quota()) continue;
    for (const auto& p : r.placements) {
      for (const auto& g : p.devices) held[{p.node, g.index}] += g.milli;
    }
  }
  for (const auto& [name, n] : ledger.nodes()) {
    nodes[{n.node.cluster, n.node.pool}][std::string(NodeStateName(n.EffectiveState()))]++;
    for (const Device& d : n.node.devices) {
      auto h = held.find({n.node.name, d.index});
      devices[{n.node.cluster, n.node.pool, d.flavor.name()}][DeviceState(n, d, h == held.end() ? 0 : h->second)]++;
    }
  }
  Family(out, "abacus_devices", "gauge",
         "Accelerator devices by cluster, pool, flavor and state (free, allocated, shared, unhealthy, cordoned, "
         "notready).");
  for (const auto& [key, states] : devices) {
    const auto& [cluster, pool, flavor] = key;
    const std::string base = "{" + Label("cluster", cluster) + "," + Label("pool", pool) + "," + Label("flavor", flavor);
    for (const char* state : kDeviceStates) {
      auto it = states.find(state);
      out += "abacus_devices" + base + ",state=\"" + state + "\"} " + std::to_string(it == states.end() ? 0 : it->second) +
             "\n";
    }
  }
  Family(out, "abacus_node_state", "gauge", "Nodes by cluster, pool and state (Ready, NotReady, Cordoned, Draining, Drained).");
  for (const auto& [key, states] : nodes) {
    const auto& [cluster, pool] = key;
    for (int s = 0; s <= static_cast<int>(NodeState::kDrained); ++s) {
      std::string state(NodeStateName(static_cast<NodeState>(s)));
      auto it = states.find(state);
      out += "abacus_node_state{" + Label("cluster", cluster) + "," + Label("pool", pool) + "," + Label("state", state) +
             "} " + std::to_string(it == states.end() ? 0 : it->second) + "\n";
    }
  }

  // ---- quotas
  std::string limits_b, limits_l;
  std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> cohort;  // nominal, used
  std::map<std::pair<std::string, std::string>, const QuotaResource*> cohort_resource;
  for (const Queue* q : ledger.config().queues()) {
    for (const auto& quota : q->quotas) {
      const std::string res = quota.resource.Name();
      const std::string labels = "{" + Label("queue", q->name) + "," + Label("tenant", q->tenant) + "," +
                                 Label("cohort", q->cohort) + "," + Label("resource", res) + "}";
      if (quota.borrowing_limit) {
        limits_b += "abacus_queue_quota_borrowing_limit" + labels + " " +
                    NaturalQuantity(quota.resource, LedgerUnits(quota.resource, *quota.borrowing_limit)) + "\n";
      }
      if (quota.lending_limit) {
        limits_l += "abacus_queue_quota_lending_limit" + labels + " " +
                    NaturalQuantity(quota.resource, LedgerUnits(quota.resource, *quota.lending_limit)) + "\n";
      }
      if (!q->cohort.empty()) {
        auto& c = cohort[{q->cohort, res}];
        c.first += LedgerUnits(quota.resource, quota.nominal);
        if (auto it = used.find({q->name, res}); it != used.end()) c.second += it->second;
        cohort_resource[{q->cohort, res}] = &quota.resource;
      }
    }
  }
  // What each queue lends now: the borrowing rule the API, `abacus get queues` and the reports use.
  nlohmann::json items = nlohmann::json::array();
  std::map<std::pair<std::string, std::string>, const QuotaResource*> resource_of;
  for (const Queue* q : ledger.config().queues()) {
    nlohmann::json usage = nlohmann::json::array();
    for (const auto& quota : q->quotas) {
      const std::string res = quota.resource.Name();
      auto it = used.find({q->name, res});
      usage.push_back({{"resource", res}, {"used", it == used.end() ? 0 : it->second}});
      resource_of[{q->name, res}] = &quota.resource;
    }
    items.push_back({{"name", q->name}, {"tenant", q->tenant}, {"cohort", q->cohort}, {"usage", std::move(usage)}});
  }
  AddBorrowingNow(ledger.config(), items);
  Family(out, "abacus_queue_quota_lent", "gauge",
         "Unused nominal quota of a queue that other queues of its cohort borrow now (cores, bytes, devices).");
  for (const auto& q : items) {
    for (const auto& u : q["usage"]) {
      const std::string name = q["name"], res = u["resource"];
      out += "abacus_queue_quota_lent{" + Label("queue", name) + "," + Label("tenant", q["tenant"]) + "," +
             Label("cohort", q["cohort"]) + "," + Label("resource", res) + "} " +
             NaturalQuantity(*resource_of[{name, res}], u.value("lent", int64_t{0})) + "\n";
    }
  }
  Family(out, "abacus_queue_quota_borrowing_limit", "gauge",
         "Most a queue may borrow above nominal from its cohort, where set (cores, bytes, devices).");
  out += limits_b;
  Family(out, "abacus_queue_quota_lending_limit", "gauge",
         "Most of a queue's unused nominal quota its cohort may lend, where set (cores, bytes, devices).");
  out += limits_l;
  Family(out, "abacus_cohort_quota_nominal", "gauge", "Nominal quota of a cohort's member queues together (cores, bytes, devices).");
  for (const auto& [key, v] : cohort) {
    out += "abacus_cohort_quota_nominal{" + Label("cohort", key.first) + "," + Label("resource", key.second) + "} " +
           NaturalQuantity(*cohort_resource[key], v.first) + "\n";
  }
  Family(out, "abacus_cohort_quota_used", "gauge", "Quota in use by a cohort's member queues together (cores, bytes, devices).");
  for (const auto& [key, v] : cohort) {
    out += "abacus_cohort_quota_used{" + Label("cohort", key.first) + "," + Label("resource", key.second) + "} " +
           NaturalQuantity(*cohort_resource[key], v.second) + "\n";
  }

  // ---- pending work: by reason (the last cycle's), active or inadmissible, oldest wait
  std::map<std::tuple<std::string, std::string, std::string>, int64_t> pending;  // queue, status, reason
  std::map<std::string, double> oldest, overrun;
  for (const Queue* q : ledger.config().queues()) {
    oldest[q->name] = 0;
    overrun[q->name] = 0;
  }
  const auto& reasons = ledger.pending_reasons();
  for (const auto& [id, r] : ledger.workloads()) {
    if (!r.waiting()) continue;
    std::string reason = "NotTried";
    std::string status = "active";
    double late = 0;
    if (auto it = reasons.find(id); it != reasons.end()) {
      reason = std::string(sched::PendingCodeName(it->second.code));
      if (Inadmissible(it->second.code)) status = "inadmissible";
      late = std::chrono::duration<double>(it->second.overrun).count();
    }
    pending[{r.spec.queue, status, reason}]++;
    const double waited = std::max(0.0, std::chrono::duration<double>(now - r.submitted).count());
    oldest[r.spec.queue] = std::max(oldest[r.spec.queue], waited);
    overrun[r.spec.queue] = std::max(overrun[r.spec.queue], late);
  }
  Family(out, "abacus_pending_workloads", "gauge",
         "Workloads waiting, by queue, status (active: may be admitted as capacity frees; inadmissible: cannot be "
         "as things stand) and the last cycle's reason code (NotTried: no cycle has looked at it yet).");
  for (const auto& [key, n] : pending) {
    const auto& [queue, status, reason] = key;
    out += "abacus_pending_workloads{" + Label("queue", queue) + "," + Label("status", status) + "," +
           Label("reason", reason) + "} " + std::to_string(n) + "\n";
  }
  char buf[64];
  Family(out, "abacus_queue_oldest_pending_seconds", "gauge", "How long the oldest waiting workload of a queue has waited.");
  for (const auto& [queue, s] : oldest) {
    std::snprintf(buf, sizeof buf, "%.3f", s);
    out += "abacus_queue_oldest_pending_seconds{" + Label("queue", queue) + "} " + buf + "\n";
  }
  Family(out, "abacus_queue_max_wait_overrun_seconds", "gauge",
         "Longest time a waiting workload of a queue is past its maxQueueWait (0: none is).");
  for (const auto& [queue, s] : overrun) {
    std::snprintf(buf, sizeof buf, "%.3f", s);
    out += "abacus_queue_max_wait_overrun_seconds{" + Label("queue", queue) + "} " + buf + "\n";
  }
}

}  // namespace abacus::server
