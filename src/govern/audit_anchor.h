// Audit anchors: the audit chain's head, signed with a key kept outside the store and appended
// to a file on another path, so that a rewrite of the whole chain (re-hashed, head forged) or
// the deletion of every entry is detected, which the chain alone cannot do (issue 20, point 21).
//
// An anchor is one JSON line {"seq":N,"hash":H,"timeUs":T,"mac":M}: M is hex HMAC-SHA256 under
// the audit key of "abacus-audit-anchor-v1\n<seq>\n<hash>\n<timeUs>\n". The server appends one
// every `every_entries` entries or `every` time while the chain grows, and on shutdown
// (O_APPEND, fsync). Verification checks every anchor's MAC, then that the chain holds each
// anchored seq with the anchored hash and reaches the newest anchor.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "govern/audit.h"

namespace abacus::govern {

// Returns the audit key stored at `path` (64 hex characters = 32 bytes), creating it with a
// fresh random key (mode 0600) when the file does not exist. InvalidArgument when the file
// holds something else or is readable by others; Unavailable on an I/O error.
Result<std::string> LoadOrCreateAuditKey(const std::string& path);

// Whether the audit key at `key_path` and the anchors at `anchor_path` can sign and extend the
// anchor history of a chain whose head is `chain_seq`, before either is created (server start):
//   - anchors there, key gone: FailedPrecondition (a new key would make every anchor unverifiable,
//     for good, even once the key is put back);
//   - key there, no anchor (file gone or empty) while the chain holds entries: FailedPrecondition
//     (the anchors were deleted, or a restore left them out: starting would anchor the chain as
//     it now is, and a rollback or rewrite of it would verify);
//   - neither, the chain holding entries: OK with `*new_history` set — a new data folder on an
//     existing store (an HA server), or an operator who moved both away on purpose.
Status CheckAnchorFilesAtStart(const std::string& key_path, const std::string& anchor_path, int64_t chain_seq,
                               bool* new_history);

struct AuditAnchor {
  int64_t seq = 0;
  std::string hash;
  Time time{};
  std::string mac;
};

// Returns the anchor line (ending in "\n") for `head` at `time`, signed with `key`.
std::string FormatAuditAnchor(const AuditHead& head, Time time, const std::string& key);

// Appends anchors to a file opened O_APPEND (created mode 0600); one writer per process.
class AuditAnchorWriter {
 public:
  // Opens (creates) `path`; Unavailable when it cannot.
  static Result<std::unique_ptr<AuditAnchorWriter>> Open(const std::string& path, std::string key);
  ~AuditAnchorWriter();
  AuditAnchorWriter(const AuditAnchorWriter&) = delete;
  AuditAnchorWriter& operator=(const AuditAnchorWriter&) = delete;

  // Appends and syncs an anchor for `head` at `time`. Unavailable on an I/O error.
  Status Publish(const AuditHead& head, Time time);

 private:
  AuditAnchorWriter(int fd, std::string path, std::string key) : fd_(fd), path_(std::move(path)), key_(std::move(key)) {}
  int fd_;
  std::string path_;
  std::string key_;
};

// What the anchors say about a chain.
struct AuditAnchorReport {
  bool ok = true;
  int64_t anchors = 0;        // anchors read (all with a good MAC when ok)
  int64_t anchored_seq = 0;   // the newest anchor's seq (0: none)
  int64_t first_bad_seq = 0;  // when !ok: the seq the first failing anchor names
  std::string reason;
};

// Reads the anchors at `path` (a missing file: none) and checks them with `key`, then checks
// `entries` (the whole chain, seq 1 first, as the store holds it) against them: every anchor
// must carry a good MAC (else the anchor file was forged or the key changed), the chain must
// reach the newest anchor's seq (else entries were deleted) and hold each anchored seq with
// the anchored hash (else the chain was rewritten). Unavailable when the file is unreadable.
Result<AuditAnchorReport> CheckAuditAnchors(const std::string& path, const std::string& key,
                                            const std::vector<AuditEntry>& entries);

// The same check against a chain read entry by entry: `newest_seq` gives the chain's newest seq,
// asked after the anchors are read (an anchor written meanwhile names a seq already committed),
// and `entry_at` the entry at one seq (nullopt: missing), so that only the anchored entries are
// read (the background check, AuditWatch, on a chain of millions of entries).
using AuditEntryAt = std::function<Result<std::optional<AuditEntry>>(int64_t seq)>;
Result<AuditAnchorReport> CheckAuditAnchors(const std::string& path, const std::string& key,
                                            const std::function<Result<int64_t>()>& newest_seq,
                                            const AuditEntryAt& entry_at);

}  // namespace abacus::govern
