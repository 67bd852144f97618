#include "server/write_views_json.h"

#include "server/records.h"
#include "server/result_json.h"
#include "server/secret_views_json.h"

namespace abacus::server {

using nlohmann::json;

namespace {

json SubmittedJson(const SubmittedView& s) {
  json j = {{"id", s.id},
            {"name", s.name},
            {"kind", WorkloadKindName(s.kind)},
            {"queue", s.queue},
            {"state", "Pending"}};
  if (!s.warnings.empty()) j["warnings"] = s.warnings;
  return j;
}

json DryRunJson(const DryRunView& d) {
  json j = {{"name", d.name},
            {"kind", WorkloadKindName(d.kind)},
            {"project", d.project},
            {"queue", d.queue},
            {"dryRun", true}};
  if (!d.labels.empty()) j["labels"] = d.labels;
  if (d.admitted) {
    j["wouldBe"] = "Admitted";
    j["placements"] = PlacementsJson(d.placements);
    j["flavors"] = d.flavors;
  } else {
    j["wouldBe"] = "Pending";
    if (d.reason) {
      json reason = {{"code", d.reason->code}, {"message", d.reason->message}};
      if (d.reason->position) reason["position"] = *d.reason->position;
      if (d.reason->ahead) reason["ahead"] = *d.reason->ahead;
      j["reason"] = std::move(reason);
    }
    if (!d.would_preempt.empty()) j["wouldPreempt"] = d.would_preempt;
  }
  j["text"] = d.text;
  if (!d.warnings.empty()) j["warnings"] = d.warnings;
  return j;
}

}  // namespace

json PlacementsJson(const std::vector<ExplainPlacementView>& placements) {
  json out = json::array();
  for (const ExplainPlacementView& p : placements) {
    out.push_back({{"group", p.group}, {"replica", p.replica}, {"node", p.node}, {"devices", p.devices}});
  }
  return out;
}

Result<json> WorkloadViewJson(const Result<Keyed<WorkloadView>>& w) {
  return KeyedJson(w, [](const WorkloadView& v) { return WorkloadViewJson(v); });
}

json SubmitJson(const SubmitView& submit) {
  json items = json::array();
  if (!submit.dry_run.empty()) {
    for (const DryRunView& d : submit.dry_run) items.push_back(DryRunJson(d));
  } else {
    for (const SubmittedView& s : submit.submitted) items.push_back(SubmittedJson(s));
  }
  return items;
}

Result<json> SubmitJson(const Result<Keyed<SubmitView>>& submit) {
  return KeyedJson(submit, [](const SubmitView& s) { return SubmitJson(s); });
}

Result<json> QueueSuspendJson(const Result<QueueSuspendView>& q) {
  if (!q.ok()) return q.status();
  json j = {{"queue", q->queue}, {"suspended", q->suspension.has_value()}};
  if (q->suspension) {
    j["by"] = q->suspension->by;
    j["since"] = FormatTime(q->suspension->since);
  }
  return j;
}

Result<json> UpdateJson(const Result<UpdateView>& update) {
  if (!update.ok()) return update.status();
  json j = WorkloadViewJson(update->workload);
  j["diff"] = update->diff;
  j["revision"] = update->revision;
  j["unchanged"] = update->unchanged;
  if (update->dry_run) j["dryRun"] = true;
  return j;
}

Result<json> NodeRecordJson(const Result<NodeRecord>& node) {
  return EncodeResult(node, [](const NodeRecord& n) { return ToJson(n); });
}

Result<json> MetricsAcceptedJson(const Result<MetricsAcceptedView>& accepted) {
  if (!accepted.ok()) return accepted.status();
  return json{{"workload", accepted->workload}, {"accepted", accepted->accepted}};
}

Result<json> TaskLogJson(const Result<TaskLogView>& log) {
  if (!log.ok()) return log.status();
  return json{{"workload", log->workload},
              {"taskId", log->task_id},
              {"stream", log->stream},
              {"content", log->content}};
}

json AppliedJson(const AppliedView& applied) {
  if (applied.secret) {
    json j = SecretViewJson(*applied.secret);
    j["kind"] = applied.kind;
    j["action"] = applied.action;
    return j;
  }
  json j = {{"kind", applied.kind}, {"name", applied.name}, {"action", applied.action}};
  if (applied.diff) j["diff"] = *applied.diff;
  return j;
}

json ApplyJson(const std::vector<AppliedView>& applied) {
  json items = json::array();
  for (const AppliedView& a : applied) items.push_back(AppliedJson(a));
  return items;
}

Result<json> ApplyJson(const Result<Keyed<std::vector<AppliedView>>>& apply) {
  return KeyedJson(apply, [](const std::vector<AppliedView>& a) { return ApplyJson(a); });
}

Result<json> AppliedJson(const Result<AppliedView>& applied) {
  return EncodeResult(applied, [](const AppliedView& a) { return AppliedJson(a); });
}

}  // namespace abacus::server
