#include "govern/audit.h"

#include <charconv>

#include "common/mutex.h"
#include "govern/crypto.h"

namespace abacus::govern {
namespace {

void Field(std::string& out, std::string_view value) {
  out += std::to_string(value.size());
  out += ':';
  out += value;
  out += '\n';
}

}  // namespace

std::string AuditHeadText(const AuditHead& h) { return std::to_string(h.seq) + ":" + h.hash; }

Result<AuditHead> ParseAuditHead(std::string_view text) {
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

AuditVerifyReport AuditVerifyFailure(int64_t seq, int64_t checked, std::string reason) {
  AuditVerifyReport r;
  r.ok = false;
  r.first_bad_seq = seq;
  r.checked = checked;
  r.reason = std::move(reason);
  return r;
}

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
      return AuditVerifyFailure(expected, checked, why);
    }
    if (!prev.empty() && e.prev_hash != prev) {
      return AuditVerifyFailure(e.seq, checked,
                 "seq " + std::to_string(e.seq) + ": prev_hash does not match the hash of seq " +
                     std::to_string(e.seq - 1) + " (an entry before it was edited, removed or inserted)");
    }
    if (ComputeAuditHash(e) != e.hash) {
      return AuditVerifyFailure(e.seq, checked, "seq " + std::to_string(e.seq) + ": hash does not match its content (entry edited)");
    }
    prev = e.hash;
    ++expected;
  }
  // 2) Compare the end of the chain with the head kept apart.
  if (head) {
    int64_t last = expected - 1;
    if (last < head->seq) {
      return AuditVerifyFailure(last + 1, checked,
                 "the log ends at seq " + std::to_string(last) + " but the head is seq " + std::to_string(head->seq) +
                     " (newest entries removed)");
    }
    if (last > head->seq) {
      return AuditVerifyFailure(head->seq + 1, checked,
                 "the log continues past the head (seq " + std::to_string(head->seq) + ") to seq " +
                     std::to_string(last) + " (entries appended outside the audit log)");
    }
    if (last > 0 && prev != head->hash) {
      return AuditVerifyFailure(last, checked, "seq " + std::to_string(last) + ": hash differs from the head's (chain rewritten)");
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
    MutexLock lock(mu_);
    e.seq = head_.seq + 1;
    e.prev_hash = head_.hash;
  }
  e.time = clock_.Now();
  e.record = std::move(record);
  e.hash = ComputeAuditHash(e);
  return e;
}

Status AuditChain::Advance(const AuditEntry& entry) {
  MutexLock lock(mu_);
  if (entry.seq != head_.seq + 1 || entry.prev_hash != head_.hash) {
    return FailedPrecondition("audit entry " + std::to_string(entry.seq) + " does not follow head " +
                              std::to_string(head_.seq));
  }
  head_ = {entry.seq, entry.hash};
  return Status::OK();
}

AuditEntry AuditChain::Append(AuditRecord record) {
  MutexLock lock(mu_);
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
  MutexLock lock(mu_);
  return head_;
}

}  // namespace abacus::govern
