// The store-backed audit log (AuditLog): apart from audit.cc so that the CLI, which reads the
// server's export, does not link the stores.
#include "common/mutex.h"
#include "govern/audit.h"
#include "store/storage_full.h"
#include "store/store.h"

namespace abacus::govern {
namespace {

// Why a committed entry does not stand where the chain put it: something else wrote the stream.
std::string StoredElsewhere(int64_t entry_seq, int64_t journal_seq) {
  return "audit entry " + std::to_string(entry_seq) + " was stored as journal seq " + std::to_string(journal_seq) +
         ": the audit stream was written outside AuditLog";
}

}  // namespace

Result<std::unique_ptr<AuditLog>> AuditLog::Open(Store& store, const Clock& clock) {
  ABACUS_ASSIGN_OR_RETURN(auto stored, store.GetMeta(kHeadMeta));
  AuditHead head{0, GenesisHash()};
  if (stored) {
    ABACUS_ASSIGN_OR_RETURN(head, ParseAuditHead(*stored));
  } else {
    ABACUS_ASSIGN_OR_RETURN(auto legacy, store.Journal(kStream, 0, 0));
    if (!legacy.empty()) head.seq = legacy.back().seq;
  }
  return std::unique_ptr<AuditLog>(new AuditLog(store, clock, std::move(head)));
}

Result<std::vector<AuditEntry>> AuditLog::CommitMany(WriteBatch batch, std::vector<AuditRecord> records,
                                                     CommitResult* batch_result) {
  MutexLock lock(commit_mu_);
  AuditChain next(clock_, chain_.head());
  std::vector<AuditEntry> entries;
  entries.reserve(records.size());
  const size_t first_op = batch.size();
  std::vector<OpRef> journal_ops;  // entries[i]'s journal op
  journal_ops.reserve(records.size());
  for (auto& r : records) {
    entries.push_back(next.Append(std::move(r)));
    batch.AppendJournalTextAt(std::string(kStream), AuditEntryJsonText(entries.back()), entries.back().time,
                              entries.back().seq);
    journal_ops.push_back(batch.LastOp());
  }
  if (entries.empty()) {
    if (batch_result != nullptr) batch_result->assigned.clear();
    if (!batch.empty()) ABACUS_RETURN_IF_ERROR(NoteCommit(store_.Commit(batch, batch_result)));
    return entries;
  }
  batch.PutMeta(std::string(kHeadMeta), AuditHeadText(next.head()));
  CommitResult result;
  if (Status st = NoteCommit(store_.Commit(batch, &result)); !st.ok()) return ExplainFailedCommit(st);
  for (size_t i = 0; i < entries.size(); ++i) {
    ABACUS_RETURN_IF_ERROR(chain_.Advance(entries[i]));
    int64_t journal_seq = result.AssignedTo(journal_ops[i]);
    if (journal_seq != entries[i].seq) {
      return MarkOutOfStep(StoredElsewhere(entries[i].seq, journal_seq));
    }
  }
  if (batch_result != nullptr) {
    result.assigned.resize(first_op);
    *batch_result = std::move(result);
  }
  return entries;
}

Result<AuditEntry> AuditLog::Commit(WriteBatch batch, AuditRecord record) {
  MutexLock lock(commit_mu_);
  AuditEntry e = chain_.Seal(std::move(record));
  const OpRef journal = batch.AppendJournalTextAt(std::string(kStream), AuditEntryJsonText(e), e.time, e.seq).LastOp();
  batch.PutMeta(std::string(kHeadMeta), AuditHeadText({e.seq, e.hash}));
  CommitResult result;
  if (Status st = NoteCommit(store_.Commit(batch, &result)); !st.ok()) return ExplainFailedCommit(st);
  // The journal op's seq must be the entry's.
  int64_t journal_seq = result.AssignedTo(journal);
  ABACUS_RETURN_IF_ERROR(chain_.Advance(e));
  if (journal_seq != e.seq) {
    return MarkOutOfStep(StoredElsewhere(e.seq, journal_seq));
  }
  return e;
}

std::string AuditLog::OutOfStep() const {
  MutexLock lock(out_of_step_mu_);
  return out_of_step_;
}

std::string AuditLog::NotWriting() const {
  MutexLock lock(out_of_step_mu_);
  if (!out_of_step_.empty()) return out_of_step_;
  if (storage_full_) return "the store is full: every write is refused until space is freed";
  return "";
}

Status AuditLog::NoteCommit(Status st) {
  MutexLock lock(out_of_step_mu_);
  storage_full_ = IsStorageFull(st);
  return st;
}

Status AuditLog::MarkOutOfStep(std::string why) {
  MutexLock lock(out_of_step_mu_);
  if (out_of_step_.empty()) out_of_step_ = why;
  return Internal(std::move(why));
}

Status AuditLog::ExplainFailedCommit(const Status& failed) {
  if (failed.code() != StatusCode::kAborted) return failed;
  // Refused: a version conflict of the caller's own batch, or the audit stream's seq. The
  // stream is in step when its newest entry is the chain's head.
  const AuditHead head = chain_.head();
  auto tail = store_.Journal(kStream, head.seq > 0 ? head.seq - 1 : 0, 2);
  if (tail.ok()) {
    const bool in_step = head.seq == 0 ? tail->empty() : tail->size() == 1 && (*tail)[0].seq == head.seq;
    if (in_step) return failed;
  }
  std::string found = !tail.ok()      ? "the stream is unreadable"
                      : tail->empty() ? "the stream ends before it"
                                      : "the stream holds entries past it";
  return MarkOutOfStep("the store's audit stream is out of step with this server's audit log (head seq " +
                       std::to_string(head.seq) + ", " + found +
                       "): nothing of this request was stored. Another server may be writing to the same store, or "
                       "an audit entry was deleted; see `abacus audit --verify`");
}

Result<AuditEntry> AuditLog::Append(AuditRecord record) { return Commit(WriteBatch(), std::move(record)); }

Result<std::vector<AuditEntry>> AuditLog::Read(int64_t after_seq, size_t limit) const {
  ABACUS_ASSIGN_OR_RETURN(auto records, store_.Journal(kStream, after_seq, limit));
  std::vector<AuditEntry> out;
  out.reserve(records.size());
  for (const auto& r : records) {
    auto j = nlohmann::json::parse(r.json, nullptr, false);
    if (j.is_discarded()) return Internal("audit journal seq " + std::to_string(r.seq) + " is not JSON");
    auto e = AuditEntryFromJson(j);
    if (!e.ok()) return Internal("audit journal seq " + std::to_string(r.seq) + ": " + e.status().message());
    out.push_back(std::move(*e));
  }
  return out;
}

Result<AuditVerifyReport> AuditLog::Verify() const {
  ABACUS_ASSIGN_OR_RETURN(auto records, store_.Journal(kStream, 0, 0));
  std::vector<AuditEntry> entries;
  entries.reserve(records.size());
  for (const auto& r : records) {
    auto j = nlohmann::json::parse(r.json, nullptr, false);
    auto e = j.is_discarded() ? Result<AuditEntry>(InvalidArgument("not JSON")) : AuditEntryFromJson(j);
    if (!e.ok()) {
      return AuditVerifyFailure(r.seq, static_cast<int64_t>(entries.size()) + 1,
                 "journal seq " + std::to_string(r.seq) + " is unreadable: " + e.status().message());
    }
    if (e->seq != r.seq) {
      return AuditVerifyFailure(r.seq, static_cast<int64_t>(entries.size()) + 1,
                 "journal seq " + std::to_string(r.seq) + " holds audit seq " + std::to_string(e->seq));
    }
    entries.push_back(std::move(*e));
  }
  ABACUS_ASSIGN_OR_RETURN(auto stored, store_.GetMeta(kHeadMeta));
  std::optional<AuditHead> head;
  if (stored) {
    ABACUS_ASSIGN_OR_RETURN(head, ParseAuditHead(*stored));
  } else {
    head = AuditHead{0, GenesisHash()};
  }
  return VerifyAudit(entries, head);
}

}  // namespace abacus::govern
