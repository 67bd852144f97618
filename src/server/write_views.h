// What ControlPlane's writes answer (issue 22.1), typed like the reads (read_views.h): the JSON
// shapes are written at the HTTP edge (write_views_json.h), nowhere else. A keyed write
// (Idempotency-Key, idempotency.h) stores its answer as JSON in the same commit as its change,
// encoded by the same edge function, and hands that encoding to the edge; a repeat gets the
// stored answer back as it was (Keyed).
// JSON values kept inside: a diff's from/to values (any JSON) and a Secret's summary (the vault's).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "server/applied_view.h"
#include "server/ledger.h"
#include "server/read_views.h"
#include "workload/workload.h"

namespace abacus::server {

// The answer of a keyed write: the typed answer of the change made now, or, for a repeat of an
// earlier request with the same key, that request's stored answer, replayed byte for byte.
template <typename T>
struct Keyed {
  T answer;  // the change made now (default when replayed)
  // The answer as the edge writes it, when it is already written: a repeat's stored first
  // answer (the repeat itself is noted in the request's context), or the encoding a keyed
  // change stored with its commit (written once, not twice).
  // Empty for an unkeyed change: the edge encodes `answer`.
  std::optional<nlohmann::json> encoded;
};

// One workload a submission stored, as it answers: it is Pending.
struct SubmittedView {
  std::string id;
  std::string name;
  WorkloadKind kind = WorkloadKind::kTrainingJob;
  std::string queue;
  std::vector<std::string> warnings;  // "NeverFits: …" when it can never run as things are
};

// Why a workload of a dry run would wait: the scheduler's reason (with its place in the queue)
// or "Unschedulable" (its queue or priority class is unknown, or the like).
struct DryRunReasonView {
  std::string code;
  std::string message;
  std::optional<int32_t> position;
  std::optional<int32_t> ahead;
};

// Where one workload of a dry run (?dryRun=1) would go if a scheduling cycle ran now.
struct DryRunView {
  std::string name;
  WorkloadKind kind = WorkloadKind::kTrainingJob;
  std::string project;
  std::string queue;
  std::map<std::string, std::string> labels;  // with those admission policies set
  bool admitted = false;                        // "wouldBe": Admitted, else Pending
  std::vector<ExplainPlacementView> placements;  // admitted
  std::vector<std::string> flavors;              // admitted
  std::optional<DryRunReasonView> reason;        // pending, when known
  std::vector<std::string> would_preempt;        // pending: "id (reason)" of those preempted first
  std::string text;                              // for people
  std::vector<std::string> warnings;             // "NeverFits: …"
};

// POST /api/v1/workloads: the workloads submitted, or with a dry run (`dry_run` not empty,
// `submitted` empty) where each would go.
struct SubmitView {
  std::vector<SubmittedView> submitted;
  std::vector<DryRunView> dry_run;
};

// A queue suspended or resumed: who suspended it and since when (nullopt: it runs).
struct QueueSuspendView {
  std::string queue;
  std::optional<QueueSuspension> suspension;
};

// An update of a workload (PUT, PATCH, rollback): its view afterwards and what changed.
struct UpdateView {
  WorkloadView workload;
  nlohmann::json diff = nlohmann::json::array();  // [{path, from, to}] (workload_update.h)
  int32_t revision = 0;  // the revision it has (unchanged) or gets
  bool unchanged = false;
  bool dry_run = false;  // checked and compared, nothing stored
};

// The metric samples taken for an InferenceService's autoscaler.
struct MetricsAcceptedView {
  std::string workload;
  size_t accepted = 0;
};

// The log of one task: at most the tail asked of one stream.
struct TaskLogView {
  std::string workload;
  std::string task_id;
  std::string stream;
  std::string content;
};

}  // namespace abacus::server
