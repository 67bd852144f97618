// The request a write serves (docs/governance.md): who is calling, its request id, and what its
// audit entry will say. The HTTP layer keeps one per request (request_thread.h) and passes it
// down explicitly: ControlPlane, Governance and SecretVault take a `RequestContext*` (null: no
// request — the loop's own writes, tests, the bench) and write what they learn into it (the
// object, a replayed key, an entry committed). A command run on the loop gets the request's
// pending audit entry through its LoopReply (loop_reply.h, ControlPlane::AnswerOnLoop), never
// from thread state.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "govern/audit.h"
#include "govern/identity.h"
#include "server/caller.h"
#include "store/store.h"

namespace abacus::server {

struct PendingRequestAudit;

// What the pre-routing handler learned about a request, and what serving it taught the core.
struct RequestContext {
  bool active = false;
  Caller caller;
  std::string request_id;
  bool audit = false;     // a mutating request: its entry is written before the answer
  std::string action;     // audit action
  std::string object_kind, object_name, tenant;
  std::string before;
  std::string workload_id;  // a workload route: read again for the "after" summary
  bool audited = false;     // the handler committed the entry with its change (CommitAudited)
  std::string replayed_key;  // the answer is an earlier request's, by its Idempotency-Key
  std::shared_ptr<PendingRequestAudit> pending;  // claimed by the commit of the change, if any
};

// `s`, cut to the longest summary an audit entry keeps (1 KiB, ending "...").
std::string TruncateSummary(std::string s);
// The fields of a request's entry that the request context knows (who, what, which object).
govern::AuditRecord ContextRecord(const RequestContext& ctx);
// A new request id ("req-" and 16 hex digits) for a request that brought no good X-Request-Id.
std::string NewRequestId();

// Tells `request` (null or inactive: nothing) what it is about, for its audit entry (the
// Governance and SecretVault hooks).
void NoteRequestObject(RequestContext* request, const std::string& kind, const std::string& name,
                       const std::string& tenant);
// The id of `request`; "" for none.
std::string RequestIdOf(const RequestContext* request);
// The audit entry `request` gets when it succeeds with `after` as the summary of its answer, for
// a write that commits its change and its entry together; nullopt for none or an unaudited one.
std::optional<govern::AuditRecord> RequestAuditRecord(const RequestContext* request, std::string after);
// Tells `request`'s post-routing handler that its entry is committed already.
void NoteRequestAudited(RequestContext* request);
// Tells `request`'s post-routing handler that it repeated an earlier request with the same
// Idempotency-Key `key` and got its first answer: nothing changed, and its entry says so.
void NoteRequestReplayed(RequestContext* request, const std::string& key);

// The audit entry of a mutating request, waiting for the commit of the request's change: the
// first commit made for the request (on the HTTP thread, or on the loop thread it was passed
// to) claims it and commits it with the change, so that the change and its entry are stored
// together or not at all (issue 20).
struct PendingRequestAudit {
  govern::AuditRecord record;       // as the request knew it when taken
  std::atomic<bool> claimed{false};    // a commit carries it now
  std::atomic<bool> committed{false};  // … and that commit succeeded
};
// Returns the pending entry of `request`, made on first use and refreshed with what the request
// knows now until claimed; null for none, an unaudited request or one whose entry is committed.
std::shared_ptr<PendingRequestAudit> PendingAuditOf(RequestContext* request);
// Claims `pending` (when not null and not claimed) for a commit of `batch`: returns its record,
// "after" summarizing what the batch writes; nullopt when there is nothing to claim.
std::optional<govern::AuditRecord> ClaimRequestAudit(PendingRequestAudit* pending, const WriteBatch& batch);
// Settles a claim: a committed entry is done; a failed commit frees it for a later commit or
// for the post-routing handler (which records the refused request).
void SettleRequestAudit(PendingRequestAudit* pending, bool committed);

}  // namespace abacus::server
