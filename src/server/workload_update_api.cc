// ControlPlane: updating a workload that exists — PUT/PATCH /api/v1/workloads/{id}, rollback to
// a revision, and the revision history (issue 19.4; the rules are workload_update.h's).
#include <algorithm>

#include "common/mutex.h"
#include "common/nesting.h"
#include "server/control_plane.h"
#include "server/control_plane_commands.h"
#include "server/governance.h"
#include "server/workload_checks.h"
#include "server/workload_update.h"
#include "workload/documents.h"

namespace abacus::server {

using nlohmann::json;

namespace {

// The one workload document of `text` (YAML, or a JSON object); InvalidArgument otherwise.
Result<Workload> OneWorkload(std::string_view text, bool json_body) {
  std::vector<Document> docs;
  if (json_body) {
    ABACUS_ASSIGN_OR_RETURN(json j, ParseJsonBody(text));  // nesting and duplicate keys, before parsing
    if (!j.is_object()) return InvalidArgument("request body: expected one workload as a JSON object");
    ABACUS_ASSIGN_OR_RETURN(SpecObject obj, SpecObjectFromJson(j));
    docs.push_back(Document{std::move(obj), SourceLocation{"request", 0, {}}});
  } else {
    ParsedDocuments parsed = ParseDocuments(text, "request");
    if (!parsed.diagnostics.empty()) return parsed.diagnostics.ToStatus();
    docs = std::move(parsed.documents);
  }
  if (docs.size() != 1 || docs[0].workload() == nullptr) {
    return InvalidArgument("request body: expected exactly one workload document");
  }
  return std::get<Workload>(std::move(docs[0].object));
}

// `a` and `b` alike but for a service's replicas (which its autoscaler changes).
bool SameButReplicas(Workload a, const Workload& b) {
  InferenceSpec* ia = std::get_if<InferenceSpec>(&a.details);
  const InferenceSpec* ib = std::get_if<InferenceSpec>(&b.details);
  if (ia != nullptr && ib != nullptr) ia->replicas = ib->replicas;
  return a == b;
}

}  // namespace

Result<UpdateView> ControlPlane::UpdateWorkload(const std::string& id_or_name, std::string_view body,
                                                bool json_body, bool merge_patch, int32_t rollback_to,
                                                const govern::Principal* caller,
                                                std::vector<std::string>* immutable, bool dry_run,
                                                RequestContext* context) {
  std::optional<WorkloadRecord> seen = FindRecord(id_or_name);
  if (!seen) return NotFound("workload '" + id_or_name + "' not found");
  if (IsTerminal(seen->state)) {
    return FailedPrecondition("workload " + seen->id + " is " + std::string(WorkloadStateName(seen->state)) +
                              "; only a workload that has not ended can be updated");
  }
  // 1) The document proposed: the body (PUT), the stored one merged with the body (PATCH), or
  //    a revision's template (rollback).
  Workload proposed;
  if (rollback_to >= 0) {
    ABACUS_ASSIGN_OR_RETURN(proposed, RollbackTarget(*seen, rollback_to));
  } else if (merge_patch) {
    ABACUS_ASSIGN_OR_RETURN(json patch, ParseJsonBody(body));
    if (!patch.is_object()) {
      return InvalidArgument("PATCH body: expected a JSON object (a merge patch, RFC 7386)");
    }
    json doc = json::parse(EncodeSpecObject(SpecObject(seen->spec)).dump());
    doc.merge_patch(patch);
    ABACUS_ASSIGN_OR_RETURN(proposed, OneWorkload(doc.dump(), true));
  } else {
    ABACUS_ASSIGN_OR_RETURN(proposed, OneWorkload(body, json_body));
  }
  // 2) What may not change, first: a changed queue or project is 422 whatever it names (the
  //    loop checks again against the record as committed). Then references (another tenant's
  //    queue or project is unknown) and admission policies, as on submit (they also set the
  //    admission labels).
  ABACUS_RETURN_IF_ERROR(CheckMutable(seen->spec, proposed, immutable));
  {
    Diagnostics diags;
    std::vector<Document> docs;
    docs.push_back(Document{SpecObject(std::move(proposed)), SourceLocation{"request", 0, {}}});
    ABACUS_RETURN_IF_ERROR(CheckWorkloads({*governance_, *secrets_, *ledger_.ConfigSnapshot()}, caller, docs, diags, context));
    proposed = std::get<Workload>(std::move(docs[0].object));
  }
  // The request's entry, explicit: it commits with the update (a request that has none has no
  // pending entry either, so the command needs none).
  std::optional<govern::AuditRecord> entry = RequestAuditRecord(context, "");
  const bool audited = entry.has_value();
  const std::string by = caller != nullptr ? caller->name : "";
  auto shared = std::make_shared<Workload>(std::move(proposed));
  auto fixed = std::make_shared<std::vector<std::string>>();
  // On the loop: compared with the record as committed, the update's commit started there and
  // answered from its continuation (the loop goes on while it is on disk).
  using Answer = Result<UpdateView>;
  auto answer = AnswerOnLoop<Answer>(nullptr, [this, seen, shared, entry, by, fixed,
                                               dry_run](const LoopReply<Answer>& reply) mutable {
    // Errors found before a commit started answer at once; the rest answer through `reply`.
    Status refused = [&]() -> Status {
      SettleRecord(kWorkloadKind, seen->id);  // its working copy is of the record as committed
      const WorkloadRecord* found = ledger_.FindWorkload(seen->id);
      if (found == nullptr) return NotFound("workload '" + seen->id + "' not found");
      if (IsTerminal(found->state)) {
        return FailedPrecondition("workload " + found->id + " is " + std::string(WorkloadStateName(found->state)) +
                                  "; only a workload that has not ended can be updated");
      }
      // The autoscaler may have scaled it meanwhile: a document that keeps the replicas it was
      // read with keeps the ones it has now. Any other change meanwhile: the caller retries.
      InferenceSpec* want = std::get_if<InferenceSpec>(&shared->details);
      const InferenceSpec* was = seen->spec.inference();
      const InferenceSpec* is = found->spec.inference();
      if (want != nullptr && was != nullptr && is != nullptr && want->replicas == was->replicas) {
        want->replicas = std::clamp(is->replicas, want->min_replicas, std::max(want->min_replicas, want->max_replicas));
      }
      if (!SameButReplicas(seen->spec, found->spec)) {
        return Aborted("workload " + found->id + " changed while it was being updated; retry");
      }
      Time now = clock_.Now();
      ABACUS_ASSIGN_OR_RETURN(UpdatePlan plan, PlanUpdate(*found, *shared, by, now, fixed.get()));
      if (plan.diff.empty()) {
        ReaderLock lock(state_mu_);
        const int32_t revision = found->revisions.empty() ? 1 : found->revisions.back().revision;
        reply(UpdateView{View(*found), json::array(), revision, true, false});
        return Status::OK();
      }
      if (dry_run) {  // checked and compared: the diff an update would make, nothing stored
        ReaderLock lock(state_mu_);
        reply(UpdateView{View(*found), plan.diff, plan.revision, false, true});
        return Status::OK();
      }
      WorkloadRecord next = *found;
      next.spec = std::move(plan.next);
      next.revisions = std::move(plan.revisions);
      WriteBatch batch;
      const OpRef put = batch.PutJson(kWorkloadKind, next.id, ToJson(next), next.version).LastOp();
      batch.AppendEventJson(kWorkloadKind, next.id, "Updated",
                            EventJson(next.state, "updated (revision " + std::to_string(plan.revision) + "): " +
                                                      DiffLine(plan.diff),
                                      {{"revision", plan.revision}, {"diff", plan.diff}, {"by", by}}),
                            now);
      std::vector<govern::AuditRecord> entries;  // the request's entry commits with the update
      if (entry) {
        entry->after = json({{"revision", plan.revision}, {"diff", plan.diff}}).dump();
        entries.push_back(std::move(*entry));
      }
      auto record = std::make_shared<WorkloadRecord>(std::move(next));
      CommitOnLoop(std::move(batch), std::move(entries),
                   [this, reply, put, record, diff = std::move(plan.diff),
                    revision = plan.revision](const Committer::Async& done) mutable {
                     if (!done.status.ok()) return reply(done.status);
                     record->version = done.result.AssignedTo(put);
                     WriterLock lock(state_mu_);
                     WorkloadRecord* r = ledger_.FindWorkload(record->id);
                     *r = std::move(*record);
                     pacer_.Changed();
                     Publish(*r);
                     reply(UpdateView{View(*r), std::move(diff), revision, false, false});
                   });
      return Status::OK();  // answered once committed
    }();
    if (!refused.ok()) reply(refused);
  });
  if (!answer.ok() && !fixed->empty() && immutable != nullptr) *immutable = *fixed;
  if (answer.ok() && audited && !dry_run && !answer->unchanged) NoteRequestAudited(context);
  return answer;
}

Result<RevisionsView> ControlPlane::Revisions(const std::string& id_or_name) const {
  std::optional<WorkloadRecord> r = FindRecord(id_or_name);
  if (!r) return NotFound("workload '" + id_or_name + "' not found");
  RevisionsView v{r->id, r->spec.name, std::move(r->revisions)};
  if (v.items.empty()) {
    RevisionRecord first = TemplateOf(r->spec, 1);
    first.at = r->submitted;
    v.items.push_back(std::move(first));
  }
  return v;
}

}  // namespace abacus::server
