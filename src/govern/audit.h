// The audit log: one entry per mutating request and per decision that touches a user's work
// (admission, preemption, reclaim, rollback, quota change), hash-chained so that any edited,
// removed, reordered or inserted entry is detected.
//
// Chain: entry n carries prev_hash = hash of entry n-1 (64 "0" for entry 1) and
// hash = hex SHA-256 of CanonicalAuditBytes(entry), which covers every field but `hash`
// itself, prev_hash included. Removing the newest entries leaves a valid shorter chain; the
// store adapter keeps the head (seq and hash of the newest entry) in the store's meta table,
// and Verify checks the chain against it when given.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"

namespace abacus {
class Store;
class WriteBatch;
struct CommitResult;
}  // namespace abacus

namespace abacus::govern {

// What happened, before it is sealed into the chain.
struct AuditRecord {
  std::string actor;        // "user alice", "agent gpu-01", "scheduler", "controller/inference"
  std::string action;       // "create", "cancel", "admit", "preempt", "reclaim", "quota-change", …
  std::string object_kind;  // "workload", "queue", "policy", …
  std::string object_name;  // "nlp/llm/ft-1"
  std::string tenant;       // owning tenant, for filtering by tenant-admins; empty: cluster-level
  std::string before;       // short summary of the state before (often compact JSON); may be empty
  std::string after;        // … and after
  std::string result;       // "ok", or "<status code>: <message>" for a refused request
  std::string request_id;   // the HTTP request id; empty for internal decisions
};

// One sealed entry.
struct AuditEntry {
  int64_t seq = 0;  // 1, 2, 3, … without gaps
  Time time{};
  AuditRecord record;
  std::string prev_hash;  // 64 hex
  std::string hash;       // 64 hex

  bool operator==(const AuditEntry& o) const;
};

// The prev_hash of the first entry: 64 "0".
const std::string& GenesisHash();

// Returns the bytes that `hash` covers: a version tag, then every field as
// "<decimal length>:<bytes>\n" in a fixed order (seq, time in microseconds, actor, action,
// object kind, object name, tenant, before, after, result, request id, prev_hash).
std::string CanonicalAuditBytes(const AuditEntry& e);
// Returns the hash an entry must carry: hex SHA-256 of CanonicalAuditBytes(e).
std::string ComputeAuditHash(const AuditEntry& e);

// The newest entry of a chain, kept apart from the entries to detect truncation.
struct AuditHead {
  int64_t seq = 0;
  std::string hash;
  bool operator==(const AuditHead&) const = default;
};

// What Verify found.
struct AuditVerifyReport {
  bool ok = true;
  int64_t checked = 0;   // entries read
  int64_t first_bad_seq = 0;  // 0 when ok; otherwise the first seq (or position) that fails
  std::string reason;    // why, e.g. "seq 7: hash does not match its content (entry edited)"
  int64_t anchors = 0;       // anchors checked outside the store (govern/audit_anchor.h)
  int64_t anchored_seq = 0;  // the newest anchor's seq
};

// Checks `entries` in order: seq starts at `first_seq` (1 for a whole log) and grows by one,
// each prev_hash equals the previous hash (GenesisHash for seq 1; taken on trust for a later
// first_seq), each hash matches the content. With `head`, the last entry must be head.seq with
// head.hash (detects removal of the newest entries).
AuditVerifyReport VerifyAudit(const std::vector<AuditEntry>& entries, const std::optional<AuditHead>& head = std::nullopt,
                              int64_t first_seq = 1);

// The head as stored in meta ("<seq>:<hash>") and back; Internal when malformed.
std::string AuditHeadText(const AuditHead& h);
Result<AuditHead> ParseAuditHead(std::string_view text);
// A failed verification at `seq` after `checked` entries, for `reason`.
AuditVerifyReport AuditVerifyFailure(int64_t seq, int64_t checked, std::string reason);

// Seals records into entries, one after another; safe to call from several threads.
class AuditChain {
 public:
  // Starts after `head` (a new chain when seq 0).
  explicit AuditChain(const Clock& clock, AuditHead head = {0, GenesisHash()});

  // Returns the next entry for `record` without advancing the chain.
  AuditEntry Seal(AuditRecord record) const;
  // Advances the chain past `entry`, which must be the entry Seal returned last (its seq is
  // head().seq + 1 and its prev_hash head().hash); FailedPrecondition otherwise.
  Status Advance(const AuditEntry& entry);
  // Seal + Advance.
  AuditEntry Append(AuditRecord record);
  AuditHead head() const;

 private:
  const Clock& clock_;
  mutable Mutex mu_;
  AuditHead head_ GUARDED_BY(mu_);
};

// JSON form of an entry (one line of an export): {"seq":…, "time":"RFC 3339",
// "timeUs":…, "actor":…, "action":…, "object":{"kind":…,"name":…}, "tenant":…, "before":…,
// "after":…, "result":…, "requestId":…, "prevHash":…, "hash":…}. "time" is for people;
// "timeUs" is what the hash covers.
nlohmann::json AuditEntryToJson(const AuditEntry& e);
// The same entry as JSON text: AuditEntryToJson(e).dump(), byte for byte (the one encoder;
// AuditEntryToJson parses it). Strings must be valid UTF-8 (the committer makes them so).
std::string AuditEntryJsonText(const AuditEntry& e);
Result<AuditEntry> AuditEntryFromJson(const nlohmann::json& j);
// Returns the entries as JSON lines (one object per line, each ending in "\n").
std::string ExportAuditJsonLines(const std::vector<AuditEntry>& entries);
// Reads JSON lines (blank lines skipped); InvalidArgument naming the line of the first bad one.
Result<std::vector<AuditEntry>> ImportAuditJsonLines(std::string_view text);

// The store-backed audit log: entries go to the journal stream "audit" (journal seq = entry
// seq) and the head to meta "audit.head" ("<seq>:<hash>"), in the same commit as the change
// they record. Safe to call from several threads; commits through it are serialized.
class AuditLog {
 public:
  static constexpr std::string_view kStream = "audit";
  static constexpr std::string_view kHeadMeta = "audit.head";

  // Resumes the chain from the store's head (a new chain when there is none). A stream that
  // holds entries but no head (written before the chain existed) is continued after its last
  // entry; Verify reports those older entries as unreadable.
  static Result<std::unique_ptr<AuditLog>> Open(Store& store, const Clock& clock);

  // Seals `record`, adds it (and the new head) to `batch`, commits `batch` and advances the
  // chain. Returns the entry, or the commit's error (then neither the batch nor the entry is
  // written, and the chain stays where it was). The entry must be stored as journal seq =
  // entry seq, checked inside the commit: when the stream was written by someone else (a second
  // server, a deleted row) nothing is written and the error is Internal naming the audit stream.
  Result<AuditEntry> Commit(WriteBatch batch, AuditRecord record);
  // Commit with an empty batch: records a decision on its own.
  Result<AuditEntry> Append(AuditRecord record);
  // Seals `records` one after another, adds them all (and the new head) to `batch` and commits
  // once: a group commit of several entries. All or none, like Commit. When `result` is set, it
  // gets what the commit assigned to `batch`'s own ops (the first batch.size() of them).
  Result<std::vector<AuditEntry>> CommitMany(WriteBatch batch, std::vector<AuditRecord> records,
                                             CommitResult* result = nullptr);

  // Returns entries with seq > after_seq, at most `limit` (0: all), in seq order; Internal when
  // a stored entry is unreadable.
  Result<std::vector<AuditEntry>> Read(int64_t after_seq = 0, size_t limit = 0) const;
  // Reads every entry and verifies the chain against the stored head; also checks that each
  // entry's seq is its journal seq.
  Result<AuditVerifyReport> Verify() const;
  AuditHead head() const { return chain_.head(); }
  // Why this log can no longer commit: set (for good) once a commit found the store's audit
  // stream out of step with the chain (another writer, a deleted row); empty while in step. A
  // server in that state refuses every write until it is restarted, so it is not ready.
  std::string OutOfStep() const;
  // Why this log cannot commit now: OutOfStep(), or — while the last commit was refused for lack
  // of space (IsStorageFull), until one succeeds — that the store is full. Empty while it writes.
  // /readyz answers 503 with it.
  std::string NotWriting() const;

 private:
  // Returns `failed`, or Internal naming the audit stream when a refused commit was refused
  // because the store's audit stream no longer ends at the chain's head.
  Status ExplainFailedCommit(const Status& failed);
  // Records `why` as OutOfStep() (the first reason stays) and returns it as Internal.
  Status MarkOutOfStep(std::string why);
  // Notes whether a commit of the store was refused for lack of space; returns `st`.
  Status NoteCommit(Status st);

  AuditLog(Store& store, const Clock& clock, AuditHead head)
      : store_(store), clock_(clock), chain_(clock, std::move(head)) {}

  Store& store_;
  const Clock& clock_;
  AuditChain chain_;
  Mutex commit_mu_;
  mutable Mutex out_of_step_mu_;
  std::string out_of_step_ GUARDED_BY(out_of_step_mu_);
  bool storage_full_ GUARDED_BY(out_of_step_mu_) = false;
};

}  // namespace abacus::govern
