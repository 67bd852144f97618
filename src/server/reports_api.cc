// ControlPlane: metering reports (/api/v1/reports/*, `abacus report`) and price lists. The
// reports themselves are pure functions in src/meter/; this file gathers their inputs from the
// store (usage intervals, journals) and the ledger (workloads, queues, nodes, utilization).
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "common/log.h"
#include "common/mutex.h"
#include "common/time_spec.h"
#include "meter/evidence.h"
#include "meter/price_list_codec.h"
#include "meter/reports.h"
#include "sched/tenancy_snapshot.h"
#include "sched/window_reservation.h"
#include "server/control_plane.h"
#include "server/node_history.h"
#include "server/quota_view.h"
#include "server/reservations.h"
#include "workload/label_selector.h"

namespace abacus::server {
namespace {

using nlohmann::json;

constexpr char kPriceListKind[] = "pricelist";

// Calls `f` for every workload a reader may see: the ledger's, then those whose submission was
// answered but the loop has not taken in yet (ListWorkloads reads the same two, under the same
// lock held shared): a report made right after a 201 counts the workload.
template <typename F>
void ForEachAnswered(const Ledger& ledger, const LoopInbox& inbox, F f) {
  for (const auto& [id, r] : ledger.workloads()) f(r);
  for (const WorkloadRecord& r : inbox.Submitted()) f(r);
}

meter::WorkloadSummary Summary(const WorkloadRecord& r) {
  meter::WorkloadSummary s;
  s.id = r.id;
  s.name = r.spec.name;
  s.tenant = r.spec.tenant();
  s.project = r.spec.project;
  s.queue = r.spec.queue;
  s.kind = std::string(WorkloadKindName(r.spec.kind()));
  s.flavor = "cpu";
  for (const auto& f : r.group_flavors) {
    if (f != "cpu") s.flavor = f;
  }
  if (s.flavor == "cpu") {
    for (const auto& g : r.spec.spec.task_groups) {
      if (g.resources.accelerators) s.flavor = g.resources.accelerators->flavor.text();
    }
  }
  s.priority_class = r.spec.priority_class;
  if (auto m = r.spec.labels.find("model"); m != r.spec.labels.end()) s.model = m->second;
  s.submitted = r.submitted;
  if (ToMicros(r.first_admitted_at) != 0) s.admitted = r.first_admitted_at;
  else if (ToMicros(r.admitted_at) != 0) s.admitted = r.admitted_at;
  if (ToMicros(r.finished_at) != 0) s.finished = r.finished_at;
  s.state = std::string(WorkloadStateName(r.state));
  s.failure_reason = r.failure_reason;
  s.user = r.submitted_by;
  return s;
}

// Names the workloads of a report: its name, or "name (id)" where two or more of `workloads`
// share the name. Fills each summary's label; returns id → label for the usage intervals.
std::unordered_map<std::string, std::string> LabelWorkloads(std::vector<meter::WorkloadSummary>& workloads) {
  std::unordered_map<std::string, int> named;
  for (const auto& w : workloads) named[w.name]++;
  std::unordered_map<std::string, std::string> labels;
  for (auto& w : workloads) {
    w.label = w.name.empty() ? w.id : named[w.name] > 1 ? w.name + " (" + w.id + ")" : w.name;
    labels[w.id] = w.label;
  }
  return labels;
}

}  // namespace

std::vector<meter::PriceList> ControlPlane::ListPriceLists() const {
  ReaderLock lock(state_mu_);
  std::vector<meter::PriceList> items;
  for (const auto& [name, p] : price_lists_) items.push_back(p);
  return items;
}

Status ControlPlane::LoadPriceLists() {
  meter::RegisterPriceListKind();
  ABACUS_ASSIGN_OR_RETURN(auto records, store_->List(kPriceListKind));
  for (const auto& rec : records) {
    Diagnostics diags;
    SpecContext ctx("store", &diags);
    auto p = meter::DecodePriceListJson(json::parse(rec.json, nullptr, false), ctx);
    if (!p) {
      ABACUS_LOG_ERROR("stored price list {}: {}", rec.key, diags.ToString());
      continue;
    }
    price_lists_[p->name] = *p;
  }
  return Status::OK();
}

Status ControlPlane::StagePriceLists(const std::vector<ExtensionDocument>& docs, WriteBatch& batch,
                                     std::vector<AppliedView>& out, std::vector<meter::PriceList>& applied) {
  Diagnostics diags;
  for (const auto& d : docs) {
    if (d.kind != "PriceList") {
      diags.Add(d.source.file, d.source.line, "kind", "kind " + d.kind + " cannot be applied here");
      continue;
    }
    SpecContext ctx(d.source.file, &diags);
    auto p = meter::DecodePriceListJson(d.object, ctx);
    if (!p) continue;
    std::string doc = json(meter::EncodePriceList(*p)).dump();
    std::string action = "created";
    if (auto it = price_lists_.find(p->name); it != price_lists_.end()) {
      action = json(meter::EncodePriceList(it->second)).dump() == doc ? "unchanged" : "configured";
    }
    if (action != "unchanged") batch.Put(kPriceListKind, p->name, doc);  // audited per request
    out.push_back(AppliedView{"PriceList", p->name, action, std::nullopt, std::nullopt});
    applied.push_back(std::move(*p));
  }
  return diags.empty() ? Status::OK() : diags.ToStatus();
}

const meter::PriceList* ControlPlane::PickPriceList(const std::string& name, Status& problem) const {
  if (!name.empty()) {
    auto it = price_lists_.find(name);
    if (it == price_lists_.end()) problem = NotFound("price list '" + name + "' not found");
    return it == price_lists_.end() ? nullptr : &it->second;
  }
  if (auto it = price_lists_.find("default"); it != price_lists_.end()) return &it->second;
  if (price_lists_.size() == 1) return &price_lists_.begin()->second;
  return nullptr;
}

Result<ControlPlane::ReportOutput> ControlPlane::Report(const std::string& kind, const ReportQuery& q) const {
  Time now = clock_.Now();
  meter::ReportWindow window;
  window.now = now;
  window.to = now;
  window.from = now - std::chrono::hours(24 * 30);
  // --from/--to take what `audit --since` takes: times, dates, "7d", "yesterday" (time_spec.h).
  if (!q.from.empty()) {
    auto from = ParseTimeSpec(q.from, now);
    if (!from.ok()) return InvalidArgument("from: " + from.status().message());
    window.from = *from;
  }
  if (!q.to.empty()) {
    auto to = ParseTimeSpec(q.to, now);
    if (!to.ok()) return InvalidArgument("to: " + to.status().message());
    window.to = *to;
  }
  if (window.from >= window.to) {
    return InvalidArgument("from (" + FormatTime(window.from) + ") must be before to (" + FormatTime(window.to) + ")");
  }
  ABACUS_ASSIGN_OR_RETURN(meter::Grouping by, meter::ParseGrouping(q.by));

  // Inputs.
  ABACUS_ASSIGN_OR_RETURN(auto intervals, meter::ReadUsage(*store_, window.from, window.to));
  std::vector<meter::WorkloadSummary> workloads;
  std::vector<meter::QueueQuota> quotas;
  std::vector<meter::InventoryRow> inventory;
  std::map<std::string, std::map<std::string, int64_t>> node_devices;  // for the capacity spans
  std::map<std::string, std::pair<std::string, std::string>> node_places;  // node → {cluster, pool}
  std::vector<meter::UtilizationSample> samples;
  Status price_problem;
  const meter::PriceList* prices = nullptr;
  {
    ReaderLock lock(state_mu_);
    prices = PickPriceList(q.prices, price_problem);
    ForEachAnswered(ledger_, inbox_, [&](const WorkloadRecord& r) { workloads.push_back(Summary(r)); });
    quotas = BorrowingQuotas(ledger_.config(), true);  // quota_view.h
    std::map<std::tuple<std::string, std::string, std::string>, meter::InventoryRow> inv;
    for (const auto& [name, n] : ledger_.nodes()) {
      node_devices[name] = DevicesByFlavor(n);
      node_places[name] = {n.node.cluster, n.node.pool};
      std::set<std::string> flavors;
      for (const Device& d : n.node.devices) {
        auto& row = inv[{n.node.cluster, n.node.pool, d.flavor.name()}];
        row.cluster = n.node.cluster;
        row.pool = n.node.pool;
        row.flavor = d.flavor.name();
        row.devices++;
        if (d.health == DeviceHealth::kHealthy) row.healthy_devices++;
        if (flavors.insert(d.flavor.name()).second) row.nodes++;
      }
      if (n.node.devices.empty()) {
        auto& row = inv[{n.node.cluster, n.node.pool, "cpu"}];
        row.cluster = n.node.cluster;
        row.pool = n.node.pool;
        row.flavor = "cpu";
        row.nodes++;
      }
    }
    for (auto& [key, row] : inv) inventory.push_back(row);
  }
  if (!price_problem.ok()) return price_problem;
  samples = telemetry_.Samples(window.from - std::chrono::minutes(10), window.to);
  // Inference shortages: a service waiting for admission wants all its replicas and has none
  // (from submission, or its last requeue, to admission — or now); the inference controller adds
  // partial shortages to the "shortages" journal.
  std::vector<meter::ShortageInterval> shortages;
  {
    ReaderLock lock(state_mu_);
    ForEachAnswered(ledger_, inbox_, [&](const WorkloadRecord& r) {
      const InferenceSpec* inf = r.spec.inference();
      if (inf == nullptr) return;
      meter::ShortageInterval sh;
      sh.service_id = r.id;
      sh.service_name = r.spec.name;
      sh.tenant = r.spec.tenant();
      sh.queue = r.spec.queue;
      sh.flavor = Summary(r).flavor;
      sh.wanted = inf->replicas;
      sh.available = 0;
      sh.start = r.submitted;
      if (ToMicros(r.first_admitted_at) != 0) {
        sh.end = r.first_admitted_at;
      } else if (IsTerminal(r.state)) {
        sh.end = r.finished_at;
      }
      if (sh.end && *sh.end <= sh.start) return;
      shortages.push_back(std::move(sh));
    });
  }
  ABACUS_ASSIGN_OR_RETURN(auto recorded, store_->Journal("shortages", 0, 1000000));
  for (const auto& rec : recorded) {
    json j = json::parse(rec.json, nullptr, false);
    if (!j.is_object()) continue;
    meter::ShortageInterval sh;
    sh.service_id = j.value("service", "");
    sh.service_name = j.value("name", "");
    sh.tenant = j.value("tenant", "");
    sh.queue = j.value("queue", "");
    sh.flavor = j.value("flavor", "");
    sh.wanted = j.value("wanted", 0);
    sh.available = j.value("available", 0);
    sh.start = FromMicros(j.value("startUs", int64_t{0}));
    if (j.contains("endUs")) sh.end = FromMicros(j["endUs"].get<int64_t>());
    shortages.push_back(std::move(sh));
  }

  // A tenant admin's report holds its tenants' rows only (issue 23): each row by the tenant that
  // owns it. The inventory, capacity and utilization of the nodes are cluster-level (every user
  // reads the nodes).
  if (!q.label_selector.empty()) {
    ABACUS_ASSIGN_OR_RETURN(LabelSelector selector, LabelSelector::Parse(q.label_selector));
    std::unordered_set<std::string> chosen;
    {
      ReaderLock lock(state_mu_);
      ForEachAnswered(ledger_, inbox_, [&](const WorkloadRecord& r) {
        if (selector.Matches(r.spec.labels)) chosen.insert(r.id);
      });
    }
    std::erase_if(intervals, [&](const meter::UsageInterval& iv) { return !chosen.count(iv.workload_id); });
    std::erase_if(workloads, [&](const meter::WorkloadSummary& w) { return !chosen.count(w.id); });
    std::erase_if(shortages, [&](const meter::ShortageInterval& sh) { return !chosen.count(sh.service_id); });
  }
  const auto& visible = q.tenant_visible;
  std::vector<meter::QueueQuota> all_quotas = quotas;
  if (visible) {
    std::erase_if(intervals, [&](const meter::UsageInterval& iv) { return !visible(iv.tenant); });
    std::erase_if(workloads, [&](const meter::WorkloadSummary& w) { return !visible(w.tenant); });
    std::erase_if(quotas, [&](const meter::QueueQuota& qq) { return !visible(qq.tenant); });
    std::erase_if(shortages, [&](const meter::ShortageInterval& sh) { return !visible(sh.tenant); });
  }
  {
    // Reports name workloads, and who submitted them (intervals stored before issue 23 lack it).
    std::unordered_map<std::string, std::string> labels = LabelWorkloads(workloads);
    std::unordered_map<std::string, std::string> users;
    for (const auto& w : workloads) users[w.id] = w.user;
    for (auto& iv : intervals) {
      if (auto it = labels.find(iv.workload_id); it != labels.end()) iv.workload_label = it->second;
      if (iv.user.empty()) {
        if (auto it = users.find(iv.workload_id); it != users.end()) iv.user = it->second;
      }
    }
  }

  ReportOutput out;
  if (kind == "evidence") {
    std::vector<meter::PreemptionEvent> preemptions;
    ABACUS_ASSIGN_OR_RETURN(auto journal, store_->Journal("preemptions", 0, 1000000));
    for (const auto& rec : journal) {
      json j = json::parse(rec.json, nullptr, false);
      if (!j.is_object() || FromMicros(rec.time_us) < window.from || FromMicros(rec.time_us) >= window.to) continue;
      meter::PreemptionEvent e;
      e.time = FromMicros(rec.time_us);
      e.reason = j.value("reason", "");
      e.workload_id = j.value("workload", "");
      e.tenant = j.value("tenant", "");
      e.queue = j.value("queue", "");
      e.flavor = j.value("flavor", "");
      e.device_milli = j.value("deviceMilli", int64_t{0});
      e.by_workload = j.value("by", "");
      e.by_queue = j.value("byQueue", "");
      if (visible && !visible(e.tenant)) continue;
      preemptions.push_back(std::move(e));
    }
    std::vector<meter::AuditEntrySummary> audit;
    ABACUS_ASSIGN_OR_RETURN(auto entries, store_->Journal("audit", 0, 1000000));
    for (const auto& rec : entries) {
      json j = json::parse(rec.json, nullptr, false);
      if (!j.is_object() || FromMicros(rec.time_us) < window.from || FromMicros(rec.time_us) >= window.to) continue;
      // Hash-chained entries (govern/audit.h) carry {"object": {kind, name}}.
      json obj = j.contains("object") && j["object"].is_object() ? j["object"] : j;
      if (visible && !visible(j.value("tenant", ""))) continue;
      audit.push_back({FromMicros(rec.time_us), j.value("actor", "user admin"), j.value("action", ""),
                       obj.value("kind", ""), obj.value("name", ""), j.value("result", "ok")});
    }
    ABACUS_ASSIGN_OR_RETURN(auto capacity, ReadCapacitySpans(*store_, node_devices));
    meter::EvidenceInput in;
    in.window = window;
    in.generated_at = now;
    in.inventory = inventory;
    in.capacity = capacity;
    in.quotas = quotas;
    in.intervals = intervals;
    in.workloads = workloads;
    in.preemptions = preemptions;
    in.utilization = samples;
    in.shortages = shortages;
    in.audit = audit;
    if (auto chain = governance_->VerifyAudit(); chain.ok()) {
      // The chain is verified whole; its size is the whole cluster's activity, not one tenant's.
      in.audit_chain = {true, chain->ok, visible ? -1 : chain->checked, chain->reason};
    }
    in.prices = prices;
    std::string format = q.format.empty() ? "md" : q.format;
    ABACUS_ASSIGN_OR_RETURN(auto f, meter::ParseEvidenceFormat(format));
    out.body = meter::RenderEvidence(in, f);
    out.content_type = f == meter::EvidenceFormat::kHtml   ? "text/html; charset=utf-8"
                       : f == meter::EvidenceFormat::kJson ? "application/json"
                                                           : "text/markdown; charset=utf-8";
    return out;
  }
  meter::Table table;
  if (kind == "usage") {
    ABACUS_ASSIGN_OR_RETURN(table, meter::UsageReport(intervals, {window, by, prices}));
  } else if (kind == "wait") {
    ABACUS_ASSIGN_OR_RETURN(table, meter::WaitReport(workloads, {window, by}));
  } else if (kind == "failures") {
    ABACUS_ASSIGN_OR_RETURN(table, meter::FailureReport(workloads, {window, by}));
  } else if (kind == "idle") {
    meter::IdleReportOptions o;
    o.window = window;
    o.by = by;
    o.prices = prices;
    if (q.threshold >= 0) o.threshold = q.threshold;
    ABACUS_ASSIGN_OR_RETURN(table, meter::IdleReport(intervals, samples, o));
  } else if (kind == "shortages") {
    ABACUS_ASSIGN_OR_RETURN(table, meter::ShortageReport(shortages, {window, by}));
  } else if (kind == "borrowing") {
    if (!visible) {
      table = meter::BorrowingReport(intervals, quotas, window);
    } else {
      // Every tenant's usage makes the flows; a tenant admin sees those its queues take part in.
      ABACUS_ASSIGN_OR_RETURN(auto every, meter::ReadUsage(*store_, window.from, window.to));
      table = meter::BorrowingReport(every, all_quotas, window);
      std::map<std::string, std::string> tenant_of;
      for (const auto& qq : all_quotas) tenant_of[qq.queue] = qq.tenant;
      auto mine = [&](const std::string& queue) {
        auto it = tenant_of.find(queue);
        return it != tenant_of.end() && visible(it->second);
      };
      std::erase_if(table.rows, [&](const std::vector<std::string>& row) { return !mine(row[2]) && !mine(row[3]); });
    }
  } else if (kind == "utilization") {
    // Allocation per flavor and pool sums every tenant's work: not for a tenant-scoped caller.
    if (visible) return PermissionDenied("the utilization report covers every tenant's work: admins and unscoped viewers only");
    ABACUS_ASSIGN_OR_RETURN(auto capacity, ReadCapacitySpans(*store_, node_devices));
    meter::UtilizationReportOptions o;
    o.window = window;
    o.by = by;
    o.node_places = std::move(node_places);
    {
      ReaderLock lock(state_mu_);
      o.reserved = ReservedSpans(ledger_, window);
    }
    ABACUS_ASSIGN_OR_RETURN(table, meter::UtilizationReport(capacity, intervals, o));
  } else {
    return NotFound("report '" + kind +
                    "': expected usage, wait, failures, idle, shortages, borrowing, utilization or evidence");
  }
  std::string format = q.format.empty() ? "json" : q.format;
  ABACUS_ASSIGN_OR_RETURN(auto f, meter::ParseTableFormat(format));
  if (f == meter::TableFormat::kJson) {
    // JSON says in which currency its cost columns are (the price list the report used).
    auto j = meter::TableToJson(table);
    if (prices != nullptr) j["currency"] = prices->currency;
    out.body = j.dump(2) + "\n";
  } else {
    out.body = meter::RenderTable(table, f);
  }
  out.content_type = f == meter::TableFormat::kJson  ? "application/json"
                     : f == meter::TableFormat::kCsv ? "text/csv; charset=utf-8"
                                                     : "text/plain; charset=utf-8";
  return out;
}

}  // namespace abacus::server
