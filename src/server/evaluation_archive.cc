#include "server/evaluation_archive.h"

#include <algorithm>
#include <vector>

namespace abacus::server {

using nlohmann::json;

namespace {

double Seconds(Time from, Time to) { return to > from ? std::chrono::duration<double>(to - from).count() : 0.0; }

std::string TaskName(const WorkloadRecord& w, const PlacementRecord& p) {
  const auto& groups = w.spec.spec.task_groups;
  std::string group = p.group < static_cast<int32_t>(groups.size()) ? groups[p.group].name : std::to_string(p.group);
  return group + "." + std::to_string(p.replica);
}

}  // namespace

std::string ResultsFileOf(std::string_view results_path) {
  while (!results_path.empty() && results_path.back() == '/') results_path.remove_suffix(1);
  size_t slash = results_path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? results_path : results_path.substr(slash + 1);
  if (name == "." || name == "..") return "";
  return std::string(name);
}

control::ResourceUsage UsageOf(const WorkloadRecord& w, Time now) {
  control::ResourceUsage u;
  u.flavor = "cpu";
  for (size_t g = 0; g < w.group_flavors.size(); ++g) {
    if (w.group_flavors[g] != "cpu" && !w.group_flavors[g].empty()) {
      u.flavor = w.group_flavors[g];
      break;
    }
  }
  Time first{}, last{};
  for (const PlacementRecord& p : w.placements) {
    if (ToMicros(p.started_at) == 0) continue;  // never ran
    Time end = ToMicros(p.finished_at) != 0 ? p.finished_at : now;
    double run = Seconds(p.started_at, end);
    int64_t milli = 0;
    for (const DeviceGrantRecord& d : p.devices) milli += d.milli;
    u.device_seconds += static_cast<double>(milli) / 1000.0 * run;
    u.cpu_core_seconds += static_cast<double>(p.cpu_milli) / 1000.0 * run;
    if (ToMicros(first) == 0 || p.started_at < first) first = p.started_at;
    last = std::max(last, end);
  }
  u.wall_seconds = Seconds(first, last);
  return u;
}

CollectedResults CollectEvaluationResults(const WorkloadRecord& w, const control::CollectResults& d, Time now) {
  CollectedResults out;
  const EvaluationSpec* spec = w.spec.evaluation();
  if (spec == nullptr) {
    out.event = control::MakeEvent("ResultsInvalid", "results are collected for an Evaluation only", json::object(),
                                   "ResultsInvalid");
    return out;
  }
  // The first task, by group then replica, that uploaded anything.
  std::vector<const PlacementRecord*> tasks;
  for (const PlacementRecord& p : w.placements) tasks.push_back(&p);
  std::sort(tasks.begin(), tasks.end(), [](const PlacementRecord* a, const PlacementRecord* b) {
    return a->group != b->group ? a->group < b->group : a->replica < b->replica;
  });
  auto found = std::find_if(tasks.begin(), tasks.end(), [](const PlacementRecord* p) {
    return p->results.has_value() || !p->results_error.empty();
  });
  if (found == tasks.end()) {
    std::string file = ResultsFileOf(d.path);
    std::string wanted = "$ABACUS_RESULTS_DIR/results.json";
    if (!file.empty() && file != "results.json") wanted = "$ABACUS_RESULTS_DIR/" + file + " or " + wanted;
    out.event = control::MakeEvent("ResultsMissing", "no results: no task of the evaluation wrote " + wanted,
                                   {{"resultsPath", d.path}}, "ResultsMissing");
    return out;
  }
  const PlacementRecord& p = **found;
  const std::string task = TaskName(w, p);
  Result<control::EvaluationResult> result = InvalidArgument("no results");
  if (!p.results_error.empty()) {
    result = InvalidArgument(p.results_error);
  } else if (p.results->size() > kMaxResultsBytes) {
    result = InvalidArgument("results are " + std::to_string(p.results->size()) + " bytes, more than the " +
                             std::to_string(kMaxResultsBytes) + " allowed");
  } else {
    control::WorkloadView view;
    view.id = w.id;
    view.spec = &w.spec;
    view.state = w.state;
    result = control::BuildEvaluationResult(view, *p.results, UsageOf(w, now), now);
  }
  if (!result.ok()) result = result.status().WithContext("results of task " + task);
  out.event = control::ResultsEvent(result);
  out.event.details["task"] = task;
  if (result.ok()) {
    if (d.archive) {
      out.archive = ArchiveDocument(w, *result);
    } else {
      out.event.type = "ResultsCollected";  // read and checked, not kept (spec.archive: false)
      out.event.details["archived"] = false;
    }
  }
  return out;
}

json ArchiveDocument(const WorkloadRecord& w, const control::EvaluationResult& r) {
  json doc = control::ToJson(r);
  doc["workload"] = w.spec.name;
  doc["project"] = w.spec.project;
  if (const EvaluationSpec* e = w.spec.evaluation(); e != nullptr && !e->baseline_version.empty()) {
    doc["baselineVersion"] = e->baseline_version;
  }
  return doc;
}

}  // namespace abacus::server
