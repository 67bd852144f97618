// ControlPlane: elastic workloads between cycles — a unit the scheduler placed for a slice joins
// its workload (elastic_units.h), and the metric samples that drive a service's autoscaler.
#include <limits>
#include <string>
#include <string_view>

#include "common/json_fields.h"
#include "common/log.h"
#include "common/mutex.h"
#include "server/control_plane.h"
#include "server/elastic_units.h"
#include "server/reserved_pool.h"

namespace abacus::server {

using nlohmann::json;

void ControlPlane::AddUnit(const sched::Snapshot& snapshot, const sched::Admission& a, int32_t unit,
                           WorkloadRecord& r, WriteBatch& batch, Time now) {
  const auto& groups = r.spec.spec.task_groups;
  std::set<std::string> nodes;
  for (const sched::TaskPlacement& tp : a.placements) {
    PlacementRecord p = Ledger::ToPlacement(snapshot, tp);
    int32_t per = tp.group < static_cast<int32_t>(groups.size()) ? std::max(1, groups[tp.group].replicas) : 1;
    p.replica = unit * per + tp.replica;
    p.version = InitialVersion(r, unit);
    if (auto it = r.next_runs.find(std::to_string(p.group) + "." + std::to_string(p.replica)); it != r.next_runs.end()) {
      p.run = it->second;  // the slot ran before this attempt's scale-down: a new task id
    }
    nodes.insert(p.node);
    r.placements.push_back(std::move(p));
  }
  std::sort(r.placements.begin(), r.placements.end(), [](const PlacementRecord& x, const PlacementRecord& y) {
    return std::tie(x.group, x.replica) < std::tie(y.group, y.replica);
  });
  bool service = r.spec.inference() != nullptr;
  std::string what = std::string(service ? "replica " : "slot ") + std::to_string(unit) + " placed on " +
                     *nodes.begin() + (a.borrowing ? " (borrowed quota)" : "");
  batch.AppendEvent(kWorkloadKind, r.id, service ? "ReplicaPlaced" : "SlotPlaced",
                    EventJson(r.state, what,
                              {{"unit", unit}, {"nodes", nodes}, {"borrowing", a.borrowing},
                               {"placed", PlacedUnits(r).size()}})
                        .dump(),
                    now);
  StageOutsidePoolEvent(r, {unit}, ledger_, batch, now);  // overflow is visible (issue 19.3)
}

Result<MetricsAcceptedView> ControlPlane::ReportMetrics(const std::string& id_or_name, const json& body) {
  auto rec = FindRecord(id_or_name);
  if (!rec) return NotFound("workload '" + id_or_name + "' not found");
  const InferenceSpec* inf = rec->spec.inference();
  if (inf == nullptr) {
    return FailedPrecondition("workload " + rec->id + " is a " + std::string(WorkloadKindName(rec->spec.kind())) +
                              "; metrics drive the autoscaling of an InferenceService");
  }
  if (!inf->autoscaling) {
    return FailedPrecondition("InferenceService " + rec->id + " has no spec.autoscaling; nothing reads its metrics");
  }
  if (IsTerminal(rec->state)) {
    return FailedPrecondition("workload " + rec->id + " is " + std::string(WorkloadStateName(rec->state)));
  }
  constexpr std::string_view kSample = R"({"metric": "...", "value": N, "replica": N})";
  if (!body.is_object()) return InvalidArgument("body: expected " + std::string(kSample) + " or {\"samples\": [...]}");
  const bool many = body.contains("samples");
  std::vector<json> items;
  if (many) {
    ABACUS_RETURN_IF_ERROR(OnlyFields(body, {"samples"}, R"({"samples": [...]})"));
    if (!body["samples"].is_array()) return InvalidArgument("samples: expected an array");
    items.assign(body["samples"].begin(), body["samples"].end());
  } else {
    items.push_back(body);
  }
  if (items.empty() || items.size() > 1000) return InvalidArgument("samples: expected 1 to 1000 samples");
  Time now = clock_.Now();
  std::vector<control::MetricSample> samples;
  for (size_t i = 0; i < items.size(); ++i) {
    const json& s = items[i];
    const std::string at = many ? "samples[" + std::to_string(i) + "]" : "body";
    std::string where = many ? at + "." : "";
    ABACUS_RETURN_IF_ERROR(OnlyFields(s, {"metric", "value", "replica"}, kSample, at));  // an object of these
    if (s.contains("metric") && !s["metric"].is_string()) return InvalidArgument(where + "metric: expected a string");
    control::MetricSample m;
    m.metric = s.value("metric", inf->autoscaling->metric);
    if (m.metric != inf->autoscaling->metric) {
      return InvalidArgument(where + "metric: the service scales on '" + inf->autoscaling->metric + "', got '" +
                             m.metric + "'");
    }
    if (!s.contains("value") || !s["value"].is_number()) return InvalidArgument(where + "value: expected a number");
    m.value = s["value"].get<double>();
    if (!(m.value >= 0)) return InvalidArgument(where + "value: expected a non-negative number");
    if (!s.contains("replica") || !s["replica"].is_number_integer() || s["replica"].get<int64_t>() < 0 ||
        s["replica"].get<int64_t>() > std::numeric_limits<int32_t>::max()) {
      return InvalidArgument(where + "replica: expected the replica number (0, 1, …)");
    }
    m.replica = s["replica"].get<int32_t>();
    m.time = now;
    samples.push_back(std::move(m));
  }
  const size_t accepted = samples.size();
  telemetry_.AddMetrics(rec->id, std::move(samples), now);
  return MetricsAcceptedView{rec->id, accepted};
}

}  // namespace abacus::server
