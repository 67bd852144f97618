#include "server/read_views_json.h"

#include "meter/price_list_codec.h"
#include "server/control_plane.h"
#include "server/result_json.h"
#include "server/shares_api.h"
#include "server/write_views_json.h"
#include "workload/documents.h"

namespace abacus::server {

using nlohmann::json;

namespace {

template <typename View, typename Encode>
json Items(const std::vector<View>& views, Encode encode) {
  json items = json::array();
  for (const View& v : views) items.push_back(encode(v));
  return {{"items", std::move(items)}};
}

// [{unit, reason}] of the units an elastic workload wants that have no place (status, explain).
json UnplacedJson(const std::vector<UnplacedUnitView>& units) {
  json out = json::array();
  for (const UnplacedUnitView& u : units) {
    json entry = {{"unit", u.unit}};
    if (u.reason) entry["reason"] = *u.reason;
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

json QueueJson(const QueueView& q) {
  json j = abacus::ToJson(SpecObject(q.queue));
  j["pending"] = q.pending;
  j["admitted"] = q.admitted;
  if (q.suspended) j["suspended"] = {{"by", q.suspended->by}, {"since", FormatTime(q.suspended->since)}};
  json usage = json::array();
  for (const QuotaUseView& u : q.usage) {
    json entry = {{"resource", u.resource}, {"used", u.used}, {"nominal", u.nominal}};
    if (u.borrowing_limit) entry["borrowingLimit"] = *u.borrowing_limit;
    usage.push_back(BorrowingNowJson(u.borrowing, std::move(entry)));
  }
  j["usage"] = std::move(usage);
  return j;
}

Result<json> QueueJson(const Result<QueueView>& q) {
  return EncodeResult(q, [](const QueueView& v) { return QueueJson(v); });
}

json QueuesJson(const std::vector<QueueView>& queues) {
  return Items(queues, [](const QueueView& q) { return QueueJson(q); });
}

json NodeJson(const NodeView& n) {
  json j = ToJson(n.record);
  size_t i = 0;
  for (auto& d : j["devices"]) {
    const DeviceUseView& use = n.devices[i++];
    d["allocatedMilli"] = use.allocated_milli;
    json holders = json::array();
    for (const DeviceHolder& x : use.holding.holders) {
      holders.push_back({{"workload", x.workload}, {"name", x.name}, {"milli", x.milli}});
    }
    d["holders"] = std::move(holders);
    d["hiddenMilli"] = use.holding.hidden_milli;
    if (use.utilization) d["utilization"] = *use.utilization;
  }
  j["allocatedCpuMilli"] = n.allocated_cpu_milli;
  j["allocatedMemoryBytes"] = n.allocated_memory_bytes;
  if (!n.allocated_extended.empty()) j["allocatedExtended"] = n.allocated_extended;
  j["freeDeviceMilli"] = n.free_device_milli;
  j["hiddenCpuMilli"] = n.hidden_cpu_milli;
  j["hiddenMemoryBytes"] = n.hidden_memory_bytes;
  AddLiveness(j, n.liveness);
  return j;
}

Result<json> NodeJson(const Result<NodeView>& n) {
  return EncodeResult(n, [](const NodeView& v) { return NodeJson(v); });
}

json NodesJson(const std::vector<NodeView>& nodes) {
  return Items(nodes, [](const NodeView& n) { return NodeJson(n); });
}

json DevicesJson(const std::vector<DeviceView>& devices) {
  return Items(devices, [](const DeviceView& d) {
    json j = DeviceJson(d.device);
    j["allocatedMilli"] = d.allocated_milli;
    if (d.utilization) j["utilization"] = *d.utilization;
    j["node"] = d.node;
    j["pool"] = d.pool;
    return j;
  });
}

json FlavorJson(const FlavorView& f) {
  return {{"name", f.name},           {"weight", f.weight}, {"devices", f.devices},
          {"freeMilli", f.free_milli}, {"nodes", f.nodes},   {"description", f.description}};
}

json FlavorsJson(const std::vector<FlavorView>& flavors) {
  return Items(flavors, [](const FlavorView& f) { return FlavorJson(f); });
}

json ClustersJson(const std::vector<ClusterView>& clusters) {
  return Items(clusters, [](const ClusterView& c) {
    json j =
        c.declared ? abacus::ToJson(SpecObject(*c.declared)) : json{{"kind", "Cluster"}, {"name", c.name}};
    j["declared"] = c.declared.has_value();
    j["nodes"] = c.nodes;
    j["readyNodes"] = c.ready_nodes;
    if (c.nodes > 0) {
      j["cpuMilli"] = c.cpu_milli;
      j["pools"] = c.pools;
    }
    json devices = json::object();
    for (const auto& [flavor, d] : c.devices) {
      json f = {{"total", d.total}, {"allocatedMilli", d.allocated_milli}};
      if (d.unhealthy > 0) f["unhealthy"] = d.unhealthy;
      devices[flavor] = std::move(f);
    }
    j["devices"] = std::move(devices);
    return j;
  });
}

namespace {

// A workload's view; `spec`: with its "spec" (a list's rows leave it out).
json WorkloadJsonOf(const WorkloadRecord& r, const WorkloadStatusView& s, bool spec) {
  json j = spec ? ToJson(r) : ToJsonWithoutSpec(r);
  // Uploaded results files are read through GET /api/v1/evaluations; here only their size.
  for (json& p : j["placements"]) {
    if (!p.contains("results")) continue;
    p["resultsBytes"] = p["results"].get_ref<const std::string&>().size();
    p.erase("results");
  }
  j["submittedAt"] = FormatTime(r.submitted);
  if (ToMicros(r.admitted_at) != 0) j["admittedAt"] = FormatTime(r.admitted_at);
  if (ToMicros(r.finished_at) != 0) j["finishedAt"] = FormatTime(r.finished_at);
  if (s.pending_reason) {
    json reason = {{"code", s.pending_reason->code}, {"message", s.pending_reason->message}};
    if (s.pending_reason->position) reason["position"] = *s.pending_reason->position;
    j["pendingReason"] = std::move(reason);
  }
  json status = s.controller;
  if (s.elastic) {
    status["wantedUnits"] = s.elastic->wanted_units;
    status["placedUnits"] = s.elastic->placed_units;
    if (!s.elastic->unplaced.empty()) status["unplaced"] = UnplacedJson(s.elastic->unplaced);
    if (const auto& o = s.elastic->outside_pool) {
      status["outsidePool"] = {{"pool", o->pool}, {"replicas", o->replicas}, {"message", o->message}};
    }
  }
  if (!status.empty()) j["status"] = std::move(status);
  return j;
}

}  // namespace

json WorkloadViewJson(const WorkloadRecord& r, const WorkloadStatusView& status) {
  return WorkloadJsonOf(r, status, true);
}

json WorkloadViewJson(const WorkloadView& w) { return WorkloadJsonOf(w.record, w.status, true); }

Result<json> WorkloadViewJson(const Result<WorkloadView>& w) {
  return EncodeResult(w, [](const WorkloadView& v) { return WorkloadViewJson(v); });
}

json WorkloadListJson(const WorkloadListView& list) {
  json items = json::array();
  for (const WorkloadListView::Row& row : list.items) {
    json v = WorkloadJsonOf(*row.record, row.status, false);
    if (!row.record->spec.labels.empty()) v["labels"] = row.record->spec.labels;  // for selectors (cancel -l)
    items.push_back(std::move(v));
  }
  return {{"items", std::move(items)}, {"total", list.total}};
}

json ListWorkloadsJson(const ControlPlane& cp, const WorkloadFilter& filter) {
  json out;
  cp.ListWorkloads(filter, [&out](const WorkloadListView& list) { out = WorkloadListJson(list); });
  return out;
}

Result<json> ExplainJson(const Result<ExplainView>& explain) {
  if (!explain.ok()) return explain.status();
  const ExplainView& v = *explain;
  json j = {{"id", v.id}, {"name", v.name}, {"queue", v.queue}, {"state", WorkloadStateName(v.state)}};
  if (v.reason) {
    json reason = {{"code", v.reason->code}, {"message", v.reason->message}};
    if (const auto& pr = v.reason->scheduler) {
      reason["position"] = pr->position;
      reason["ahead"] = pr->ahead;
      reason["aheadIds"] = pr->ahead_ids;
      reason["basePriority"] = pr->base_priority;
      reason["effectivePriority"] = pr->effective_priority;
      reason["waitedSeconds"] = std::chrono::duration_cast<std::chrono::seconds>(pr->waited).count();
      if (!pr->preemption.empty()) reason["preemption"] = pr->preemption;
      if (!pr->fair_share.empty()) reason["fairShare"] = pr->fair_share;
    }
    if (v.reason->quota) reason["quota"] = *v.reason->quota;
    if (v.reason->placement) reason["placement"] = *v.reason->placement;
    j["reason"] = std::move(reason);
  }
  if (v.placed) {
    j["placements"] = PlacementsJson(v.placements);
    j["flavors"] = v.flavors;
  }
  if (!v.unplaced.empty()) j["unplaced"] = UnplacedJson(v.unplaced);
  j["text"] = v.text;
  return j;
}

namespace {

json EventItemsJson(const std::vector<EventRecord>& events) {
  json items = json::array();
  for (const EventRecord& e : events) {
    items.push_back({{"seq", e.seq},
                     {"time", FormatTime(FromMicros(e.time_us))},
                     {"timeUs", e.time_us},
                     {"type", e.type},
                     {"details", json::parse(e.json, nullptr, false)}});
  }
  return items;
}

}  // namespace

Result<json> WorkloadEventsJson(const Result<StoredEventsView>& events) {
  if (!events.ok()) return events.status();
  return json{{"id", events->owner}, {"items", EventItemsJson(events->items)}};
}

Result<json> NodeEventsJson(const Result<StoredEventsView>& events) {
  if (!events.ok()) return events.status();
  return json{{"node", events->owner}, {"items", EventItemsJson(events->items)}};
}

Result<json> RevisionsJson(const Result<RevisionsView>& revisions) {
  if (!revisions.ok()) return revisions.status();
  json items = json::array();
  for (const RevisionRecord& v : revisions->items) {
    items.push_back({{"revision", v.revision},
                     {"version", v.version},
                     {"image", v.image},
                     {"command", v.command},
                     {"env", v.env},
                     {"at", FormatTime(v.at)},
                     {"by", v.by},
                     {"diff", v.diff}});
  }
  return json{{"id", revisions->id},
              {"name", revisions->name},
              {"revision", items.back()["revision"]},
              {"items", std::move(items)}};
}

json PriceListsJson(const std::vector<meter::PriceList>& lists) {
  return Items(lists, [](const meter::PriceList& p) { return json(meter::EncodePriceList(p)); });
}

namespace {

json ConfigObjectJson(const ConfigItemView& item) {
  json j = item.object ? abacus::ToJson(*item.object) : json{{"kind", "Pool"}, {"name", item.name}};
  if (item.default_class) j["default"] = true;
  if (item.projects) j["projects"] = *item.projects;
  if (item.pool) {
    j["tenantsAllowed"] = item.pool->tenants_allowed;
    j["nodes"] = item.pool->nodes;
    j["declared"] = item.pool->declared;
  }
  if (const auto& r = item.reservation) {
    j["state"] = r->state;
    if (r->window) {
      j["window"] = {{"start", FormatTime(r->window->start)}, {"end", FormatTime(r->window->end)}};
    }
    j["nodesHeld"] = r->nodes_held;
  }
  return j;
}

}  // namespace

json ConfigListJson(const ConfigListView& list) {
  if (list.kind == "cluster") return ClustersJson(list.clusters);
  return Items(list.items, ConfigObjectJson);
}

Result<json> ConfigItemJson(const Result<ConfigListView>& one) {
  if (!one.ok()) return one.status();
  return ConfigListJson(*one)["items"][0];
}

json SharesJson(const SharesView& shares) {
  return SharesJson(shares.shares, shares.tenant_of, shares.half_life);
}

}  // namespace abacus::server
