// The JSON shapes of the writes' answers (write_views.h) at the HTTP edge (issue 22.1): the
// handlers encode here, and a keyed write stores the same encoding as its answer (the bytes a
// repeat gets back). Field names and values are those of the API (docs/api.md); objects are
// nlohmann's, so keys come out sorted.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "common/status.h"
#include "server/read_views_json.h"
#include "server/write_views.h"

namespace abacus::server {

// A keyed write's answer: the encoding it carries (a repeat's first answer, or the one staged
// with its commit), else `encode(answer)`.
template <typename T, typename Encode>
nlohmann::json KeyedJson(const Keyed<T>& keyed, Encode encode) {
  if (keyed.encoded) return *keyed.encoded;
  return encode(keyed.answer);
}
// The same for a result: its error, or the answer as KeyedJson writes it.
template <typename T, typename Encode>
Result<nlohmann::json> KeyedJson(const Result<Keyed<T>>& keyed, Encode encode) {
  if (!keyed.ok()) return keyed.status();
  return KeyedJson(*keyed, encode);
}

// [{group, replica, node, devices}]: the placements explain and a dry run show.
nlohmann::json PlacementsJson(const std::vector<ExplainPlacementView>& placements);

// A workload's view (cancel, scale, hold, priority, …: WorkloadViewJson), or the error.
Result<nlohmann::json> WorkloadViewJson(const Result<Keyed<WorkloadView>>& w);

// [{id, name, kind, queue, "state": "Pending", warnings?}] for the workloads submitted; with a
// dry run [{name, kind, project, queue, labels?, "dryRun": true, "wouldBe": "Admitted"|"Pending",
// placements [{group, replica, node, devices}] and flavors (admitted), reason {code, message,
// position?, ahead?} and wouldPreempt (pending, when any), text, warnings?}].
nlohmann::json SubmitJson(const SubmitView& submit);
// The submission's items (as SubmitJson, or the first answer of a repeat), or the error.
Result<nlohmann::json> SubmitJson(const Result<Keyed<SubmitView>>& submit);

// {queue, suspended, by and since (RFC 3339) when suspended}.
Result<nlohmann::json> QueueSuspendJson(const Result<QueueSuspendView>& q);

// The workload's view with "diff", "revision", "unchanged" and, for a dry run, "dryRun": true.
Result<nlohmann::json> UpdateJson(const Result<UpdateView>& update);

// The node's record as stored (records.h ToJson), or the error.
Result<nlohmann::json> NodeRecordJson(const Result<NodeRecord>& node);

// {workload, accepted}.
Result<nlohmann::json> MetricsAcceptedJson(const Result<MetricsAcceptedView>& accepted);

// {workload, taskId, stream, content}.
Result<nlohmann::json> TaskLogJson(const Result<TaskLogView>& log);

// {kind, name, action, diff?}, or a Secret's summary.
nlohmann::json AppliedJson(const AppliedView& applied);
// [AppliedJson, ...]: an apply's answer.
nlohmann::json ApplyJson(const std::vector<AppliedView>& applied);
// The apply's items (as ApplyJson, or the first answer of a repeat), or the error.
Result<nlohmann::json> ApplyJson(const Result<Keyed<std::vector<AppliedView>>>& apply);
// One document's AppliedJson (DELETE /api/v1/reservations/NAME), or the error.
Result<nlohmann::json> AppliedJson(const Result<AppliedView>& applied);

}  // namespace abacus::server
