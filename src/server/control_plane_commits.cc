// ControlPlane's one write path (issue 22.1: working copy → batch → commit → swap → publish):
// `Commit` for the HTTP threads and the loop's own steps that wait, and the forms that start a
// commit on the loop and go on (`…OnLoop`), settled later by LoopCommits (loop_commits.h); what a
// committed batch changed goes into the change feed (`RecordChanges`).
#include <optional>
#include <variant>

#include "common/mutex.h"
#include "server/control_plane.h"
#include "server/governance.h"

namespace abacus::server {

using nlohmann::json;

Status ControlPlane::Commit(const WriteBatch& batch, CommitResult* result, std::optional<govern::AuditRecord> entry,
                            std::vector<govern::AuditRecord> decisions) {
  auto start = std::chrono::steady_clock::now();
  // A request's change commits with the request's audit entry, and a decision with the change it
  // makes (issue 20: both or neither).
  std::vector<govern::AuditRecord> records;
  records.reserve(decisions.size() + 1);
  if (entry) records.push_back(std::move(*entry));
  for (auto& d : decisions) records.push_back(std::move(d));
  Status st = governance_->committer().Commit(batch, std::move(records), result);
  if (st.ok()) RecordChanges(batch, result);
  metrics_.commit_seconds.Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  if (!st.ok()) metrics_.commit_failures.fetch_add(1);
  return st;
}

void ControlPlane::CommitOnLoop(WriteBatch batch, std::vector<govern::AuditRecord> decisions,
                                LoopCommits::Settle settle) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> ids = RecordsWrittenBy(batch);  // in flight until it settles
  // The committer's thread times the commit and wakes the loop's turn, so that it settles promptly.
  std::shared_ptr<const Committer::Async> commit =
      governance_->committer().Start(std::move(batch), std::move(decisions), [this, start] {
        metrics_.commit_seconds.Observe(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        inbox_.Nudge();
      });
  commits_.Add(commit, std::move(ids), [this, settle = std::move(settle)](const Committer::Async& done) {
    if (done.status.ok()) RecordChanges(done.batch, &done.result);
    if (!done.status.ok()) metrics_.commit_failures.fetch_add(1);
    settle(done);
  });
}

void ControlPlane::CommitForRequestOnLoop(PendingRequestAudit* audit, WriteBatch batch,
                                          std::vector<govern::AuditRecord> decisions, LoopCommits::Settle then) {
  std::vector<govern::AuditRecord> entry;
  if (std::optional<govern::AuditRecord> claimed = ClaimRequestAudit(audit, batch)) entry.push_back(std::move(*claimed));
  const bool claimed = !entry.empty();
  for (govern::AuditRecord& d : decisions) entry.push_back(std::move(d));
  CommitOnLoop(std::move(batch), std::move(entry),
               [audit, claimed, then = std::move(then)](const Committer::Async& done) {
                 if (claimed) SettleRequestAudit(audit, done.status.ok());
                 then(done);
               });
}

Status ControlPlane::WriteNow(const std::function<void(Written)>& start) {
  std::optional<Status> outcome;
  start([&outcome](const Status& st) { outcome = st; });
  if (!outcome) commits_.SettleAll();
  return outcome ? *outcome : Internal("a loop write settled without its outcome");
}

void ControlPlane::RecordChanges(const WriteBatch& batch, const CommitResult* result) {
  const std::vector<WriteOp>& ops = batch.ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (const auto* put = std::get_if<PutOp>(&ops[i])) {
      feed_->Record(put->kind, put->key);
    } else if (const auto* del = std::get_if<DeleteOp>(&ops[i])) {
      feed_->Record(del->kind, del->key);
    } else if (const auto* ev = std::get_if<EventOp>(&ops[i])) {
      const int64_t seq = result != nullptr ? result->AssignedTo(OpRef{i}) : 0;
      feed_->RecordEvent(ev->object_kind, ev->object_key, ev->type, ev->json, seq, ev->time_us);
    }
  }
}

void ControlPlane::CommitTransitionOnLoop(const WorkloadRecord& r, WorkloadState to, const std::string& event,
                                          json details,
                                          const std::function<void(WriteBatch&, const WorkloadRecord&)>& stage,
                                          PendingRequestAudit* audit, Written then) {
  WorkloadRecord next = r;
  if (Status st = Transition(next.state, to); !st.ok()) return then(st);
  Time now = clock_.Now();
  if (IsTerminal(to)) next.finished_at = now;
  if (!details.contains("message") && !next.message.empty()) details["message"] = next.message;
  WriteBatch batch;
  std::vector<std::pair<std::string, json>> revoked;
  std::vector<govern::AuditRecord> decisions;
  if (IsTerminal(to)) {
    // The probe of 2026-12-07: a cancelled experiment kept its grant, with no quota-revoke.
    const std::vector<QuotaGrantRecord> grants = next.quota_grants;
    for (const QuotaGrantRecord& g : grants) {
      ApplyDecision(next, control::RevokeQuota{g.resource, g.amount, "WorkloadEnded"}, revoked, batch, decisions, now);
    }
  }
  const OpRef put = batch.PutJson(kWorkloadKind, next.id, ToJson(next), next.version).LastOp();
  batch.AppendEventJson(kWorkloadKind, next.id, event, EventJson(to, "", std::move(details)), now);
  for (auto& [type, d] : revoked) batch.AppendEventJson(kWorkloadKind, next.id, type, std::move(d), now);
  // Usage moves from what is committed to what is committed next: the ledger's record, not
  // `r`, which a caller may already have changed (a requeue clears the placements it ends; staged
  // against that copy, no held task was seen to end and its interval stayed open — the sixth probe).
  const WorkloadRecord* committed = ledger_.FindWorkload(r.id);
  usage_->Stage(committed != nullptr ? committed : &r, next, batch, now);
  if (stage) stage(batch, next);
  CommitRecordOnLoop(std::move(batch), put, std::move(next), audit, std::move(then), std::move(decisions));
}

void ControlPlane::CommitRecordOnLoop(WriteBatch batch, OpRef put, WorkloadRecord next, PendingRequestAudit* audit,
                                      Written then, std::vector<govern::AuditRecord> decisions) {
  auto record = std::make_shared<WorkloadRecord>(std::move(next));
  CommitForRequestOnLoop(audit, std::move(batch), std::move(decisions),
                         [this, put, record, then = std::move(then)](const Committer::Async& done) {
                           if (done.status.ok()) {
                             record->version = done.result.AssignedTo(put);
                             WriterLock lock(state_mu_);
                             if (WorkloadRecord* into = ledger_.FindWorkload(record->id)) {
                               *into = std::move(*record);
                             } else {
                               ledger_.PutWorkload(std::move(*record));
                             }
                             pacer_.Changed();
                           }
                           then(done.status);
                         });
}

}  // namespace abacus::server
