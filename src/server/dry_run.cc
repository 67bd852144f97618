// ControlPlane: dry runs of submissions (POST /api/v1/workloads?dryRun=1, issue 23) — where the
// work would go if the scheduler ran now. Their name check (CheckNamesFree) is Submit's
// (ClaimNames) without the claim, in workload_names.cc.
#include <map>

#include "common/mutex.h"
#include "sched/explain.h"
#include "server/control_plane.h"
#include "server/control_plane_commands.h"
#include "server/fit_check.h"

namespace abacus::server {

Result<std::vector<DryRunView>> ControlPlane::DryRunExplain(const std::vector<WorkloadRecord>& records) {
  auto answers = std::make_shared<std::vector<Ledger::WhatIf>>();
  ABACUS_RETURN_IF_ERROR(RunOnLoop([this, &records, answers]() -> Result<bool> {
                           *answers = ledger_.WhatIfCycle(records, clock_.Now(), options_.scheduler);
                           return true;
                         }).status());
  std::shared_ptr<const FitChecker> fit = ledger_.FitCheckerSnapshot();
  std::vector<DryRunView> out;
  for (size_t i = 0; i < records.size(); ++i) {
    const WorkloadRecord& r = records[i];
    const Ledger::WhatIf& a = (*answers)[i];
    DryRunView& item = out.emplace_back();
    item.name = r.spec.name;
    item.kind = r.spec.kind();
    item.project = r.spec.project;
    item.queue = r.spec.queue;
    // The labels admission policies set (governance CheckSubmit) are part of what would be stored.
    item.labels = r.spec.labels;
    item.admitted = a.admitted;
    std::string text;
    if (a.admitted) {
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
        item.placements.push_back(ExplainPlacementView{group, p.replica, p.node, devices});
        by_node[p.node].push_back(group + "[" + std::to_string(p.replica) + "]" +
                                  (devices.empty() ? "" : " devices " + devices));
      }
      item.flavors = a.group_flavors;
      text = "would be admitted now on flavors ";
      for (size_t f = 0; f < a.group_flavors.size(); ++f) text += (f ? ", " : "") + a.group_flavors[f];
      for (const auto& [node, tasks] : by_node) {
        text += "\n  " + node + ": ";
        for (size_t t = 0; t < tasks.size(); ++t) text += (t ? "; " : "") + tasks[t];
      }
    } else {
      if (!a.unschedulable.empty()) {
        item.reason = DryRunReasonView{"Unschedulable", a.unschedulable, std::nullopt, std::nullopt};
        text = "would wait: " + a.unschedulable;
      } else if (a.pending) {
        item.reason = DryRunReasonView{std::string(sched::PendingCodeName(a.pending->code)),
                                       a.pending->message, a.pending->position, a.pending->ahead};
        text = "would wait: " + sched::DescribePending(*a.pending);
      } else {
        text = "would wait for the next scheduling cycle";
      }
      if (!a.preempts.empty()) {
        item.would_preempt = a.preempts;
        text += "\nwould preempt first:";
        for (const auto& v : a.preempts) text += " " + v;
      }
    }
    while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.pop_back();
    item.text = std::move(text);
    if (fit != nullptr) {
      if (std::string never = fit->NeverFits(r, options_.scheduler); !never.empty()) {
        item.warnings.push_back(NeverFitsWarning(never));
      }
    }
  }
  return out;
}

}  // namespace abacus::server
