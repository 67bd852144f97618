// ControlPlane: dry runs of submissions (POST /api/v1/workloads?dryRun=1, issue 23) — where the
// work would go if the scheduler ran now. Their name check (CheckNamesFree) is Submit's
// (ClaimNames) without the claim, in workload_names.cc.
#include <map>

#include "common/mutex.h"
#include "sched/explain.h"
#include "server/control_plane.h"
#include "server/fit_check.h"

namespace abacus::server {

using nlohmann::json;

Result<std::vector<json>> ControlPlane::DryRunExplain(const std::vector<WorkloadRecord>& records) {
  auto answers = std::make_shared<std::vector<Ledger::WhatIf>>();
  ABACUS_RETURN_IF_ERROR(RunOnLoop([this, &records, answers]() -> Result<json> {
                           *answers = ledger_.WhatIfCycle(records, clock_.Now(), options_.scheduler);
                           return json();
                         }).status());
  std::shared_ptr<const FitChecker> fit = ledger_.FitCheckerSnapshot();
  std::vector<json> out;
  for (size_t i = 0; i < records.size(); ++i) {
    const WorkloadRecord& r = records[i];
    const Ledger::WhatIf& a = (*answers)[i];
    json item = {{"name", r.spec.name},
                 {"kind", WorkloadKindName(r.spec.kind())},
                 {"project", r.spec.project},
                 {"queue", r.spec.queue},
                 {"dryRun", true}};
    // The labels admission policies set (governance CheckSubmit) are part of what would be stored.
    if (!r.spec.labels.empty()) item["labels"] = r.spec.labels;
    std::string text;
    if (a.admitted) {
      item["wouldBe"] = "Admitted";
      json placements = json::array();
      std::map<std::string, std::vector<std::string>> by_node;
      for (const auto& p : a.placements) {
        std::string devices;
        for (const auto& d : p.devices) {
          devices += (devices.empty() ? "" : ",") + std::to_string(d.index) +
                     (d.milli < 1000 ? "(" + std::to_string(d.milli) + "m)" : "");
        }
        std::string group = p.group < static_cast<int>(r.spec.spec.task_groups.size())
                                ? r.spec.spec.task_groups[p.group].name
                                : std::to_string(p.group);
        placements.push_back({{"group", group}, {"replica", p.replica}, {"node", p.node}, {"devices", devices}});
        by_node[p.node].push_back(group + "[" + std::to_string(p.replica) + "]" +
                                  (devices.empty() ? "" : " devices " + devices));
      }
      item["placements"] = placements;
      item["flavors"] = a.group_flavors;
      text = "would be admitted now on flavors ";
      for (size_t f = 0; f < a.group_flavors.size(); ++f) text += (f ? ", " : "") + a.group_flavors[f];
      for (const auto& [node, tasks] : by_node) {
        text += "\n  " + node + ": ";
        for (size_t t = 0; t < tasks.size(); ++t) text += (t ? "; " : "") + tasks[t];
      }
    } else {
      item["wouldBe"] = "Pending";
      if (!a.unschedulable.empty()) {
        item["reason"] = {{"code", "Unschedulable"}, {"message", a.unschedulable}};
        text = "would wait: " + a.unschedulable;
      } else if (a.pending) {
        item["reason"] = {{"code", sched::PendingCodeName(a.pending->code)},
                          {"message", a.pending->message},
                          {"position", a.pending->position},
                          {"ahead", a.pending->ahead}};
        text = "would wait: " + sched::DescribePending(*a.pending);
      } else {
        text = "would wait for the next scheduling cycle";
      }
      if (!a.preempts.empty()) {
        item["wouldPreempt"] = a.preempts;
        text += "\nwould preempt first:";
        for (const auto& v : a.preempts) text += " " + v;
      }
    }
    while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.pop_back();
    item["text"] = text;
    if (fit != nullptr) {
      if (std::string never = fit->NeverFits(r, options_.scheduler); !never.empty()) {
        constexpr std::string_view kPrefix = "never fits: ";
        if (never.rfind(kPrefix, 0) == 0) never.erase(0, kPrefix.size());
        item["warnings"] = json::array({"NeverFits: " + never});
      }
    }
    out.push_back(std::move(item));
  }
  return out;
}

}  // namespace abacus::server
