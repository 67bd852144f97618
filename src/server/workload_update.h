// Updating a workload that exists (issue 19.4): what may change, the server-side diff, and the
// revisions a service rolls forward and back through. Pure: no store, no clock, no locks —
// ControlPlane::UpdateWorkload (workload_update_api.cc) commits what this plans.
//
// Mutable fields (everything else is immutable: a change is refused, 422, naming each path):
//   every kind       labels, spec.image, spec.command, spec.env (the next runs get them)
//   InferenceService spec.replicas, spec.minReplicas, spec.maxReplicas, spec.autoscaling,
//                    spec.rollout, spec.probes
// A service's template (image, command, env) belongs to a version: a template change that
// names no new version gets one, "r<N>" for revision N, as spec.rollout.version, so that the
// controller rolls it out as a canary (docs/controllers.md §4) and can roll it back.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "server/records.h"
#include "workload/workload.h"

namespace abacus::server {

// Returns the changes from `before` to `after` (canonical documents): [{path, from, to}] with
// dotted paths ("spec.rollout.version"); arrays compare whole; an absent side is null.
nlohmann::json DocumentDiff(const nlohmann::json& before, const nlohmann::json& after);
// As DocumentDiff, but arrays of equal length element by element ("quotas[0].nominal"): what
// `abacus apply --diff` shows of a configuration object.
nlohmann::json FieldDiff(const nlohmann::json& before, const nlohmann::json& after);

// Returns the paths of `diff` that are not mutable for a workload of `kind`.
std::vector<std::string> ImmutablePaths(const nlohmann::json& diff, WorkloadKind kind);

// Returns OK when `proposed` changes only fields of `current` that may change; else
// InvalidArgument naming each immutable path changed (and the mutable ones), those paths in
// `*immutable` (the HTTP edge answers 422 immutable_field). Checked before anything `proposed`
// names is resolved, so that a changed queue or project is refused alike whatever it names.
Status CheckMutable(const Workload& current, const Workload& proposed, std::vector<std::string>* immutable);

// Returns the version a service's spec asks for: spec.rollout.version, else the "version"
// label, else "".
std::string SpecVersion(const Workload& w);

// The template of `w` as revision `revision` (at, by and diff left empty).
RevisionRecord TemplateOf(const Workload& w, int32_t revision);

// The newest revision of `r` whose version is `version`; null when there is none.
const RevisionRecord* RevisionForVersion(const WorkloadRecord& r, const std::string& version);

// The template placement `p` of service `r` runs: the revision of its version, or null (the
// spec's own: not a service, never updated, or a version no revision names).
const RevisionRecord* TemplateForTask(const WorkloadRecord& r, const PlacementRecord& p);

struct UpdatePlan {
  Workload next;            // the spec to store
  nlohmann::json diff;      // [{path, from, to}], after any version the server named
  std::vector<RevisionRecord> revisions;  // the record's revisions after the update
  int32_t revision = 0;     // the new revision's number (0: nothing changed)
};

// Plans the update of record `current` to `proposed` by user `by`: InvalidArgument with the
// immutable paths in `*immutable` when any changed; an empty diff (revision 0) when nothing
// did. A service whose template changes without a new version gets version "r<N>".
Result<UpdatePlan> PlanUpdate(const WorkloadRecord& current, Workload proposed, const std::string& by, Time now,
                              std::vector<std::string>* immutable);

// Returns `current` with the template of revision `revision` of `r` (0: the one before the
// newest): image, command, env and, for a service, spec.rollout.version. NotFound without it.
Result<Workload> RollbackTarget(const WorkloadRecord& r, int32_t revision);

// Returns the one-line account of `diff`: "spec.rollout.version v1 → v2; spec.image a → b".
std::string DiffLine(const nlohmann::json& diff);

}  // namespace abacus::server
