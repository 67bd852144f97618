// Governance in the server (issue 9; reference: docs/governance.md): who is calling (the
// bootstrap tokens of auth.h plus users and API tokens of govern::TokenRegistry), what each
// caller may do (govern::Authorize), what every change and decision was (the audit hash chain,
// sealed by the server's one committer into the commit of the change), what a tenant's
// workloads may use (admission policies, checked on submit) and how fast each token may call
// (a token bucket per token).
//
// The ControlPlane owns one Governance and calls it from two hooks: Submit (CheckSubmit:
// authorization of each workload and admission) and Apply (PlanApply: authorization of every
// document, and the User and AdmissionPolicy documents, committed in the same batch as the
// tenancy documents). The HTTP layer (governance_api.cc) calls the rest.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "govern/audit.h"
#include "govern/audit_anchor.h"
#include "govern/authorize.h"
#include "govern/identity.h"
#include "server/applied_view.h"
#include "server/auth.h"
#include "server/caller.h"
#include "server/committer.h"
#include "server/governance_views.h"
#include "server/request_context.h"
#include "store/store.h"
#include "tenancy/tenancy_config.h"
#include "workload/documents.h"
#include "workload/governance_spec.h"

namespace abacus::server {

// A token bucket per key: `rate` tokens a second, at most `burst` saved up. Thread-safe.
class RateLimiter {
 public:
  using SteadyTime = std::chrono::steady_clock::time_point;
  // rate <= 0: unlimited. burst <= 0: twice the rate (at least 1).
  RateLimiter(double rate, double burst);
  // Takes one token from `key`'s bucket; returns 0 when the call may go ahead, else the seconds
  // until the bucket holds a token again.
  double Take(const std::string& key, SteadyTime now);
  double rate() const { return rate_; }
  double burst() const { return burst_; }

 private:
  struct Bucket {
    double tokens = 0;
    SteadyTime last{};
  };
  double rate_, burst_;
  Mutex mu_;
  std::unordered_map<std::string, Bucket> buckets_ GUARDED_BY(mu_);
};

// Store kind of admission policies (key: name, JSON: EncodeAdmissionPolicy).
inline constexpr std::string_view kPolicyStoreKind = "admissionpolicy";
// The audit entry of a decision by `actor` ("scheduler", "controller/KIND") that touches a user's
// work (admit, preempt, reclaim, fail, requeue, rollback, scale, quota-grant…).
govern::AuditRecord DecisionRecord(std::string actor, std::string action, std::string object_kind,
                                   std::string object_name, std::string tenant, std::string before, std::string after,
                                   std::string result = "ok");

class Governance;

// The governance part of one `apply` request: built (and authorized) on the HTTP thread,
// staged into the apply's batch on the loop thread, made effective after the commit.
class GovernanceApply {
 public:
  // Adds the store writes to `batch` and one item (kind, name, action) per document to `out`.
  void Stage(WriteBatch& batch, std::vector<AppliedView>& out) const;
  // After the batch committed: puts the users and policies in memory and appends a
  // `quota-change` decision to the audit chain for each queue whose quotas, cohort or weight
  // changed (before/after: {"cohort", "weight", "quotas"}).
  void Committed() const;

 private:
  friend class Governance;
  struct QuotaChange {
    std::string queue, tenant, before, after;
  };
  Governance* gov_ = nullptr;
  std::string actor_;  // "user alice"; "server" for a trusted in-process caller
  std::string request_id_;  // of the apply request; "" in-process
  std::vector<UserSpec> users_;
  std::vector<AdmissionPolicy> policies_;
  std::vector<QuotaChange> quota_changes_;
  std::vector<AppliedView> items_;
};

// What one audit export holds.
struct AuditQuery {
  int64_t after_seq = 0;
  size_t limit = 0;       // 0: all
  std::optional<Time> since;
};

class Governance {
 public:
  struct Options {
    Duration last_used_flush = std::chrono::seconds(10);  // how often last-used times are persisted
    Duration audit_wait = std::chrono::seconds(10);       // how long a request waits for its entry
    size_t audit_group = 512;                             // entries per commit at most
    // Audit anchors (govern/audit_anchor.h): the signed head is appended to `audit_anchor_file`
    // at start, every `anchor_every_entries` entries or `anchor_every` while the chain grows,
    // and at shutdown; the key lives in `audit_key_file` (created mode 0600). Empty: no anchors.
    std::string audit_key_file;
    std::string audit_anchor_file;
    int64_t anchor_every_entries = 100;
    Duration anchor_every = std::chrono::seconds(10);
  };

  // Loads users, tokens and policies from `store` and resumes the audit chain; `bootstrap`
  // (the admin and join tokens, node credentials) must outlive the Governance.
  static Result<std::unique_ptr<Governance>> Open(Store& store, const Clock& clock, TokenAuthorizer& bootstrap,
                                                  Options options);
  static Result<std::unique_ptr<Governance>> Open(Store& store, const Clock& clock, TokenAuthorizer& bootstrap) {
    return Open(store, clock, bootstrap, Options());
  }
  ~Governance();
  Governance(const Governance&) = delete;
  Governance& operator=(const Governance&) = delete;
  // Writes what the audit queue holds and the last-used times, then stops the writer. Idempotent.
  void Shutdown();

  // ---- identity
  // The caller holding `bearer`: a bootstrap token first, else an API token; Unauthenticated.
  Result<Caller> Authenticate(std::string_view bearer);
  // Whether `caller`, as Authenticate returned it for `bearer`, still stands (its token not
  // revoked or expired, its user enabled with the same roles; a node credential not reset).
  // Unauthenticated otherwise. Long polls ask before they answer (RecheckCaller).
  Status StillStands(const Caller& caller, std::string_view bearer) const;
  // When `caller`'s token expires (none: a token without expiry, or a bootstrap credential), so
  // that a long poll waits no longer than its caller stands.
  std::optional<Time> ExpiresAt(const Caller& caller) const;
  // The bootstrap rules for the join token and node credentials (TokenAuthorizer::Authorize).
  Status AuthorizeBootstrap(const Caller& caller, const std::string& method, const std::string& path) const;
  govern::TokenRegistry& registry() { return registry_; }
  // Sets what runs once a credential stops standing or changes — a token revoked, a user deleted
  // or its roles or state changed, the admin token rotated, a node credential reset — so that
  // the long polls waiting for such a caller ask again at once (the ControlPlane wakes its
  // change feed's and assignment board's waiters). Set before requests are served.
  void OnCredentialsChanged(std::function<void()> wake) { credentials_changed_ = std::move(wake); }
  // Runs the OnCredentialsChanged hook (none set: nothing).
  void CredentialsChanged() const {
    if (credentials_changed_) credentials_changed_();
  }
  const Clock& clock() const { return clock_; }

  // POST /api/v1/tokens: issues a token for `user` (the caller itself when empty); the answer
  // holds the secret, once. `context`, here and below: the HTTP request served (null: none),
  // told the object for its audit entry; a change commits with that entry (CommitRequestChange).
  Result<IssuedTokenView> IssueToken(const govern::Principal& who, std::string user, std::string description,
                                     std::optional<Duration> ttl, RequestContext* context);
  // GET /api/v1/tokens: the tokens `who` may manage (never a hash or secret).
  std::vector<TokenView> ListTokens(const govern::Principal& who, const std::string& user) const;
  // DELETE /api/v1/tokens/{id}.
  Result<TokenView> RevokeToken(const govern::Principal& who, const std::string& id, RequestContext* context);
  // POST /api/v1/tokens/rotate-admin (admins only): a new admin token, stored (its hash, with the
  // request's audit entry) and written to DATA/admin.token; the old one stops working at once.
  // The answer holds the new secret, once. Other servers of an HA group read it at their start.
  Result<RotatedAdminTokenView> RotateAdminToken(const govern::Principal& who, RequestContext* context);
  // GET /api/v1/users: the users `who` may see (without their tokens).
  std::vector<UserView> ListUsers(const govern::Principal& who) const;
  // GET /api/v1/users/{name}: the user and its API tokens; NotFound when `who` may not see it.
  Result<UserView> GetUser(const govern::Principal& who, const std::string& name) const;
  // DELETE /api/v1/users/{name}: removes the user and revokes its tokens.
  Result<DeletedView> DeleteUser(const govern::Principal& who, const std::string& name, RequestContext* context);

  // ---- admission policies
  std::vector<AdmissionPolicy> Policies() const;
  // GET /api/v1/policies[/{name}], DELETE /api/v1/policies/{name}: those `who` may see.
  std::vector<AdmissionPolicy> ListPolicies(const govern::Principal& who) const;
  Result<AdmissionPolicy> GetPolicy(const govern::Principal& who, const std::string& name) const;
  Result<DeletedView> DeletePolicy(const govern::Principal& who, const std::string& name, RequestContext* context);
  // The resources a policy change is checked against: one per tenant it applies to (now or
  // before), the cluster-level policy when it applies to every tenant.
  static std::vector<govern::Resource> PolicyResources(const AdmissionPolicy& p);

  // ---- hooks of the ControlPlane
  // Submit: `who` (null: a trusted in-process caller) must be allowed to create each workload,
  // and each must pass the admission policies of its tenant (403 naming policy, rule and why).
  // Sets each workload's `admission` (and the labels that show it) where policies decide it.
  // Tells `context` (the request served; null: none) which workloads it is about.
  Status CheckSubmit(const govern::Principal* who, std::vector<Document>& docs, RequestContext* context) const;
  // The role part of CheckSubmit alone (and the objects told to `context`): PermissionDenied
  // unless `who` may create each workload in its project. Decided by the names alone, so that a
  // submission to another tenant's project is refused alike whether it exists or not; Submit
  // calls it before it looks up any reference.
  Status AuthorizeSubmit(const govern::Principal* who, const std::vector<Document>& docs,
                         RequestContext* context) const;
  // Apply: authorizes every document for `who` (null: trusted) against the current `config`
  // (tenancy kinds: apply-config, queue quotas: quota-change, policies: policy-change, users:
  // user-manage, cluster-level kinds: admin) and validates the governance documents. Tells
  // `context` (the request served; null: none) which objects it is about; the users and
  // policies it writes name its request id.
  Result<std::shared_ptr<const GovernanceApply>> PlanApply(const govern::Principal* who,
                                                           const std::vector<Document>& docs,
                                                           const std::vector<ExtensionDocument>& extensions,
                                                           const std::vector<GovernanceDocument>& governance,
                                                           const TenancyConfig& config,
                                                           RequestContext* context);

  // ---- audit
  // Queues `record` for the chain; returns a ticket for WaitAudit. Never blocks on the store.
  uint64_t EnqueueAudit(govern::AuditRecord record);
  // Commits `batch` and the entry of `record` in one transaction, so that a request waits for
  // one commit, not two: the writer joins the batches of concurrent callers (and queued entries)
  // into one commit, and commits them one by one when that fails, so that a conflicting batch
  // fails alone. Returns the batch's status as Store::Commit would (the entry is written only
  // with the batch); fills `result` (the batch's own ops) when OK. Blocks until committed.
  Status CommitAudited(const WriteBatch& batch, govern::AuditRecord record, CommitResult* result);
  // As above with several entries (a request's, then the decisions its change carries), sealed
  // in order in the same transaction as `batch`: all of them or none.
  Status CommitAudited(const WriteBatch& batch, std::vector<govern::AuditRecord> records, CommitResult* result);
  // Waits until the entry of `ticket` committed (or failed, or options.audit_wait passed).
  Status WaitAudit(uint64_t ticket);
  // A decision that touches a user's work, queued for the chain on its own (never blocks the
  // caller). The scheduler's and controllers' decisions instead commit with the change they
  // make (DecisionRecord, CommitAudited). Thread-safe.
  void AppendDecision(std::string actor, std::string action, std::string object_kind, std::string object_name,
                      std::string tenant, std::string before, std::string after, std::string result = "ok");
  // Blocks until everything queued so far is committed (tests, shutdown).
  void FlushAudit();
  Result<std::vector<govern::AuditEntry>> ReadAudit(const AuditQuery& q) const;
  Result<govern::AuditVerifyReport> VerifyAudit() const;
  // The chain's head now (taken under the writer's lock: every entry up to it is stored).
  govern::AuditHead audit_head() const;
  // The anchors checked against the chain as the store holds it now, reading only the anchored
  // entries (nullopt: this server writes no anchors). AuditWatch's step after the chain itself:
  // a database rolled back to a backup older than the anchors reads as broken there too.
  Result<std::optional<govern::AuditAnchorReport>> CheckAnchors() const;
  // The store-backed log, for readers that need no lock (server/audit_watch.h).
  const govern::AuditLog& audit_log() const { return *audit_; }
  int64_t audit_failures() const;
  // Returns how many entries (with their batches, for CommitAudited) wait for the committer.
  size_t audit_queued() const;
  // The server's one committer: ControlPlane commits every write through it, audited or not.
  Committer& committer() { return *committer_; }

  // Commits a change to governance state for `context` (the request served) with its audit
  // entry (both or neither); a plain commit for null or an unaudited request.
  Status CommitRequestChange(const WriteBatch& batch, RequestContext* context);

  // ---- rate limits (per token and per user) and token caps
  // `rate` requests a second (bursts of `burst`) for each token and for each user, all its tokens
  // together (so that minting tokens does not multiply it); 0: none.
  void SetRateLimit(double rate, double burst);
  // Requests a second for each tenant, all the users whose roles are scoped to it together; 0: none.
  void SetTenantRateLimit(double rate, double burst);
  // Active API tokens one user may hold; IssueToken answers FailedPrecondition beyond. 0: no cap.
  void SetMaxTokensPerUser(size_t n) { max_tokens_per_user_.store(n); }
  // 0 when the caller may go ahead, else the seconds until it may; `which` (optional) names the
  // exhausted bucket ("token tok-…", "user alice (all its tokens)", "tenant nlp (all its users)").
  double Throttle(const Caller& caller, std::string* which = nullptr);

 private:
  friend class GovernanceApply;
  Governance(Store& store, const Clock& clock, TokenAuthorizer& bootstrap, Options options);
  // Persists the tokens whose last-used time changed.
  void FlushLastUsed();
  // Appends an anchor for the chain's head when it moved `anchor_every_entries` entries, or at
  // all and `anchor_every` passed, since the last one; with `force`, whenever it moved.
  void MaybeAnchor(bool force);
  // Holds off the committer's commits (none before it starts), so that the head and the entries
  // read meanwhile agree.
  std::unique_lock<std::mutex> HoldAuditCommits() const;
  Status LoadPolicies();

  Store& store_;
  const Clock& clock_;
  TokenAuthorizer& bootstrap_;
  Options options_;
  govern::TokenRegistry registry_;
  std::function<void()> credentials_changed_;  // set before serving, then only read
  // Serializes the store writes of token records (issue, revoke, last-used flush), so that a
  // background flush never writes back a record older than a revocation.
  Mutex token_store_mu_;
  std::unique_ptr<govern::AuditLog> audit_;
  std::string audit_key_;                                   // set when anchoring
  std::unique_ptr<govern::AuditAnchorWriter> anchors_;      // null: no anchors
  int64_t anchored_seq_ = -1;                               // only on the committer's thread and in Open
  std::chrono::steady_clock::time_point anchored_at_{};     // likewise

  mutable Mutex policies_mu_;
  std::map<std::string, AdmissionPolicy> policies_ GUARDED_BY(policies_mu_);

  mutable Mutex limiter_mu_;
  std::shared_ptr<RateLimiter> limiter_ GUARDED_BY(limiter_mu_);  // null: unlimited
  std::shared_ptr<RateLimiter> tenant_limiter_ GUARDED_BY(limiter_mu_);  // null: unlimited
  std::atomic<size_t> max_tokens_per_user_{0};

  // The one writer of the store (server/committer.h): audit entries seal in its commits.
  std::unique_ptr<Committer> committer_;
};

}  // namespace abacus::server
