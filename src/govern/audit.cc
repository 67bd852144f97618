#include "govern/audit.h"

#include <charconv>

#include "govern/crypto.h"
#include "store/store.h"

namespace abacus::govern {
namespace {

void Field(std::string& out, std::string_view value) {
  out += std::to_string(value.size());
  out += ':';
  out += value;
  out += '\n';
}

std::string HeadText(const AuditHead& h) { return std::to_string(h.seq) + ":" + h.hash; }

Result<AuditHead> ParseHead(std::string_view text) {
  size_t colon = text.find(':');
  AuditHead h;
  if (colon == std::string_view::npos) return Internal("malformed audit head '" + std::string(text) + "'");
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + colon, h.seq);
  if (ec != std::errc() || ptr != text.data() + colon || h.seq < 0) {
    return Internal("malformed audit head '" + std::string(text) + "'");
  }
  h.hash = std::string(text.substr(colon + 1));
  if (h.hash.size() != 64) return Internal("malformed audit head '" + std::string(text) + "'");
  return h;
}

AuditVerifyReport Bad(int64_t seq, int64_t checked, std::string reason) {
  AuditVerifyReport r;
  r.ok = false;
  r.first_bad_seq = seq;
  r.checked = checked;
  r.reason = std::move(reason);
  return r;
}

}  // namespace

bool AuditEntry::operator==(const AuditEntry& o) const {
  const AuditRecord& a = record;
  const AuditRecord& b = o.record;
  return seq == o.seq && time == o.time && a.actor == b.actor && a.action == b.action &&
         a.object_kind == b.object_kind && a.object_name == b.object_name && a.tenant == b.tenant &&
         a.before == b.before && a.after == b.after && a.result == b.result && a.request_id == b.request_id &&
         prev_hash == o.prev_hash && hash == o.hash;
}

const std::string& GenesisHash() {
  static const std::string kGenesis(64, '0');
  return kGenesis;
}

std::string CanonicalAuditBytes(const AuditEntry& e) {
  const AuditRecord& r = e.record;
  std::string out = "abacus-audit-v1\n";
  Field(out, std::to_string(e.seq));
  Field(out, std::to_string(ToMicros(e.time)));
  Field(out, r.actor);
  Field(out, r.action);
  Field(out, r.object_kind);
  Field(out, r.object_name);
  Field(out, r.tenant);
  Field(out, r.before);
  Field(out, r.after);
  Field(out, r.result);
  Field(out, r.request_id);
  Field(out, e.prev_hash);
  return out;
}

std::string ComputeAuditHash(const AuditEntry& e) { return Sha256Hex(CanonicalAuditBytes(e)); }

AuditVerifyReport VerifyAudit(const std::vector<AuditEntry>& entries, const std::optional<AuditHead>& head,
                              int64_t first_seq) {
  // 1) Walk the entries: sequence, link to the previous entry, then content.
  std::string prev = first_seq == 1 ? GenesisHash() : "";
  int64_t expected = first_seq;
  int64_t checked = 0;
  for (const AuditEntry& e : entries) {
    ++checked;
    if (e.seq != expected) {
      std::string why;
      if (e.seq < expected) {
        why = "seq " + std::to_string(e.seq) + " appears where seq " + std::to_string(expected) +
              " was expected (entries reordered or duplicated)";
      } else {
        why = "seq " + std::to_string(e.seq) + " follows seq " + std::to_string(expected - 1) + " (entr" +
              (e.seq - expected == 1 ? "y " + std::to_string(expected) : "ies " + std::to_string(expected) + "-" +
                                                                              std::to_string(e.seq - 1)) +
              " removed)";
      }
      return Bad(expected, checked, why);
    }
    if (!prev.empty() && e.prev_hash != prev) {
      return Bad(e.seq, checked,
                 "seq " + std::to_string(e.seq) + ": prev_hash does not match the hash of seq " +
                     std::to_string(e.seq - 1) + " (an entry before it was edited, removed or inserted)");
    }
    if (ComputeAuditHash(e) != e.hash) {
      return Bad(e.seq, checked, "seq " + std::to_string(e.seq) + ": hash does not match its content (entry edited)");
    }
    prev = e.hash;
    ++expected;
  }
  // 2) Compare the end of the chain with the head kept apart.
  if (head) {
    int64_t last = expected - 1;
    if (last < head->seq) {
      return Bad(last + 1, checked,
                 "the log ends at seq " + std::to_string(last) + " but the head is seq " + std::to_string(head->seq) +
                     " (newest entries removed)");
    }
    if (last > head->seq) {
      return Bad(head->seq + 1, checked,
                 "the log continues past the head (seq " + std::to_string(head->seq) + ") to seq " +
                     std::to_string(last) + " (entries appended outside the audit log)");
    }
    if (last > 0 && prev != head->hash) {
      return Bad(last, checked, "seq " + std::to_string(last) + ": hash differs from the head's (chain rewritten)");
    }
  }
  AuditVerifyReport ok;
  ok.checked = checked;
  return ok;
}

AuditChain::AuditChain(const Clock& clock, AuditHead head) : clock_(clock), head_(std::move(head)) {}

AuditEntry AuditChain::Seal(AuditRecord record) const {
  AuditEntry e;
  {
    std::lock_guard lock(mu_);
    e.seq = head_.seq + 1;
    e.prev_hash = head_.hash;
  }
  e.time = clock_.Now();
  e.record = std::move(record);
  e.hash = ComputeAuditHash(e);
  return e;
}

Status AuditChain::Advance(const AuditEntry& entry) {
  std::lock_guard lock(mu_);
  if (entry.seq != head_.seq + 1 || entry.prev_hash != head_.hash) {
    return FailedPrecondition("audit entry " + std::to_string(entry.seq) + " does not follow head " +
                              std::to_string(head_.seq));
  }
  head_ = {entry.seq, entry.hash};
  return Status::OK();
}

AuditEntry AuditChain::Append(AuditRecord record) {
  std::lock_guard lock(mu_);
  AuditEntry e;
  e.seq = head_.seq + 1;
  e.prev_hash = head_.hash;
  e.time = clock_.Now();
  e.record = std::move(record);
  e.hash = ComputeAuditHash(e);
  head_ = {e.seq, e.hash};
  return e;
}

AuditHead AuditChain::head() const {
  std::lock_guard lock(mu_);
  return head_;
}

nlohmann::json AuditEntryToJson(const AuditEntry& e) {
  const AuditRecord& r = e.record;
  nlohmann::json j;  // stored and exported as is: keys in std::map order
  j["seq"] = e.seq;
  j["time"] = FormatTime(e.time);
  j["timeUs"] = ToMicros(e.time);
  j["actor"] = r.actor;
  j["action"] = r.action;
  j["object"] = {{"kind", r.object_kind}, {"name", r.object_name}};
  j["tenant"] = r.tenant;
  j["before"] = r.before;
  j["after"] = r.after;
  j["result"] = r.result;
  j["requestId"] = r.request_id;
  j["prevHash"] = e.prev_hash;
  j["hash"] = e.hash;
  return j;
}

Result<AuditEntry> AuditEntryFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgument("audit entry: expected an object");
  auto str = [&](const nlohmann::json& obj, const char* key, std::string& out) -> Status {
    auto it = obj.find(key);
    if (it == obj.end() || !it->is_string()) return InvalidArgument(std::string("audit entry: ") + key + ": expected a string");
    out = it->get<std::string>();
    return Status::OK();
  };
  auto integer = [&](const char* key, int64_t& out) -> Status {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) return InvalidArgument(std::string("audit entry: ") + key + ": expected an integer");
    out = it->get<int64_t>();
    return Status::OK();
  };
  AuditEntry e;
  AuditRecord& r = e.record;
  int64_t time_us = 0;
  ABACUS_RETURN_IF_ERROR(integer("seq", e.seq));
  ABACUS_RETURN_IF_ERROR(integer("timeUs", time_us));
  e.time = FromMicros(time_us);
  ABACUS_RETURN_IF_ERROR(str(j, "actor", r.actor));
  ABACUS_RETURN_IF_ERROR(str(j, "action", r.action));
  auto obj = j.find("object");
  if (obj == j.end() || !obj->is_object()) return InvalidArgument("audit entry: object: expected an object");
  ABACUS_RETURN_IF_ERROR(str(*obj, "kind", r.object_kind));
  ABACUS_RETURN_IF_ERROR(str(*obj, "name", r.object_name));
  ABACUS_RETURN_IF_ERROR(str(j, "tenant", r.tenant));
  ABACUS_RETURN_IF_ERROR(str(j, "before", r.before));
  ABACUS_RETURN_IF_ERROR(str(j, "after", r.after));
  ABACUS_RETURN_IF_ERROR(str(j, "result", r.result));
  ABACUS_RETURN_IF_ERROR(str(j, "requestId", r.request_id));
  ABACUS_RETURN_IF_ERROR(str(j, "prevHash", e.prev_hash));
  ABACUS_RETURN_IF_ERROR(str(j, "hash", e.hash));
  return e;
}

std::string ExportAuditJsonLines(const std::vector<AuditEntry>& entries) {
  std::string out;
  for (const auto& e : entries) {
    out += AuditEntryToJson(e).dump();
    out += '\n';
  }
  return out;
}

Result<std::vector<AuditEntry>> ImportAuditJsonLines(std::string_view text) {
  std::vector<AuditEntry> out;
  size_t line_no = 0;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) return InvalidArgument("line " + std::to_string(line_no) + ": not valid JSON");
    auto e = AuditEntryFromJson(j);
    if (!e.ok()) return e.status().WithContext("line " + std::to_string(line_no));
    out.push_back(std::move(*e));
  }
  return out;
}

Result<std::unique_ptr<AuditLog>> AuditLog::Open(Store& store, const Clock& clock) {
  ABACUS_ASSIGN_OR_RETURN(auto stored, store.GetMeta(kHeadMeta));
  AuditHead head{0, GenesisHash()};
  if (stored) {
    ABACUS_ASSIGN_OR_RETURN(head, ParseHead(*stored));
  } else {
    ABACUS_ASSIGN_OR_RETURN(auto legacy, store.Journal(kStream, 0, 0));
    if (!legacy.empty()) head.seq = legacy.back().seq;
  }
  return std::unique_ptr<AuditLog>(new AuditLog(store, clock, std::move(head)));
}

Result<std::vector<AuditEntry>> AuditLog::CommitMany(WriteBatch batch, std::vector<AuditRecord> records,
                                                     CommitResult* batch_result) {
  std::lock_guard lock(commit_mu_);
  AuditChain next(clock_, chain_.head());
  std::vector<AuditEntry> entries;
  entries.reserve(records.size());
  const size_t first_op = batch.size();
  for (auto& r : records) {
    entries.push_back(next.Append(std::move(r)));
    batch.AppendJournalJsonAt(std::string(kStream), AuditEntryToJson(entries.back()), entries.back().time,
                              entries.back().seq);
  }
  if (entries.empty()) {
    if (batch_result != nullptr) batch_result->assigned.clear();
    if (!batch.empty()) ABACUS_RETURN_IF_ERROR(store_.Commit(batch, batch_result));
    return entries;
  }
  batch.PutMeta(std::string(kHeadMeta), HeadText(next.head()));
  CommitResult result;
  if (Status st = store_.Commit(batch, &result); !st.ok()) return ExplainFailedCommit(st);
  for (size_t i = 0; i < entries.size(); ++i) {
    ABACUS_RETURN_IF_ERROR(chain_.Advance(entries[i]));
    size_t op = first_op + i;
    int64_t journal_seq = op < result.assigned.size() ? result.assigned[op] : -1;
    if (journal_seq != entries[i].seq) {
      return Internal("audit entry " + std::to_string(entries[i].seq) + " was stored as journal seq " +
                      std::to_string(journal_seq) + ": the audit stream was written outside AuditLog");
    }
  }
  if (batch_result != nullptr) {
    result.assigned.resize(first_op);
    *batch_result = std::move(result);
  }
  return entries;
}

Result<AuditEntry> AuditLog::Commit(WriteBatch batch, AuditRecord record) {
  std::lock_guard lock(commit_mu_);
  AuditEntry e = chain_.Seal(std::move(record));
  batch.AppendJournalJsonAt(std::string(kStream), AuditEntryToJson(e), e.time, e.seq);
  batch.PutMeta(std::string(kHeadMeta), HeadText({e.seq, e.hash}));
  CommitResult result;
  if (Status st = store_.Commit(batch, &result); !st.ok()) return ExplainFailedCommit(st);
  // The journal op is the second-to-last op of the batch; its seq must be the entry's.
  int64_t journal_seq = result.assigned.size() >= 2 ? result.assigned[result.assigned.size() - 2] : -1;
  ABACUS_RETURN_IF_ERROR(chain_.Advance(e));
  if (journal_seq != e.seq) {
    return Internal("audit entry " + std::to_string(e.seq) + " was stored as journal seq " +
                    std::to_string(journal_seq) + ": the audit stream was written outside AuditLog");
  }
  return e;
}

Status AuditLog::ExplainFailedCommit(const Status& failed) const {
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
  return Internal("the store's audit stream is out of step with this server's audit log (head seq " +
                  std::to_string(head.seq) + ", " + found +
                  "): nothing of this request was stored. Another server may be writing to the same store, or an "
                  "audit entry was deleted; see `abacus audit --verify`");
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
      return Bad(r.seq, static_cast<int64_t>(entries.size()) + 1,
                 "journal seq " + std::to_string(r.seq) + " is unreadable: " + e.status().message());
    }
    if (e->seq != r.seq) {
      return Bad(r.seq, static_cast<int64_t>(entries.size()) + 1,
                 "journal seq " + std::to_string(r.seq) + " holds audit seq " + std::to_string(e->seq));
    }
    entries.push_back(std::move(*e));
  }
  ABACUS_ASSIGN_OR_RETURN(auto stored, store_.GetMeta(kHeadMeta));
  std::optional<AuditHead> head;
  if (stored) {
    ABACUS_ASSIGN_OR_RETURN(head, ParseHead(*stored));
  } else {
    head = AuditHead{0, GenesisHash()};
  }
  return VerifyAudit(entries, head);
}

}  // namespace abacus::govern
