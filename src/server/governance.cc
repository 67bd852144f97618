#include "server/governance.h"
#include "common/mutex.h"
#include "server/queue_fields.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <variant>

#include "common/duration_parse.h"
#include "common/log.h"
#include "common/thread_name.h"
#include "govern/admission.h"
#include "govern/crypto.h"
#include "tenancy/tenancy_codec.h"
#include "tenancy/yaml_json.h"
#include "workload/governance_codec.h"
#include "workload/secret_doc.h"
#include "workload/utf8.h"

namespace abacus::server {
namespace {

using nlohmann::json;
using govern::Action;

template <typename... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <typename... F>
Overloaded(F...) -> Overloaded<F...>;
using govern::Resource;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i];
  return out;
}

// Tells the HTTP layer the object of a request: the names, and the tenant when they share one.
void NoteObjects(const std::string& kind, const std::vector<std::string>& names,
                 const std::vector<std::string>& tenants) {
  std::set<std::string> distinct(tenants.begin(), tenants.end());
  std::string joined = Join(names, ",");
  if (joined.size() > 512) joined = joined.substr(0, 509) + "...";
  NoteRequestObject(kind, joined, distinct.size() == 1 ? *distinct.begin() : "");
}

json TokenJson(const govern::TokenRecord& t, Time now) {
  json j = {{"id", t.id},
            {"user", t.owner},
            {"agent", t.agent},
            {"description", t.description},
            {"createdAt", FormatTime(t.created)},
            {"active", t.ActiveAt(now)}};
  if (t.expires) j["expiresAt"] = FormatTime(*t.expires);
  if (t.revoked) j["revokedAt"] = FormatTime(*t.revoked);
  if (t.last_used) j["lastUsedAt"] = FormatTime(*t.last_used);
  return j;
}

// A node credential has no user owner: only admins manage it.
Resource TokenResource(const govern::TokenRecord& t) {
  return t.agent ? Resource::ForCluster("token", t.id) : Resource::ForToken(t.id, t.owner);
}

json UserJson(const UserSpec& u) { return ToPlainJson(EncodeUserSpec(u)); }

// What a quota-change decision records of a queue: {"cohort", "weight", "quotas"}.
std::string QuotaSummary(const Queue& q) {
  json j = ToPlainJson(EncodeQueue(q));
  json out = json::object();
  for (const char* k : {"cohort", "weight", "quotas"}) {
    if (j.contains(k)) out[k] = j[k];
  }
  return out.dump();
}
json PolicyJson(const AdmissionPolicy& p) { return ToPlainJson(EncodeAdmissionPolicy(p)); }

// NotFound when `who` may not even see `what` (its existence stays hidden), else the denial.
Status Refuse(const govern::Principal& who, Action action, const Resource& what, const std::string& not_found) {
  Status st = govern::Authorize(who, action, what);
  if (st.ok()) return st;
  if (!govern::MaySee(who, what)) return NotFound(not_found);
  return st;
}

}  // namespace

// ---------------------------------------------------------------- Caller, RateLimiter

std::string Caller::RateKey() const {
  switch (via) {
    case Via::kAdminToken: return "admin-token";
    case Via::kJoinToken: return "join-token";
    case Via::kNodeCredential: return "node:" + bootstrap.name;
    case Via::kApiToken: return principal.token_id;
  }
  return principal.token_id;
}

std::string Caller::Actor() const {
  switch (via) {
    case Via::kAdminToken: return "user admin";
    case Via::kJoinToken: return "join token";
    case Via::kNodeCredential: return "agent of node " + bootstrap.name;
    case Via::kApiToken:
      return principal.kind == govern::Principal::Kind::kAgent ? "agent of node " + principal.name
                                                                : "user " + principal.name;
  }
  return principal.name;
}

RateLimiter::RateLimiter(double rate, double burst)
    : rate_(rate), burst_(burst > 0 ? burst : std::max(1.0, 2 * rate)) {}

double RateLimiter::Take(const std::string& key, SteadyTime now) {
  if (rate_ <= 0) return 0;
  MutexLock lock(mu_);
  if (buckets_.size() > 65536) {
    // Forget buckets that have refilled: they would start full anyway.
    for (auto it = buckets_.begin(); it != buckets_.end();) {
      double refill = std::chrono::duration<double>(now - it->second.last).count() * rate_;
      it = it->second.tokens + refill >= burst_ ? buckets_.erase(it) : std::next(it);
    }
  }
  auto [it, inserted] = buckets_.try_emplace(key);
  Bucket& b = it->second;
  if (inserted) {
    b.tokens = burst_;
  } else {
    double elapsed = std::max(0.0, std::chrono::duration<double>(now - b.last).count());
    b.tokens = std::min(burst_, b.tokens + elapsed * rate_);
  }
  b.last = now;
  if (b.tokens >= 1) {
    b.tokens -= 1;
    return 0;
  }
  return (1 - b.tokens) / rate_;
}

// ---------------------------------------------------------------- GovernanceApply

void GovernanceApply::Stage(WriteBatch& batch, json& out) const {
  for (const auto& u : users_) govern::StagePutUser(batch, u);
  for (const auto& p : policies_) batch.Put(std::string(kPolicyStoreKind), p.name, PolicyJson(p).dump());
  for (const auto& item : items_) out.push_back(item);
}

void GovernanceApply::Committed() const {
  for (const auto& u : users_) {
    if (Status st = gov_->registry_.PutUser(u); !st.ok()) ABACUS_LOG_ERROR("user {}: {}", u.name, st.message());
  }
  {
    MutexLock lock(gov_->policies_mu_);
    for (const auto& p : policies_) gov_->policies_[p.name] = p;
  }
  for (const auto& q : quota_changes_) {
    govern::AuditRecord r;
    r.actor = actor_;
    r.action = "quota-change";
    r.object_kind = "queue";
    r.object_name = q.queue;
    r.tenant = q.tenant;
    r.before = q.before;
    r.after = q.after;
    r.result = "ok";
    r.request_id = request_id_;  // the apply that made it
    gov_->EnqueueAudit(std::move(r));
  }
}

// ---------------------------------------------------------------- Governance

Governance::Governance(Store& store, const Clock& clock, TokenAuthorizer& bootstrap, Options options)
    : store_(store), clock_(clock), bootstrap_(bootstrap), options_(options), registry_(clock) {}

Result<std::unique_ptr<Governance>> Governance::Open(Store& store, const Clock& clock, TokenAuthorizer& bootstrap,
                                                     Options options) {
  std::unique_ptr<Governance> g(new Governance(store, clock, bootstrap, options));
  ABACUS_RETURN_IF_ERROR(g->registry_.LoadFrom(store));
  ABACUS_RETURN_IF_ERROR(g->LoadPolicies());
  ABACUS_ASSIGN_OR_RETURN(g->audit_, govern::AuditLog::Open(store, clock));
  if (!options.audit_anchor_file.empty()) {
    ABACUS_ASSIGN_OR_RETURN(g->audit_key_, govern::LoadOrCreateAuditKey(options.audit_key_file));
    ABACUS_ASSIGN_OR_RETURN(g->anchors_, govern::AuditAnchorWriter::Open(options.audit_anchor_file, g->audit_key_));
    g->MaybeAnchor(true);  // the head as this server found it
  }
  CommitterOptions co;
  co.max_group = options.audit_group;
  co.housekeeping_every = std::chrono::duration_cast<std::chrono::milliseconds>(options.last_used_flush);
  co.after_group = [p = g.get()] { p->MaybeAnchor(false); };
  co.housekeeping = [p = g.get()](bool final) {
    p->FlushLastUsed();
    p->MaybeAnchor(final);  // at shutdown, the final head
  };
  g->committer_ = std::make_unique<Committer>(*g->audit_, std::move(co));
  return g;
}

Governance::~Governance() { Shutdown(); }

void Governance::Shutdown() {
  if (committer_) committer_->Shutdown();
}

Status Governance::LoadPolicies() {
  ABACUS_ASSIGN_OR_RETURN(auto records, store_.List(kPolicyStoreKind));
  std::map<std::string, AdmissionPolicy> loaded;
  for (const auto& r : records) {
    json j = json::parse(r.json, nullptr, false);
    if (j.is_discarded()) return Internal("stored admission policy " + r.key + " is not JSON");
    auto o = GovernanceObjectFromJson(j);
    if (!o.ok()) return Internal("stored admission policy " + r.key + ": " + o.status().message());
    auto* p = std::get_if<AdmissionPolicy>(&*o);
    if (p == nullptr) return Internal("stored admission policy " + r.key + " is not an AdmissionPolicy");
    loaded[p->name] = *p;
  }
  MutexLock lock(policies_mu_);
  policies_ = std::move(loaded);
  return Status::OK();
}

// ---- identity

Result<Caller> Governance::Authenticate(std::string_view bearer) {
  auto boot = bootstrap_.Authenticate(bearer);
  if (boot.ok()) {
    Caller c;
    c.bootstrap = *boot;
    if (boot->role == "admin") {
      c.via = Caller::Via::kAdminToken;
      RoleBinding admin;
      admin.role = Role::kAdmin;
      c.principal = govern::Principal::User("admin", {admin});
    } else if (boot->role == "node") {
      c.via = Caller::Via::kNodeCredential;
      c.principal = govern::Principal::Agent(boot->name);
    } else {
      c.via = Caller::Via::kJoinToken;
      c.principal.kind = govern::Principal::Kind::kAgent;
      c.principal.name = boot->name;  // no binding: it may only register (AuthorizeBootstrap)
    }
    return c;
  }
  if (bearer.empty()) return boot.status();
  ABACUS_ASSIGN_OR_RETURN(auto p, registry_.Authenticate(bearer));
  Caller c;
  c.via = Caller::Via::kApiToken;
  c.principal = std::move(p);
  return c;
}

Status Governance::AuthorizeBootstrap(const Caller& caller, const std::string& method, const std::string& path) const {
  return bootstrap_.Authorize(caller.bootstrap, {method, path});
}

Result<json> Governance::IssueToken(const govern::Principal& who, std::string user, std::string description,
                                    std::optional<Duration> ttl) {
  if (user.empty()) user = who.name;
  ABACUS_RETURN_IF_ERROR(govern::Authorize(who, Action::kTokenManage, Resource::ForToken("", user)));
  if (!registry_.FindUser(user)) {
    return NotFound("user " + user + " not found (users come from `kind: User` documents: abacus apply -f)");
  }
  MutexLock lock(token_store_mu_);
  if (size_t cap = max_tokens_per_user_.load(); cap > 0) {
    size_t active = 0;
    Time now = clock_.Now();
    for (const auto& t : registry_.Tokens()) active += !t.agent && t.owner == user && t.ActiveAt(now) ? 1 : 0;
    if (active >= cap) {
      return FailedPrecondition("user " + user + " already holds " + std::to_string(active) +
                                " active tokens, the most one user may hold (abacus server --max-tokens-per-user " +
                                std::to_string(cap) + "): revoke one first (abacus token list --user " + user +
                                "; abacus token revoke ID)");
    }
  }
  ABACUS_ASSIGN_OR_RETURN(auto issued, registry_.IssueToken(user, std::move(description), ttl));
  WriteBatch batch;
  govern::StagePutToken(batch, issued.record);
  NoteRequestObject("token", issued.record.id, "");
  if (Status st = CommitRequestChange(batch); !st.ok()) {
    registry_.RemoveToken(issued.record.id);
    return st;
  }
  json j = TokenJson(issued.record, clock_.Now());
  j["token"] = issued.secret;
  return j;
}

json Governance::ListTokens(const govern::Principal& who, const std::string& user) const {
  json items = json::array();
  Time now = clock_.Now();
  for (const auto& t : registry_.Tokens()) {
    if (!user.empty() && t.owner != user) continue;
    if (!govern::Authorize(who, Action::kTokenManage, TokenResource(t)).ok()) continue;
    items.push_back(TokenJson(t, now));
  }
  return {{"items", items}};
}

Result<json> Governance::RevokeToken(const govern::Principal& who, const std::string& id) {
  auto found = registry_.FindToken(id);
  const std::string missing = "token " + id + " not found";
  if (!found) return NotFound(missing);
  // Another user's token stays invisible: 404, not 403.
  if (!govern::Authorize(who, Action::kTokenManage, TokenResource(*found)).ok()) return NotFound(missing);
  NoteRequestObject("token", id, "");
  MutexLock lock(token_store_mu_);
  ABACUS_ASSIGN_OR_RETURN(auto revoked, registry_.Revoke(id));
  WriteBatch batch;
  govern::StagePutToken(batch, revoked);
  if (Status st = CommitRequestChange(batch); !st.ok()) {
    registry_.RemoveToken(id);
    (void)registry_.AddToken(*found);
    return st;
  }
  return TokenJson(revoked, clock_.Now());
}

Result<json> Governance::RotateAdminToken(const govern::Principal& who) {
  if (!who.HasRole(Role::kAdmin)) {
    return PermissionDenied(who.ToString() + " may not rotate the admin token (admins only)");
  }
  NoteRequestObject("token", "admin", "");
  MutexLock lock(token_store_mu_);
  std::string token = govern::RandomHex(32);
  WriteBatch batch;
  batch.PutMeta(TokenAuthorizer::kAdminTokenMeta, govern::Sha256Hex(token));
  ABACUS_RETURN_IF_ERROR(CommitRequestChange(batch));
  json out = {{"token", token}, {"rotatedAt", FormatTime(clock_.Now())}};
  if (Status st = bootstrap_.ReplaceAdminToken(token); !st.ok()) {
    out["warning"] = st.message() + "; keep the token from this answer";
  }
  return out;
}

json Governance::ListUsers(const govern::Principal& who) const {
  json items = json::array();
  for (const auto& u : registry_.Users()) {
    if (govern::MaySee(who, Resource::ForUser(u.name))) items.push_back(UserJson(u));
  }
  return {{"items", items}};
}

Result<json> Governance::GetUser(const govern::Principal& who, const std::string& name) const {
  auto u = registry_.FindUser(name);
  if (!u || !govern::Authorize(who, Action::kRead, Resource::ForUser(name)).ok()) {
    return NotFound("user " + name + " not found");
  }
  json j = UserJson(*u);
  json tokens = json::array();
  Time now = clock_.Now();
  for (const auto& t : registry_.Tokens(name)) {
    if (!t.agent) tokens.push_back(TokenJson(t, now));
  }
  j["tokens"] = tokens;
  return j;
}

Result<json> Governance::DeleteUser(const govern::Principal& who, const std::string& name) {
  auto u = registry_.FindUser(name);
  if (!u) return NotFound("user " + name + " not found");
  ABACUS_RETURN_IF_ERROR(Refuse(who, Action::kUserManage, Resource::ForUser(name), "user " + name + " not found"));
  NoteRequestObject("user", name, "");
  MutexLock lock(token_store_mu_);
  std::vector<govern::TokenRecord> before = registry_.Tokens(name);
  ABACUS_RETURN_IF_ERROR(registry_.RemoveUser(name));
  WriteBatch batch;
  batch.Delete(std::string(govern::kUserStoreKind), name);
  for (const auto& t : registry_.Tokens(name)) {
    if (!t.agent) govern::StagePutToken(batch, t);
  }
  if (Status st = CommitRequestChange(batch); !st.ok()) {
    (void)registry_.PutUser(*u);
    for (const auto& t : before) {
      registry_.RemoveToken(t.id);
      (void)registry_.AddToken(t);
    }
    return st;
  }
  return json{{"name", name}, {"deleted", true}};
}

// ---- policies

std::vector<AdmissionPolicy> Governance::Policies() const {
  MutexLock lock(policies_mu_);
  std::vector<AdmissionPolicy> out;
  out.reserve(policies_.size());
  for (const auto& [name, p] : policies_) out.push_back(p);
  return out;
}

std::vector<Resource> Governance::PolicyResources(const AdmissionPolicy& p) {
  std::vector<Resource> out;
  if (p.tenants.empty()) {
    out.push_back(Resource::ForCluster("policy", p.name));
  } else {
    for (const auto& t : p.tenants) out.push_back(Resource::ForTenantObject("policy", p.name, t));
  }
  return out;
}

namespace {
bool MaySeePolicy(const govern::Principal& who, const AdmissionPolicy& p) {
  for (const auto& r : Governance::PolicyResources(p)) {
    if (govern::MaySee(who, r)) return true;
  }
  return false;
}
}  // namespace

json Governance::ListPolicies(const govern::Principal& who) const {
  json items = json::array();
  for (const auto& p : Policies()) {
    if (MaySeePolicy(who, p)) items.push_back(PolicyJson(p));
  }
  return {{"items", items}};
}

Result<json> Governance::GetPolicy(const govern::Principal& who, const std::string& name) const {
  MutexLock lock(policies_mu_);
  auto it = policies_.find(name);
  if (it == policies_.end() || !MaySeePolicy(who, it->second)) return NotFound("policy " + name + " not found");
  return PolicyJson(it->second);
}

Result<json> Governance::DeletePolicy(const govern::Principal& who, const std::string& name) {
  std::optional<AdmissionPolicy> p;
  {
    MutexLock lock(policies_mu_);
    if (auto it = policies_.find(name); it != policies_.end()) p = it->second;
  }
  const std::string missing = "policy " + name + " not found";
  if (!p || !MaySeePolicy(who, *p)) return NotFound(missing);
  NoteRequestObject("policy", name, p->tenants.size() == 1 ? p->tenants[0] : "");
  for (const auto& r : PolicyResources(*p)) ABACUS_RETURN_IF_ERROR(govern::Authorize(who, Action::kPolicyChange, r));
  ABACUS_RETURN_IF_ERROR(CommitRequestChange(WriteBatch().Delete(std::string(kPolicyStoreKind), name)));
  MutexLock lock(policies_mu_);
  policies_.erase(name);
  return json{{"name", name}, {"deleted", true}};
}

std::vector<std::string> AdmittedPools(const Workload& w) {
  std::vector<std::string> out;
  auto it = w.labels.find(std::string(kAllowedPoolsLabel));
  if (it == w.labels.end()) return out;
  size_t start = 0;
  const std::string& v = it->second;
  while (start <= v.size()) {
    size_t end = v.find(',', start);
    if (end == std::string::npos) end = v.size();
    if (end > start) out.push_back(v.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string AdmittedNetwork(const Workload& w) {
  auto it = w.labels.find(std::string(kNetworkLabel));
  return it == w.labels.end() ? "" : it->second;
}

// ---- hooks

Status Governance::CheckSubmit(const govern::Principal* who, std::vector<Document>& docs) const {
  std::vector<std::string> names, tenants;
  for (const Document& d : docs) {
    if (const Workload* w = d.workload()) {
      names.push_back(w->project + "/" + w->name);
      tenants.push_back(w->tenant());
    }
  }
  NoteObjects("workload", names, tenants);
  std::vector<AdmissionPolicy> policies = Policies();
  for (Document& d : docs) {
    Workload* w = std::get_if<Workload>(&d.object);
    if (w == nullptr) continue;
    std::string where = d.source.ToString();
    if (where.empty()) where = w->name;
    if (who != nullptr) {
      if (Status st = govern::Authorize(*who, Action::kCreate, Resource::ForWorkload(*w)); !st.ok()) {
        return st.WithContext(where);
      }
    }
    // The labels admission decides are never the submitter's to set.
    w->labels.erase(std::string(kNetworkLabel));
    w->labels.erase(std::string(kAllowedPoolsLabel));
    auto admission = govern::EvaluateAdmission(*w, w->tenant(), policies);
    if (!admission.ok()) return admission.status().WithContext(where);
    if (admission->network) w->labels[std::string(kNetworkLabel)] = std::string(NetworkClassName(*admission->network));
    if (!admission->pools.empty()) w->labels[std::string(kAllowedPoolsLabel)] = Join(admission->pools, ",");
  }
  return Status::OK();
}

Result<std::shared_ptr<const GovernanceApply>> Governance::PlanApply(const govern::Principal* who,
                                                                     const std::vector<Document>& docs,
                                                                     const std::vector<ExtensionDocument>& extensions,
                                                                     const std::vector<GovernanceDocument>& governance,
                                                                     const TenancyConfig& config) {
  auto plan = std::make_shared<GovernanceApply>();
  plan->gov_ = this;
  plan->request_id_ = CurrentRequestId();
  plan->actor_ = who == nullptr ? "server" : who->kind == govern::Principal::Kind::kUser ? "user " + who->name : who->ToString();
  std::vector<std::string> names, tenants;
  auto note = [&](std::string_view kind, const std::string& name, const std::string& tenant) {
    names.push_back(std::string(kind) + "/" + name);
    tenants.push_back(tenant);
  };
  for (const Document& d : docs) {
    std::visit(Overloaded{[&](const Tenant& t) { note(d.kind(), t.name, t.name); },
                          [&](const Project& p) { note(d.kind(), p.FullName(), p.tenant); },
                          [&](const Queue& q) { note(d.kind(), q.name, q.tenant); },
                          [&](const auto&) { note(d.kind(), d.name(), ""); }},
               d.object);
  }
  for (const auto& e : extensions) note(e.kind, e.name, e.object.value("tenant", ""));  // a Secret's tenant
  for (const auto& g : governance) {
    const auto* p = std::get_if<AdmissionPolicy>(&g.object);
    note(g.kind(), g.name(), p != nullptr && p->tenants.size() == 1 ? p->tenants[0] : "");
  }
  NoteObjects("config", names, tenants);

  auto check = [&](const SourceLocation& src, Action action, const Resource& what) -> Status {
    if (who == nullptr) return Status::OK();
    Status st = govern::Authorize(*who, action, what);
    std::string where = src.ToString();
    return st.ok() || where.empty() ? st : st.WithContext(where);
  };
  for (const Document& d : docs) {
    Status st = std::visit(
        Overloaded{
            [&](const Tenant& t) { return check(d.source, Action::kApplyConfig, Resource::ForTenantObject("tenant", t.name, t.name)); },
            [&](const Project& p) {
              return check(d.source, Action::kApplyConfig, Resource::ForTenantObject("project", p.FullName(), p.tenant));
            },
            [&](const Queue& q) -> Status {
              Resource r = Resource::ForTenantObject("queue", q.name, q.tenant);
              ABACUS_RETURN_IF_ERROR(check(d.source, Action::kApplyConfig, r));
              const Queue* old = config.FindQueue(q.name);
              // Field by field: what the queue may take from the cluster is the platform's.
              if (who != nullptr && !who->HasRole(Role::kAdmin)) {
                if (auto fields = ChangedPlatformQueueFields(old, q); !fields.empty()) {
                  Status denied = PermissionDenied(
                      who->ToString() + " may not change " + Join(fields, ", ") + " of queue " + q.name +
                      ": quotas, borrowing and lending limits, weight and cohort are the platform's (admins only); a "
                      "tenant-admin changes description, queueingStrategy, clusters and preferredClusters");
                  std::string where = d.source.ToString();
                  return where.empty() ? denied : denied.WithContext(where);
                }
              }
              bool quota_changed = old == nullptr ? !q.quotas.empty()
                                                  : old->quotas != q.quotas || old->cohort != q.cohort ||
                                                        old->weight_milli != q.weight_milli;
              if (quota_changed) {
                ABACUS_RETURN_IF_ERROR(check(d.source, Action::kQuotaChange, r));
                plan->quota_changes_.push_back(
                    {q.name, q.tenant, old == nullptr ? "" : QuotaSummary(*old), QuotaSummary(q)});
              }
              if (old != nullptr && old->tenant != q.tenant) {
                Resource was = Resource::ForTenantObject("queue", q.name, old->tenant);
                ABACUS_RETURN_IF_ERROR(check(d.source, Action::kApplyConfig, was));
                ABACUS_RETURN_IF_ERROR(check(d.source, Action::kQuotaChange, was));
              }
              return Status::OK();
            },
            [&](const Workload&) { return Status::OK(); },  // Apply refuses workloads itself
            [&](const auto&) {
              return check(d.source, Action::kApplyConfig, Resource::ForCluster(Lower(std::string(d.kind())), d.name()));
            }},
        d.object);
    ABACUS_RETURN_IF_ERROR(st);
  }
  for (const auto& e : extensions) {
    if (e.kind == kSecretKind) continue;  // tenant and project roles: SecretVault::Prepare
    ABACUS_RETURN_IF_ERROR(check(e.source, Action::kApplyConfig, Resource::ForCluster(Lower(e.kind), e.name)));
  }
  Diagnostics diags;
  for (const auto& g : governance) {
    std::string action = "created";
    if (const auto* u = std::get_if<UserSpec>(&g.object)) {
      ABACUS_RETURN_IF_ERROR(check(g.source, Action::kUserManage, Resource::ForUser(u->name)));
      for (const auto& b : u->roles) {
        if (b.role == Role::kAgent) {
          diags.Add(g.source.file, g.source.line, "roles", "agent is a node credential, not a user role");
        } else if (Status st = b.Validate(); !st.ok()) {
          diags.Add(g.source.file, g.source.line, "roles", st.message());
        }
      }
      if (auto old = registry_.FindUser(u->name)) action = *old == *u ? "unchanged" : "configured";
      if (action != "unchanged") plan->users_.push_back(*u);
    } else {
      const auto& p = std::get<AdmissionPolicy>(g.object);
      std::vector<Resource> resources = PolicyResources(p);
      std::optional<AdmissionPolicy> old;
      {
        MutexLock lock(policies_mu_);
        if (auto it = policies_.find(p.name); it != policies_.end()) old = it->second;
      }
      if (old) {
        // Changing a policy needs the right over the tenants it covered as well.
        for (auto& r : PolicyResources(*old)) resources.push_back(std::move(r));
        action = *old == p ? "unchanged" : "configured";
      }
      for (const auto& r : resources) ABACUS_RETURN_IF_ERROR(check(g.source, Action::kPolicyChange, r));
      if (action != "unchanged") plan->policies_.push_back(p);
    }
    plan->items_.push_back({{"kind", g.kind()}, {"name", g.name()}, {"action", action}});
  }
  if (!diags.empty()) return diags.ToStatus();
  return std::shared_ptr<const GovernanceApply>(std::move(plan));
}

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

Status Governance::CommitRequestChange(const WriteBatch& batch) {
  std::shared_ptr<PendingRequestAudit> pending = CurrentRequestAudit();
  std::optional<govern::AuditRecord> entry = ClaimRequestAudit(pending.get(), batch);
  if (!entry) return store_.Commit(batch);
  Status st = CommitAudited(batch, std::move(*entry), nullptr);
  SettleRequestAudit(pending.get(), st.ok());
  return st;
}

void Governance::FlushLastUsed() {
  // Not while a token request holds the lock: it may be waiting for this (the audit writer's)
  // thread to commit its change with its entry. The times are flushed next period.
  if (!token_store_mu_.try_lock()) return;
  MutexLock lock(token_store_mu_, std::adopt_lock);
  std::vector<govern::TokenRecord> dirty = registry_.TakeDirtyTokens();
  if (dirty.empty()) return;
  WriteBatch batch;
  for (const auto& t : dirty) {
    // The freshest copy: a revocation since TakeDirtyTokens is kept.
    if (auto now = registry_.FindToken(t.id)) govern::StagePutToken(batch, *now);
  }
  if (batch.empty()) return;
  if (Status st = store_.Commit(batch); !st.ok()) {
    ABACUS_LOG_WARN("token last-used times not persisted: {}", st.ToString());
  }
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

// ---- rate limits

void Governance::SetRateLimit(double rate, double burst) {
  MutexLock lock(limiter_mu_);
  limiter_ = rate > 0 ? std::make_shared<RateLimiter>(rate, burst) : nullptr;
}

void Governance::SetTenantRateLimit(double rate, double burst) {
  MutexLock lock(limiter_mu_);
  tenant_limiter_ = rate > 0 ? std::make_shared<RateLimiter>(rate, burst) : nullptr;
}

double Governance::Throttle(const Caller& caller, std::string* which) {
  std::shared_ptr<RateLimiter> limiter, tenants;
  {
    MutexLock lock(limiter_mu_);
    limiter = limiter_;
    tenants = tenant_limiter_;
  }
  auto now = std::chrono::steady_clock::now();
  auto refused = [&](double wait, std::string what) {
    if (which != nullptr) *which = std::move(what);
    return wait;
  };
  if (limiter) {
    if (double wait = limiter->Take(caller.RateKey(), now); wait > 0) return refused(wait, caller.Actor());
  }
  // A user's tokens share one bucket of the same size, and the users of a tenant another.
  if (caller.via != Caller::Via::kApiToken || caller.principal.kind != govern::Principal::Kind::kUser) return 0;
  const std::string& user = caller.principal.name;
  if (limiter) {
    if (double wait = limiter->Take("user:" + user, now); wait > 0) {
      return refused(wait, "user " + user + " (all its tokens together)");
    }
  }
  if (tenants) {
    std::set<std::string> scoped;
    for (const auto& b : caller.principal.roles) {
      if (!b.tenant.empty()) scoped.insert(b.tenant);
      if (!b.project.empty()) scoped.insert(b.project.substr(0, b.project.find('/')));
    }
    for (const auto& t : scoped) {
      if (double wait = tenants->Take("tenant:" + t, now); wait > 0) {
        return refused(wait, "tenant " + t + " (all its users together)");
      }
    }
  }
  return 0;
}

}  // namespace abacus::server
