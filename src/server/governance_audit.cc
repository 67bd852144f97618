// Governance, audit writing: the chain's entries (requests' and decisions'), committed by the
// server's one committer with the changes they describe; reading, verifying and anchoring it.
#include "server/governance.h"

#include "common/log.h"
#include "govern/crypto.h"

namespace abacus::server {

using nlohmann::json;
using govern::Action;
using govern::Resource;

// ---- audit

uint64_t Governance::EnqueueAudit(govern::AuditRecord record) {
  std::vector<govern::AuditRecord> records;
  records.push_back(std::move(record));
  return committer_->Enqueue(std::move(records));
}

Status Governance::CommitAudited(const WriteBatch& batch, govern::AuditRecord record, CommitResult* result) {
  std::vector<govern::AuditRecord> records;
  records.push_back(std::move(record));
  return committer_->Commit(batch, std::move(records), result);
}

Status Governance::CommitAudited(const WriteBatch& batch, std::vector<govern::AuditRecord> records,
                                 CommitResult* result) {
  return committer_->Commit(batch, std::move(records), result);
}

Status Governance::WaitAudit(uint64_t ticket) { return committer_->Wait(ticket, options_.audit_wait); }

void Governance::AppendDecision(std::string actor, std::string action, std::string object_kind,
                                std::string object_name, std::string tenant, std::string before, std::string after,
                                std::string result) {
  EnqueueAudit(DecisionRecord(std::move(actor), std::move(action), std::move(object_kind), std::move(object_name),
                              std::move(tenant), std::move(before), std::move(after), std::move(result)));
}

govern::AuditRecord DecisionRecord(std::string actor, std::string action, std::string object_kind,
                                   std::string object_name, std::string tenant, std::string before, std::string after,
                                   std::string result) {
  govern::AuditRecord r;
  r.actor = std::move(actor);
  r.action = std::move(action);
  r.object_kind = std::move(object_kind);
  r.object_name = std::move(object_name);
  r.tenant = std::move(tenant);
  r.before = std::move(before);
  r.after = std::move(after);
  r.result = std::move(result);
  return r;
}

void Governance::FlushAudit() { committer_->Flush(); }

size_t Governance::audit_queued() const { return committer_->queued(); }

int64_t Governance::audit_failures() const { return committer_->failures(); }

Status Governance::CommitRequestChange(const WriteBatch& batch, RequestContext* context) {
  std::shared_ptr<PendingRequestAudit> pending = PendingAuditOf(context);
  std::optional<govern::AuditRecord> entry = ClaimRequestAudit(pending.get(), batch);
  if (!entry) return store_.Commit(batch);
  Status st = CommitAudited(batch, std::move(*entry), nullptr);
  SettleRequestAudit(pending.get(), st.ok());
  return st;
}


Result<std::vector<govern::AuditEntry>> Governance::ReadAudit(const AuditQuery& q) const {
  ABACUS_ASSIGN_OR_RETURN(auto entries, audit_->Read(q.after_seq, q.since ? 0 : q.limit));
  if (q.since) {
    std::vector<govern::AuditEntry> kept;
    for (auto& e : entries) {
      if (e.time >= *q.since) kept.push_back(std::move(e));
      if (q.limit != 0 && kept.size() >= q.limit) break;
    }
    return kept;
  }
  return entries;
}

std::unique_lock<std::mutex> Governance::HoldAuditCommits() const {
  // Before the committer starts (Open), nothing else writes the chain.
  return committer_ ? committer_->HoldCommits() : std::unique_lock<std::mutex>();
}

void Governance::MaybeAnchor(bool force) {
  if (!anchors_) return;
  auto io = HoldAuditCommits();  // Verify never sees an anchor newer than the entries it read
  const govern::AuditHead head = audit_->head();
  if (head.seq == anchored_seq_) return;
  const auto now = std::chrono::steady_clock::now();
  const bool due = force || anchored_seq_ < 0 || head.seq - anchored_seq_ >= options_.anchor_every_entries ||
                   now - anchored_at_ >= options_.anchor_every;
  if (!due) return;
  if (Status st = anchors_->Publish(head, clock_.Now()); !st.ok()) {
    ABACUS_LOG_ERROR("audit anchor for seq {} not written: {}", head.seq, st.ToString());
    return;
  }
  anchored_seq_ = head.seq;
  anchored_at_ = now;
}

govern::AuditHead Governance::audit_head() const {
  auto io = HoldAuditCommits();
  return audit_->head();
}

Result<std::optional<govern::AuditAnchorReport>> Governance::CheckAnchors() const {
  if (!anchors_) return std::optional<govern::AuditAnchorReport>();
  ABACUS_ASSIGN_OR_RETURN(
      govern::AuditAnchorReport report,
      govern::CheckAuditAnchors(
          options_.audit_anchor_file, audit_key_, [this]() -> Result<int64_t> { return audit_head().seq; },
          [this](int64_t seq) -> Result<std::optional<govern::AuditEntry>> {
            ABACUS_ASSIGN_OR_RETURN(std::vector<govern::AuditEntry> one, audit_->Read(seq - 1, 1));
            if (one.empty() || one.front().seq != seq) return std::optional<govern::AuditEntry>();
            return std::optional<govern::AuditEntry>(std::move(one.front()));
          }));
  return std::optional<govern::AuditAnchorReport>(std::move(report));
}

Result<govern::AuditVerifyReport> Governance::VerifyAudit() const {
  auto io = HoldAuditCommits();
  ABACUS_ASSIGN_OR_RETURN(govern::AuditVerifyReport report, audit_->Verify());
  if (!report.ok || !anchors_) return report;
  // The chain is whole as the store holds it; the anchors say whether it is the chain that was.
  ABACUS_ASSIGN_OR_RETURN(auto entries, audit_->Read());
  ABACUS_ASSIGN_OR_RETURN(auto anchored, govern::CheckAuditAnchors(options_.audit_anchor_file, audit_key_, entries));
  report.anchors = anchored.anchors;
  report.anchored_seq = anchored.anchored_seq;
  if (!anchored.ok) {
    report.ok = false;
    report.first_bad_seq = anchored.first_bad_seq;
    report.reason = anchored.reason;
  }
  return report;
}

}  // namespace abacus::server
