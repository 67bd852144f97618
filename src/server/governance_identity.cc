// Governance, identity: who is calling (bootstrap tokens, API tokens, users) and the token and
// user routes' operations.
#include "server/governance.h"

#include "common/control_chars.h"
#include "common/log.h"
#include "common/mutex.h"
#include "govern/crypto.h"
#include "tenancy/yaml_json.h"
#include "workload/governance_codec.h"

namespace abacus::server {
namespace {

using nlohmann::json;
using govern::Action;
using govern::Resource;

// The view of `t` at `now`: never its hash (an answer holds no credential but a new secret).
TokenView ViewOf(govern::TokenRecord t, Time now) {
  const bool active = t.ActiveAt(now);
  t.hash.clear();
  return TokenView{std::move(t), active};
}

// A node credential has no user owner: only admins manage it.
Resource TokenResource(const govern::TokenRecord& t) {
  return t.agent ? Resource::ForCluster("token", t.id) : Resource::ForToken(t.id, t.owner);
}

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

Status Governance::StillStands(const Caller& caller, std::string_view bearer) const {
  if (caller.via == Caller::Via::kApiToken) return registry_.StillStands(caller.principal);
  auto boot = bootstrap_.Authenticate(bearer);
  if (!boot.ok()) {
    // It authenticated when the call came: the credential changed since.
    return Unauthenticated(caller.bootstrap.role == "node"
                               ? "the credential of node " + caller.bootstrap.name +
                                     " was reset (abacus node reset): register again with the join token"
                               : "the " + caller.bootstrap.name +
                                     " token was replaced (rotated) while this call waited: ask again with the new one");
  }
  if (boot->name != caller.bootstrap.name || boot->role != caller.bootstrap.role) {
    return Unauthenticated("the credential now stands for another caller: ask again");
  }
  return Status::OK();
}

std::optional<Time> Governance::ExpiresAt(const Caller& caller) const {
  if (caller.via != Caller::Via::kApiToken) return std::nullopt;
  auto t = registry_.FindToken(caller.principal.token_id);
  return t ? t->expires : std::nullopt;
}

Status Governance::AuthorizeBootstrap(const Caller& caller, const std::string& method, const std::string& path) const {
  return bootstrap_.Authorize(caller.bootstrap, {method, path});
}

Result<IssuedTokenView> Governance::IssueToken(const govern::Principal& who, std::string user, std::string description,
                                    std::optional<Duration> ttl, RequestContext* context) {
  if (user.empty()) user = who.name;
  // A description is a line a person reads in `abacus token list`: bounded, no control bytes.
  constexpr size_t kMaxDescription = 256;
  if (description.size() > kMaxDescription) {
    return InvalidArgument("description: at most " + std::to_string(kMaxDescription) + " bytes, got " +
                           std::to_string(description.size()));
  }
  if (HasControl(description)) return InvalidArgument("description: control characters are not allowed");
  ABACUS_RETURN_IF_ERROR(govern::Authorize(who, Action::kTokenManage, Resource::ForToken("", user)));
  const auto holder = registry_.FindUser(user);
  if (!holder) {
    return NotFound("user " + user + " not found (users come from `kind: User` documents: abacus apply -f)");
  }
  if (holder->disabled) {  // its token could never authenticate: say so instead of issuing one
    return FailedPrecondition("user " + user + " is disabled: enable it (disabled: false in its User document) first");
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
  NoteRequestObject(context, "token", issued.record.id, "");
  if (Status st = CommitRequestChange(batch, context); !st.ok()) {
    registry_.RemoveToken(issued.record.id);
    return st;
  }
  return IssuedTokenView{ViewOf(std::move(issued.record), clock_.Now()), std::move(issued.secret)};
}

std::vector<TokenView> Governance::ListTokens(const govern::Principal& who, const std::string& user) const {
  std::vector<TokenView> out;
  Time now = clock_.Now();
  for (auto& t : registry_.Tokens()) {
    if (!user.empty() && t.owner != user) continue;
    if (!govern::Authorize(who, Action::kTokenManage, TokenResource(t)).ok()) continue;
    out.push_back(ViewOf(std::move(t), now));
  }
  return out;
}

Result<TokenView> Governance::RevokeToken(const govern::Principal& who, const std::string& id, RequestContext* context) {
  auto found = registry_.FindToken(id);
  const std::string missing = "token " + id + " not found";
  if (!found) return NotFound(missing);
  // Another user's token stays invisible: 404, not 403.
  if (!govern::Authorize(who, Action::kTokenManage, TokenResource(*found)).ok()) return NotFound(missing);
  NoteRequestObject(context, "token", id, "");
  MutexLock lock(token_store_mu_);
  ABACUS_ASSIGN_OR_RETURN(auto revoked, registry_.Revoke(id));
  WriteBatch batch;
  govern::StagePutToken(batch, revoked);
  if (Status st = CommitRequestChange(batch, context); !st.ok()) {
    registry_.RemoveToken(id);
    (void)registry_.AddToken(*found);
    return st;
  }
  CredentialsChanged();
  return ViewOf(std::move(revoked), clock_.Now());
}

Result<RotatedAdminTokenView> Governance::RotateAdminToken(const govern::Principal& who, RequestContext* context) {
  if (!who.HasRole(Role::kAdmin)) {
    return PermissionDenied(who.ToString() + " may not rotate the admin token (admins only)");
  }
  NoteRequestObject(context, "token", "admin", "");
  MutexLock lock(token_store_mu_);
  std::string token = govern::RandomHex(32);
  WriteBatch batch;
  batch.PutMeta(TokenAuthorizer::kAdminTokenMeta, govern::Sha256Hex(token));
  ABACUS_RETURN_IF_ERROR(CommitRequestChange(batch, context));
  RotatedAdminTokenView out{token, clock_.Now(), ""};
  if (Status st = bootstrap_.ReplaceAdminToken(token); !st.ok()) {
    out.warning = st.message() + "; keep the token from this answer";
  }
  CredentialsChanged();
  return out;
}

std::vector<UserView> Governance::ListUsers(const govern::Principal& who) const {
  std::vector<UserView> out;
  for (auto& u : registry_.Users()) {
    if (govern::MaySee(who, Resource::ForUser(u.name))) out.push_back(UserView{std::move(u), std::nullopt});
  }
  return out;
}

Result<UserView> Governance::GetUser(const govern::Principal& who, const std::string& name) const {
  auto u = registry_.FindUser(name);
  if (!u || !govern::Authorize(who, Action::kRead, Resource::ForUser(name)).ok()) {
    return NotFound("user " + name + " not found");
  }
  UserView view{std::move(*u), std::vector<TokenView>()};
  Time now = clock_.Now();
  for (auto& t : registry_.Tokens(name)) {
    if (!t.agent) view.tokens->push_back(ViewOf(std::move(t), now));
  }
  return view;
}

Result<DeletedView> Governance::DeleteUser(const govern::Principal& who, const std::string& name, RequestContext* context) {
  auto u = registry_.FindUser(name);
  if (!u) return NotFound("user " + name + " not found");
  ABACUS_RETURN_IF_ERROR(Refuse(who, Action::kUserManage, Resource::ForUser(name), "user " + name + " not found"));
  NoteRequestObject(context, "user", name, "");
  MutexLock lock(token_store_mu_);
  std::vector<govern::TokenRecord> before = registry_.Tokens(name);
  ABACUS_RETURN_IF_ERROR(registry_.RemoveUser(name));
  WriteBatch batch;
  batch.Delete(std::string(govern::kUserStoreKind), name);
  for (const auto& t : registry_.Tokens(name)) {
    if (!t.agent) govern::StagePutToken(batch, t);
  }
  if (Status st = CommitRequestChange(batch, context); !st.ok()) {
    (void)registry_.PutUser(*u);
    for (const auto& t : before) {
      registry_.RemoveToken(t.id);
      (void)registry_.AddToken(t);
    }
    return st;
  }
  CredentialsChanged();
  return DeletedView{name};
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

}  // namespace abacus::server
