// Evidence sections over activity (waits, failures, preemptions, shortages, interventions,
// audit) and the assembly of the whole document.
#include <algorithm>
#include <array>
#include <map>
#include <set>

#include "meter/evidence_model.h"
#include "meter/reports.h"
#include "meter/units.h"
#include "model/resources.h"

namespace abacus::meter {
namespace {

constexpr std::array<std::string_view, 15> kManualActions = {
    "cancel", "override", "quota-change", "cordon",  "uncordon", "drain",           "delete", "scale",
    "suspend", "resume",  "requeue",      "preempt", "hold",     "priority-change", "release"};

Grouping By(std::initializer_list<GroupKey> keys) { return Grouping{keys, TimeBucket::kNone}; }

EvidenceSection WaitSection(const EvidenceInput& in) {
  EvidenceSection s{"waits", "Queue waits", "", {}, {}};
  Table t = WaitReport(in.workloads, {in.window, By({GroupKey::kQueue, GroupKey::kFlavor})}).value();
  t.title.clear();  // the section heading says it
  s.text = "Time from submission to first admission, by queue and flavor (nearest-rank percentiles).";
  s.charts.push_back(ChartOf(t, "p95 queue wait", "s", {"queue", "flavor"}, "p95Seconds"));
  s.tables.push_back(std::move(t));
  return s;
}

EvidenceSection FailureSection(const EvidenceInput& in) {
  EvidenceSection s{"failures", "Failures by reason", "", {}, {}};
  Table t = FailureReport(in.workloads, {in.window, By({GroupKey::kKind})}).value();
  t.title.clear();  // the section heading says it
  s.text = t.notes.empty() ? "" : t.notes.front() + ".";
  s.charts.push_back(ChartOf(t, "Failures by reason and kind", "workloads", {"reason", "kind"}, "failures"));
  s.tables.push_back(std::move(t));
  return s;
}

EvidenceSection PreemptionSection(const EvidenceInput& in) {
  EvidenceSection s{"preemptions", "Reclaim and preemption actions", "", {}, {}};
  std::map<std::pair<std::string, std::string>, std::pair<int64_t, int64_t>> rows;  // count, milli
  int64_t total = 0;
  for (const PreemptionEvent& e : in.preemptions) {
    if (e.time < in.window.from || e.time >= in.window.end()) continue;
    auto& r = rows[{e.reason, e.queue}];
    ++r.first;
    r.second += e.device_milli;
    ++total;
  }
  Table t;
  t.columns = {{"reason", false}, {"victimQueue", false}, {"actions", true}, {"devicesReleased", true}};
  for (const auto& [key, r] : rows) {
    t.rows.push_back({key.first, key.second, std::to_string(r.first), FormatDeviceMilli(r.second)});
  }
  s.text = std::to_string(total) + " workloads were preempted or reclaimed in the window.";
  s.charts.push_back(ChartOf(t, "Actions by reason and victim queue", "actions", {"reason", "victimQueue"}, "actions"));
  s.tables.push_back(std::move(t));
  return s;
}

EvidenceSection ShortageSection(const EvidenceInput& in) {
  EvidenceSection s{"shortages", "Inference shortages", "", {}, {}};
  Table t = ShortageReport(in.shortages, {in.window, By({GroupKey::kTenant, GroupKey::kWorkload})}).value();
  t.title.clear();  // the section heading says it
  s.text = "Time inference services wanted more replicas than they could get.";
  s.charts.push_back(ChartOf(t, "Shortage hours by service", "hours", {"workload"}, "shortageHours"));
  s.tables.push_back(std::move(t));
  return s;
}

EvidenceSection InterventionSection(const EvidenceInput& in) {
  EvidenceSection s{"interventions", "Manual interventions", "", {}, {}};
  std::map<std::pair<std::string, std::string>, int64_t> counts;  // (action, object kind)
  std::set<std::string> people;
  Table recent;
  recent.title = "Latest interventions";
  recent.columns = {{"time", false}, {"actor", false}, {"action", false}, {"object", false}};
  std::vector<const AuditEntrySummary*> entries;
  for (const AuditEntrySummary& e : in.audit) {
    if (e.time < in.window.from || e.time >= in.window.end() || !IsManualIntervention(e)) continue;
    ++counts[{e.action, e.object_kind}];
    people.insert(e.actor);
    entries.push_back(&e);
  }
  std::stable_sort(entries.begin(), entries.end(), [](auto* a, auto* b) { return a->time > b->time; });
  if (entries.size() > 20) entries.resize(20);
  for (const auto* e : entries) {
    recent.rows.push_back({FormatTime(e->time), e->actor, e->action, e->object_kind + " " + e->object_name});
  }
  Table t;
  t.columns = {{"action", false}, {"objectKind", false}, {"count", true}};
  int64_t total = 0;
  for (const auto& [key, n] : counts) {
    t.rows.push_back({key.first, key.second, std::to_string(n)});
    total += n;
  }
  s.text = std::to_string(total) + (total == 1 ? " manual intervention by " : " manual interventions by ") +
           std::to_string(people.size()) + (people.size() == 1 ? " person" : " people") +
           " (audit entries by a user that cancel, override, change quota or priority, "
           "cordon, drain, scale, suspend, resume, hold, release, requeue, preempt or delete, that took effect; refused requests "
           "are not counted).";
  s.charts.push_back(ChartOf(t, "Interventions by action", "entries", {"action", "objectKind"}, "count"));
  s.tables.push_back(std::move(t));
  s.tables.push_back(std::move(recent));
  return s;
}

std::string ChainText(const AuditChainStatus& a) {
  if (!a.verified) return "not verified";
  if (a.entries < 0) return a.ok ? "verified over the whole log, chain intact" : "BROKEN: " + a.reason;
  if (a.ok) return "verified: " + std::to_string(a.entries) + " entries, chain intact";
  return "BROKEN after checking " + std::to_string(a.entries) + " entries: " + a.reason;
}

EvidenceSection AuditSection(const EvidenceInput& in) {
  EvidenceSection s{"audit", "Audit chain", "", {}, {}};
  s.text = "The audit log is hash-chained; its status when this report was generated: " +
           ChainText(in.audit_chain) + ".";
  return s;
}

std::vector<std::pair<std::string, std::string>> Summary(const EvidenceInput& in) {
  int64_t devices = 0, nodes = 0;
  std::set<std::string> clusters;
  for (const auto& r : in.inventory) {
    devices += r.devices;
    nodes += r.nodes;
    clusters.insert(r.cluster);
  }
  Table usage = UsageReport(in.intervals, {in.window, {}, in.prices}).value();
  const auto& total = usage.rows.empty() ? std::vector<std::string>(8, "0") : usage.rows.front();
  int64_t submitted = 0, failed = 0, preemptions = 0, interventions = 0;
  for (const auto& w : in.workloads) {
    if (w.submitted >= in.window.from && w.submitted < in.window.end()) ++submitted;
    if (w.state == "Failed" && w.finished && *w.finished >= in.window.from && *w.finished < in.window.end()) ++failed;
  }
  for (const auto& e : in.preemptions) preemptions += e.time >= in.window.from && e.time < in.window.end();
  for (const auto& e : in.audit) {
    interventions += e.time >= in.window.from && e.time < in.window.end() && IsManualIntervention(e);
  }
  std::vector<std::pair<std::string, std::string>> out = {
      {"Window", FormatTime(in.window.from) + " .. " + FormatTime(in.window.to)},
      {"Generated", FormatTime(in.generated_at)},
      {"Inventory", std::to_string(clusters.size()) + " clusters, " + std::to_string(nodes) + " nodes, " +
                        std::to_string(devices) + " devices"},
      {"Allocated", total[1] + " device-hours"},
      {"Workloads", std::to_string(submitted) + " submitted, " + std::to_string(failed) + " failed"},
      {"Preemptions and reclaims", std::to_string(preemptions)},
      {"Manual interventions", std::to_string(interventions)},
      {"Audit chain", ChainText(in.audit_chain)},
  };
  if (in.prices) out.insert(out.begin() + 4, {"Cost", total[7] + " " + in.prices->currency});
  return out;
}

}  // namespace

bool IsManualIntervention(const AuditEntrySummary& entry) {
  if (!entry.actor.starts_with("user ") || entry.result != "ok") return false;
  if (std::find(kManualActions.begin(), kManualActions.end(), entry.action) != kManualActions.end()) return true;
  return entry.action == "apply" && (entry.object_kind == "queue" || entry.object_kind == "Queue" ||
                                     entry.object_kind == "cohort" || entry.object_kind == "Cohort");
}

BarChart ChartOf(const Table& table, std::string title, std::string unit,
                 const std::vector<std::string>& labels, const std::string& value) {
  BarChart chart{std::move(title), std::move(unit), {}};
  int v = table.ColumnIndex(value);
  if (v < 0) return chart;
  for (const auto& row : table.rows) {
    if (row[v].empty()) continue;
    std::string label;
    for (const auto& name : labels) {
      int i = table.ColumnIndex(name);
      if (i < 0) continue;
      label += (label.empty() ? "" : " / ") + row[i];
    }
    chart.bars.emplace_back(label, std::max(0.0, std::stod(row[v])));
  }
  return chart;
}

Evidence BuildEvidence(const EvidenceInput& in) {
  Evidence e;
  e.title = in.title;
  e.summary = Summary(in);
  e.sections.push_back(InventorySection(in));
  e.sections.push_back(QueueSection(in));
  e.sections.push_back(SubmissionSection(in));
  e.sections.push_back(UtilizationSection(in));
  e.sections.push_back(WaitSection(in));
  e.sections.push_back(FailureSection(in));
  e.sections.push_back(PreemptionSection(in));
  e.sections.push_back(ShortageSection(in));
  e.sections.push_back(InterventionSection(in));
  e.sections.push_back(AuditSection(in));
  return e;
}

}  // namespace abacus::meter
