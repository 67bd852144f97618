// The request an HTTP thread serves (docs/governance.md): who is calling, its request id, and
// what its audit entry will say. cpp-httplib runs the pre-routing handler, the route handler and
// the post-routing handler of one request on one thread, so the context is kept per thread
// (`t_request`); the loop thread carries a request's pending audit entry (CarryRequestAudit).
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

// What the pre-routing handler learned about the request this thread serves.
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

// The request this HTTP thread serves (inactive outside a request).
extern thread_local RequestContext t_request;

// `s`, cut to the longest summary an audit entry keeps (1 KiB, ending "...").
std::string Truncate(std::string s);
// The fields of a request's entry that the request context knows (who, what, which object).
govern::AuditRecord ContextRecord(const RequestContext& ctx);
// A new request id ("req-" and 16 hex digits) for a request that brought no good X-Request-Id.
std::string NewRequestId();
// The principal of the request this thread serves; outside a request, a principal without roles.
const govern::Principal& RequestPrincipal();
// The workload id that the pre-routing handler resolved a workload route's WORKLOAD (id or
// name) to among what the caller may see; `from_path` outside such a request. Handlers act on it,
// so that what was authorized is what is changed.
std::string RequestWorkloadId(const std::string& from_path);

// Called by the Governance hooks to tell the HTTP layer what the request it serves is about, for
// its audit entry; does nothing outside a request (governance_api.cc).
void NoteRequestObject(const std::string& kind, const std::string& name, const std::string& tenant);
// The id of the HTTP request this thread serves; "" outside a request (governance_api.cc).
std::string CurrentRequestId();
// The audit entry the mutating request this thread serves gets when it succeeds with `after` as
// the summary of its answer, for a handler that commits its change and its entry together
// (Governance::CommitAudited); nullopt outside an audited request (governance_api.cc).
std::optional<govern::AuditRecord> RequestAuditRecord(std::string after);
// Tells the request's post-routing handler that its entry is committed already.
void NoteRequestAudited();
// Tells the request's post-routing handler that the request repeated an earlier one with the
// same Idempotency-Key `key` and got its first answer: nothing changed, and its entry says so.
void NoteRequestReplayed(const std::string& key);

// The audit entry of a mutating request, waiting for the commit of the request's change: the
// first commit made for the request (on the HTTP thread, or on the loop thread it was carried
// to) claims it and commits it with the change, so that the change and its entry are stored
// together or not at all (issue 20). governance_api.cc.
struct PendingRequestAudit {
  govern::AuditRecord record;       // as the request knew it when taken
  std::atomic<bool> claimed{false};    // a commit carries it now
  std::atomic<bool> committed{false};  // … and that commit succeeded
};
// Returns the pending entry of the request this thread serves or carries; null outside an
// audited request.
std::shared_ptr<PendingRequestAudit> CurrentRequestAudit();
// Makes `pending` the entry this thread carries until the guard ends (the loop thread runs a
// request's command).
class CarryRequestAudit {
 public:
  explicit CarryRequestAudit(std::shared_ptr<PendingRequestAudit> pending);
  ~CarryRequestAudit();
  CarryRequestAudit(const CarryRequestAudit&) = delete;
  CarryRequestAudit& operator=(const CarryRequestAudit&) = delete;

 private:
  std::shared_ptr<PendingRequestAudit> previous_;
};
// Claims `pending` (when not null and not claimed) for a commit of `batch`: returns its record,
// "after" summarizing what the batch writes; nullopt when there is nothing to claim.
std::optional<govern::AuditRecord> ClaimRequestAudit(PendingRequestAudit* pending, const WriteBatch& batch);
// Settles a claim: a committed entry is done; a failed commit frees it for a later commit or
// for the post-routing handler (which records the refused request).
void SettleRequestAudit(PendingRequestAudit* pending, bool committed);

}  // namespace abacus::server
