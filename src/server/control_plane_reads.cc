// ControlPlane: the read model of the API (workloads, events, explain, nodes, devices, flavors,
// queues, config), on HTTP threads under the shared state_mu_.
#include "server/control_plane.h"
#include "server/placement_hold.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <future>
#include <map>
#include <set>

#include "common/log.h"
#include "common/mutex.h"
#include "common/nesting.h"
#include "common/thread_name.h"
#include "control/controller.h"
#include "govern/crypto.h"
#include "sched/claims.h"
#include "sched/explain.h"
#include "server/device_holders.h"
#include "server/elastic_units.h"
#include "server/fit_check.h"
#include "server/governance.h"
#include "server/node_history.h"
#include "server/node_liveness.h"
#include "server/quota_view.h"
#include "server/read_views_json.h"
#include "server/reservations.h"
#include "server/reserved_pool.h"
#include "server/workload_update.h"
#include "store/data_folder_lock.h"
#include "store/fenced_store.h"
#include "tenancy/priority_class.h"
#include "tenancy/tenancy_codec.h"
#include "tenancy/yaml_json.h"
#include "workload/governance_codec.h"
#include "workload/secret_doc.h"
#include "workload/workload_codec.h"

namespace abacus::server {

using nlohmann::json;

// ---------------------------------------------------------------- reads

std::optional<WorkloadRecord> ControlPlane::FindRecord(const std::string& id_or_name) const {
  ReaderLock lock(state_mu_);  // the loop moves a workload from the inbox to the ledger under it
  if (const WorkloadRecord* r = ledger_.Resolve(id_or_name)) return *r;
  return inbox_.FindSubmitted(id_or_name);
}

WorkloadStatusView ControlPlane::StatusOf(const WorkloadRecord& r) const {
  WorkloadStatusView s;
  if (std::string held = r.waiting() ? ledger_.HoldReason(r) : ""; !held.empty()) {
    s.pending_reason = PendingReasonView{HoldCode(r), held, std::nullopt};  // an operator's hold (fleet.h)
  } else if (r.waiting()) {
    auto it = ledger_.pending_reasons().find(r.id);
    if (it != ledger_.pending_reasons().end()) {
      const sched::PendingReason& pr = it->second;
      s.pending_reason =
          PendingReasonView{std::string(sched::PendingCodeName(pr.code)), pr.message, pr.position};
    } else if (auto lr = ledger_.ledger_reasons().find(r.id); lr != ledger_.ledger_reasons().end()) {
      s.pending_reason = PendingReasonView{"Unschedulable", lr->second, std::nullopt};
    }
  }
  // What the kind's controller keeps: batch progress, replicas and rollout, idle notice, …
  s.controller = control::Describe(ViewOf(r), r.controller_state);
  if (!s.controller.is_object()) s.controller = json::object();
  s.elastic = ElasticStatusOf(r);
  return s;
}

std::optional<ElasticStatusView> ControlPlane::ElasticStatusOf(const WorkloadRecord& r) const {
  if (!IsElastic(r) || !r.holds_quota()) return std::nullopt;
  ElasticStatusView e;
  e.wanted_units = WantedUnits(r);
  e.placed_units = PlacedUnits(r).size();
  for (int32_t unit : MissingUnits(r)) {
    UnplacedUnitView& u = e.unplaced.emplace_back();
    u.unit = unit;
    auto it = ledger_.pending_reasons().find(SliceId(r.id, unit));
    if (it != ledger_.pending_reasons().end()) {
      // The replica's own reason with what stopped it on the nodes (filters and best candidate).
      const sched::PendingReason& pr = it->second;
      u.reason = pr.message + (pr.placement ? ": " + sched::DescribePlacement(*pr.placement) : std::string());
    }
  }
  if (std::set<int32_t> outside = UnitsOutsidePool(r, ledger_); !outside.empty()) {
    e.outside_pool = OutsidePoolView{ReservationPool(r), std::move(outside), OutsidePoolLine(r, ledger_)};
  }
  return e;
}

WorkloadView ControlPlane::View(const WorkloadRecord& r) const { return WorkloadView{r, StatusOf(r)}; }

Result<WorkloadView> ControlPlane::GetWorkload(const std::string& id_or_name) const {
  auto r = FindRecord(id_or_name);
  if (!r) return NotFound("workload '" + id_or_name + "' not found");
  ReaderLock lock(state_mu_);
  WorkloadStatusView status = StatusOf(*r);
  return WorkloadView{std::move(*r), std::move(status)};
}

void ControlPlane::ListWorkloads(const WorkloadFilter& f,
                                 const std::function<void(const WorkloadListView&)>& use) const {
  ReaderLock lock(state_mu_);
  const std::vector<WorkloadRecord> pending_ingest = inbox_.Submitted();  // not yet in the ledger
  std::vector<const WorkloadRecord*> rows;
  auto match = [&](const WorkloadRecord& r) {
    if (!f.queue.empty() && r.spec.queue != f.queue) return false;
    if (!f.state.empty() && WorkloadStateName(r.state) != f.state) return false;
    if (!f.project.empty() && r.spec.project != f.project) return false;
    if (!f.tenant.empty() && r.spec.tenant() != f.tenant) return false;
    if (!f.kind.empty() && WorkloadKindName(r.spec.kind()) != f.kind) return false;
    if (!f.name.empty() && r.spec.name != f.name) return false;
    if (f.ids != nullptr && !f.ids->contains(r.id)) return false;
    if (!f.user.empty() && r.submitted_by != f.user) return false;
    if (!f.selector.Matches(r.spec.labels)) return false;
    if (f.visible && !f.visible(r.spec)) return false;
    return true;
  };
  if (f.ids != nullptr) {  // a watch's changes: look them up, not a scan of every workload
    for (const std::string& id : *f.ids) {
      const WorkloadRecord* r = ledger_.FindWorkload(id);
      if (r != nullptr && match(*r)) rows.push_back(r);
    }
  } else {
    for (const auto& [id, r] : ledger_.workloads()) {
      if (match(r)) rows.push_back(&r);
    }
  }
  for (const auto& r : pending_ingest) {
    if (ledger_.FindWorkload(r.id) == nullptr && match(r)) rows.push_back(&r);
  }
  std::sort(rows.begin(), rows.end(), [](const WorkloadRecord* a, const WorkloadRecord* b) {
    return a->submitted != b->submitted ? a->submitted < b->submitted : a->id < b->id;
  });
  WorkloadListView list;
  list.total = rows.size();
  const size_t first = list.total > f.limit ? list.total - f.limit : 0;  // the newest `limit`
  list.items.reserve(list.total - first);
  for (size_t i = first; i < list.total; ++i) list.items.push_back({rows[i], StatusOf(*rows[i])});
  use(list);
}

Result<ExplainView> ControlPlane::Explain(const std::string& id_or_name) const {
  auto rec = FindRecord(id_or_name);
  if (!rec) return NotFound("workload '" + id_or_name + "' not found");
  ReaderLock lock(state_mu_);
  const WorkloadRecord& r = *rec;
  ExplainView v;
  v.id = r.id;
  v.name = r.spec.name;
  v.queue = r.spec.queue;
  v.state = r.state;
  std::string& text = v.text;
  if (std::string held = r.waiting() ? ledger_.HoldReason(r) : ""; !held.empty()) {
    // An operator's hold (fleet.h).
    v.reason = ExplainReasonView{HoldCode(r), held, std::nullopt, std::nullopt, std::nullopt};
    text = held;
  } else if (r.waiting()) {
    auto it = ledger_.pending_reasons().find(r.id);
    if (it != ledger_.pending_reasons().end()) {
      // Waited: as of now, not as of the cycle that gave the reason.
      sched::PendingReason pr = it->second;
      const Duration waited_before = pr.waited;
      pr.waited = std::max(Duration(0), clock_.Now() - r.submitted);
      if (pr.overrun.count() > 0) pr.overrun += pr.waited - waited_before;
      ExplainReasonView& reason = v.reason.emplace();
      reason.code = std::string(sched::PendingCodeName(pr.code));
      reason.message = pr.message;
      if (pr.quota) reason.quota = DescribeQuota(*pr.quota, r.spec.queue);
      if (pr.placement) reason.placement = DescribePlacement(*pr.placement);
      text = DescribePending(pr);
      reason.scheduler = std::move(pr);
    } else if (auto lr = ledger_.ledger_reasons().find(r.id); lr != ledger_.ledger_reasons().end()) {
      v.reason = ExplainReasonView{"Unschedulable", lr->second, std::nullopt, std::nullopt, std::nullopt};
      text = lr->second;
    } else {
      text = "waiting for the next scheduling cycle";
    }
  } else if (r.holds_quota()) {
    v.placed = true;
    std::map<std::string, std::vector<std::string>> by_node;
    for (const auto& p : r.placements) {
      std::string devs;
      for (const auto& d : p.devices) {
        if (!devs.empty()) devs += ",";
        devs += std::to_string(d.index) + (d.milli < 1000 ? "(" + std::to_string(d.milli) + "m)" : "");
      }
      std::string group = p.group < static_cast<int>(r.spec.spec.task_groups.size())
                              ? r.spec.spec.task_groups[p.group].name
                              : std::to_string(p.group);
      by_node[p.node].push_back(group + "[" + std::to_string(p.replica) + "]" + (devs.empty() ? "" : " devices " + devs));
      v.placements.push_back({group, p.replica, p.node, devs});
    }
    v.flavors = r.group_flavors;
    text = std::string(WorkloadStateName(r.state)) + " at " + FormatTime(r.admitted_at) + " on flavors ";
    for (size_t i = 0; i < r.group_flavors.size(); ++i) text += (i ? ", " : "") + r.group_flavors[i];
    text += "\n";
    for (const auto& [node, tasks] : by_node) {
      text += "  " + node + ": ";
      for (size_t i = 0; i < tasks.size(); ++i) text += (i ? "; " : "") + tasks[i];
      text += "\n";
    }
    if (r.state == WorkloadState::kAdmitted) {
      text += "Admitted: its tasks start when the agents of these nodes run them (nodes without an agent are "
              "simulated and run nothing).";
    }
    if (!r.message.empty()) text += "\n" + r.message;
    // The units it wants that have no place, with the scheduler's reason: the status's own list.
    if (std::optional<ElasticStatusView> elastic = ElasticStatusOf(r); elastic && !elastic->unplaced.empty()) {
      const char* unit = r.spec.kind() == WorkloadKind::kInferenceService ? "replica" : "slot";
      text += "\n" + std::to_string(elastic->unplaced.size()) + " of " + std::to_string(elastic->wanted_units) + " " +
              unit + "(s) not placed:";
      for (const UnplacedUnitView& u : elastic->unplaced) {
        text += "\n  " + std::string(unit) + " " + std::to_string(u.unit) + ": " +
                u.reason.value_or("waiting for the next scheduling cycle");
      }
      v.unplaced = std::move(elastic->unplaced);
    }
    if (std::string outside = OutsidePoolLine(r, ledger_); !outside.empty()) text += "\n" + outside;
  } else {
    text = std::string(WorkloadStateName(r.state)) + (r.message.empty() ? "" : ": " + r.message);
  }
  return v;
}

Result<StoredEventsView> ControlPlane::Events(const std::string& id_or_name) const {
  auto rec = FindRecord(id_or_name);
  if (!rec) return NotFound("workload '" + id_or_name + "' not found");
  ABACUS_ASSIGN_OR_RETURN(auto events, store_->Events(kWorkloadKind, rec->id));
  return StoredEventsView{rec->id, std::move(events)};
}

std::vector<NodeView> ControlPlane::ListNodes(const std::function<bool(const Workload&)>& visible) const {
  const std::unordered_map<std::string, Time> seen = telemetry_.LastHeard();  // node_liveness.h
  const AgentTelemetry::Utilization utilization = telemetry_.DeviceUtilization();  // last reports
  const Time now = clock_.Now();
  ReaderLock lock(state_mu_);
  auto usage = ledger_.DeviceUsage();
  DeviceHoldings holdings = HoldingsAsSeenBy(ledger_.workloads(), visible);
  std::vector<NodeView> views;
  views.reserve(ledger_.nodes().size());
  std::unordered_map<std::string, NodeView*> by_name;
  for (const auto& [name, n] : ledger_.nodes()) {
    NodeView& v = views.emplace_back();
    v.record = n;
    by_name[name] = &v;
  }
  for (const auto& [id, r] : ledger_.workloads()) {
    if (!r.holds_quota()) continue;
    for (const auto& p : r.placements) {
      auto it = by_name.find(p.node);
      if (it == by_name.end()) continue;  // a node no longer in the ledger shows nowhere
      it->second->allocated_cpu_milli += p.cpu_milli;
      it->second->allocated_memory_bytes += p.memory_bytes;
      for (const auto& [xname, amount] : ExtendedHeld(r, p)) it->second->allocated_extended[xname] += amount;
    }
  }
  for (NodeView& v : views) {
    const std::string& name = v.record.node.name;
    const auto node_usage = usage.find(name);
    const auto node_holdings = holdings.find(name);
    const auto node_util = utilization.find(name);
    for (const Device& d : v.record.node.devices) {
      DeviceUseView& u = v.devices.emplace_back();
      if (node_usage != usage.end()) {
        auto it = node_usage->second.find(d.index);
        if (it != node_usage->second.end()) u.allocated_milli = it->second;
      }
      v.free_device_milli += d.health == DeviceHealth::kHealthy ? 1000 - u.allocated_milli : 0;
      if (node_holdings != holdings.end()) {
        if (auto h = node_holdings->second.devices.find(d.index); h != node_holdings->second.devices.end()) {
          u.holding = h->second;
        }
      }
      if (node_util != utilization.end()) {
        auto it = node_util->second.find(d.index);
        if (it != node_util->second.end()) u.utilization = it->second;
      }
    }
    if (node_holdings != holdings.end()) {
      v.hidden_cpu_milli = node_holdings->second.hidden_cpu_milli;
      v.hidden_memory_bytes = node_holdings->second.hidden_memory_bytes;
    }
    auto heard = seen.find(name);
    const std::optional<Time> last_seen =
        heard == seen.end() ? std::nullopt : std::optional<Time>(heard->second);
    v.liveness = LivenessOf(v.record, last_seen, now, options_.heartbeat_interval);
  }
  return views;
}

Result<NodeView> ControlPlane::GetNode(const std::string& name,
                                       const std::function<bool(const Workload&)>& visible) const {
  for (NodeView& n : ListNodes(visible)) {
    if (n.record.node.name == name) return std::move(n);
  }
  return NotFound("node '" + name + "' not found");
}

std::vector<DeviceView> ControlPlane::ListDevices() const {
  // Who holds a device is told per caller on /api/v1/nodes only; this list names no workload.
  std::vector<DeviceView> items;
  for (const NodeView& n : ListNodes()) {
    for (size_t i = 0; i < n.devices.size(); ++i) {
      items.push_back({n.record.node.name, n.record.node.pool, n.record.node.devices[i],
                       n.devices[i].allocated_milli, n.devices[i].utilization});
    }
  }
  return items;
}

std::vector<FlavorView> ControlPlane::ListFlavors() const {
  std::vector<NodeView> nodes = ListNodes();
  ReaderLock lock(state_mu_);
  std::map<std::string, FlavorView> by;
  auto entry = [&](const std::string& f) -> FlavorView& {
    auto it = by.find(f);
    if (it == by.end()) {
      FlavorView v;
      v.name = f;
      if (auto fl = Flavor::Parse(f); fl.ok()) {
        if (const FlavorConfig* c = ledger_.config().FindFlavor(f)) {
          v.weight = static_cast<double>(c->weight_milli) / 1000.0;
          v.description = c->description;
        }
      }
      it = by.emplace(f, std::move(v)).first;
    }
    return it->second;
  };
  for (const FlavorConfig* c : ledger_.config().flavors()) entry(c->flavor.name());
  for (const NodeView& n : nodes) {
    std::set<std::string> seen;
    for (size_t i = 0; i < n.devices.size(); ++i) {
      const Device& d = n.record.node.devices[i];
      FlavorView& e = entry(d.flavor.name());
      e.devices += 1;
      if (d.health == DeviceHealth::kHealthy) e.free_milli += 1000 - n.devices[i].allocated_milli;
      if (seen.insert(d.flavor.name()).second) e.nodes += 1;
    }
  }
  std::vector<FlavorView> items;
  for (auto& [name, v] : by) items.push_back(std::move(v));
  return items;
}

std::vector<QueueView> ControlPlane::ListQueues() const {
  ReaderLock lock(state_mu_);
  struct Counts {
    int pending = 0, admitted = 0;
    std::map<std::string, int64_t> used;  // resource name → ledger amount
  };
  std::map<std::string, Counts> counts;
  for (const auto& [id, r] : ledger_.workloads()) {
    Counts& c = counts[r.spec.queue];
    if (r.waiting()) ++c.pending;
    if (r.holds_quota()) {
      ++c.admitted;
      for (const auto& p : r.placements) {
        ForEachQuotaUse(HoldOf(r, p), [&](const std::string& res, int64_t amount) { c.used[res] += amount; });
      }
    }
  }
  std::vector<QueueView> items;
  std::vector<meter::UseNow> use;
  for (const Queue* q : ledger_.config().queues()) {
    QueueView& v = items.emplace_back();
    v.queue = *q;
    Counts& c = counts[q->name];
    v.pending = c.pending;
    v.admitted = c.admitted;
    auto suspended = ledger_.suspended_queues().find(q->name);  // abacus suspend queue
    if (suspended != ledger_.suspended_queues().end()) v.suspended = suspended->second;
    for (const auto& quota : q->quotas) {
      QuotaUseView& u = v.usage.emplace_back();
      u.resource = quota.resource.Name();
      u.used = c.used[u.resource];
      u.nominal = LedgerAmount(quota.resource, quota.nominal);
      if (quota.borrowing_limit) u.borrowing_limit = LedgerAmount(quota.resource, *quota.borrowing_limit);
      use.push_back({q->name, u.resource, u.used});
    }
  }
  // Borrowed from whom, lent to whom (quota_view.h).
  const auto borrowing = BorrowingNowByQueue(ledger_.config(), use);
  for (QueueView& v : items) {
    for (QuotaUseView& u : v.usage) {
      auto it = borrowing.find({v.queue.name, u.resource});
      if (it != borrowing.end()) u.borrowing = it->second;
    }
  }
  return items;
}

Result<QueueView> ControlPlane::GetQueue(const std::string& name) const {
  for (QueueView& q : ListQueues()) {
    if (q.queue.name == name) return std::move(q);
  }
  return NotFound("queue '" + name + "' not found");
}

ConfigListView ControlPlane::ListConfig(const std::string& kind) const {
  ConfigListView out;
  out.kind = kind;
  if (kind == "cluster") {
    out.clusters = ListClusters();
    return out;
  }
  ReaderLock lock(state_mu_);
  auto add = [&](const auto& object) -> ConfigItemView& {
    ConfigItemView& item = out.items.emplace_back();
    item.object = SpecObject(object);
    if constexpr (requires { object.name; }) {
      item.name = object.name;
    } else {
      item.name = object.flavor.name();  // a Flavor object
    }
    return item;
  };
  if (kind == "priorityclass") {
    const std::vector<const PriorityClass*> configured = ledger_.config().priority_classes();
    for (const PriorityClass* pc : ledger_.config().AllPriorityClasses()) {
      const bool is_default = std::find(configured.begin(), configured.end(), pc) == configured.end();
      add(*pc).default_class = is_default;
    }
    return out;
  }
  std::map<std::string, std::vector<std::string>> projects_of;  // tenant → its project names, built once
  if (kind == "tenant") {
    for (const Project* p : ledger_.config().projects()) projects_of[p->tenant].push_back(p->name);
  }
  std::vector<const PoolConfig*> pools;
  for (const auto& [key, obj] : ledger_.config_objects()) {
    if (StoreKindOf(obj) != kind) continue;
    std::visit([&](const auto& o) { add(o); }, obj);
    ConfigItemView& item = out.items.back();
    if (const auto* project = std::get_if<Project>(&obj)) item.tenant = project->tenant;
    if (kind == "tenant") {
      auto it = projects_of.find(item.name);
      item.projects = it == projects_of.end() ? std::vector<std::string>{} : std::move(it->second);
    }
    if (const auto* pool = std::get_if<PoolConfig>(&obj)) pools.push_back(pool);
  }
  if (kind == "pool") {  // each pool's tenants and nodes (quota_view.h)
    std::vector<PoolStatus> statuses = PoolStatuses(ledger_, pools);
    for (size_t i = 0; i < statuses.size(); ++i) {
      if (i >= out.items.size()) {  // named by nodes only
        ConfigItemView& item = out.items.emplace_back();
        item.name = statuses[i].name;
      }
      out.items[i].pool = std::move(statuses[i]);
    }
  }
  if (kind == "reservation") {  // each one's window in force or next and the nodes it holds
    const auto held = ledger_.ReservationNodes();
    const auto all = ledger_.config().reservations();
    for (ConfigItemView& item : out.items) {
      for (size_t i = 0; i < all.size() && i < held.size(); ++i) {
        if (all[i]->name == item.name) item.reservation = ReservationStatusOf(*all[i], held[i], clock_.Now());
      }
    }
  }
  return out;
}

Result<ConfigListView> ControlPlane::GetConfig(const std::string& kind, const std::string& name) const {
  ConfigListView all = ListConfig(kind);
  ConfigListView one;
  one.kind = kind;
  for (ClusterView& c : all.clusters) {
    if (c.name != name) continue;
    one.clusters.push_back(std::move(c));
    return one;
  }
  for (ConfigItemView& o : all.items) {
    std::string n = kind == "project" ? o.tenant + "/" + o.name : o.name;
    if (n == name || (kind == "project" && o.name == name)) {
      one.items.push_back(std::move(o));
      return one;
    }
  }
  return NotFound(kind + " '" + name + "' not found");
}

}  // namespace abacus::server
