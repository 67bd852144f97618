#include "govern/identity.h"

#include <algorithm>

#include "common/mutex.h"
#include "govern/crypto.h"
#include "store/store.h"
#include "tenancy/yaml_json.h"
#include "workload/governance_codec.h"

namespace abacus::govern {
namespace {

constexpr size_t kSecretBytes = 32;  // 256 bits

void PutOptionalTime(nlohmann::json& j, const char* key, const std::optional<Time>& t) {
  if (t) j[key] = ToMicros(*t);
}

Status ReadOptionalTime(const nlohmann::json& j, const char* key, std::optional<Time>& out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return Status::OK();
  if (!it->is_number_integer()) return InvalidArgument(std::string(key) + ": expected microseconds");
  out = FromMicros(it->get<int64_t>());
  return Status::OK();
}

}  // namespace

Principal Principal::User(std::string name, std::vector<RoleBinding> roles) {
  Principal p;
  p.kind = Kind::kUser;
  p.name = std::move(name);
  p.roles = std::move(roles);
  return p;
}

Principal Principal::Agent(std::string node) {
  Principal p;
  p.kind = Kind::kAgent;
  p.name = node;
  RoleBinding b;
  b.role = Role::kAgent;
  b.node = std::move(node);
  p.roles.push_back(std::move(b));
  return p;
}

bool Principal::HasRole(Role r) const {
  return std::any_of(roles.begin(), roles.end(), [r](const RoleBinding& b) { return b.role == r; });
}

std::string Principal::ToString() const {
  if (kind == Kind::kAgent) return "agent of node " + name;
  std::string out = "user " + name + " (";
  for (size_t i = 0; i < roles.size(); ++i) {
    if (i > 0) out += ", ";
    out += roles[i].ToString();
  }
  if (roles.empty()) out += "no roles";
  return out + ")";
}

bool TokenRecord::ActiveAt(Time now) const {
  if (revoked) return false;
  return !expires || now < *expires;
}

nlohmann::json TokenRecordToJson(const TokenRecord& t) {
  nlohmann::json j;
  j["id"] = t.id;
  j["sha256"] = t.hash;
  j["owner"] = t.owner;
  j["agent"] = t.agent;
  j["description"] = t.description;
  j["createdUs"] = ToMicros(t.created);
  PutOptionalTime(j, "expiresUs", t.expires);
  PutOptionalTime(j, "revokedUs", t.revoked);
  PutOptionalTime(j, "lastUsedUs", t.last_used);
  return j;
}

Result<TokenRecord> TokenRecordFromJson(const nlohmann::json& j) {
  if (!j.is_object()) return InvalidArgument("token record: expected an object");
  TokenRecord t;
  auto str = [&](const char* key, std::string& out) -> Status {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return InvalidArgument(std::string("token record: ") + key + ": expected a string");
    out = it->get<std::string>();
    return Status::OK();
  };
  ABACUS_RETURN_IF_ERROR(str("id", t.id));
  ABACUS_RETURN_IF_ERROR(str("sha256", t.hash));
  ABACUS_RETURN_IF_ERROR(str("owner", t.owner));
  if (t.hash.size() != 64) return InvalidArgument("token record " + t.id + ": sha256 must be 64 hex characters");
  t.agent = j.value("agent", false);
  t.description = j.value("description", "");
  auto created = j.find("createdUs");
  if (created == j.end() || !created->is_number_integer()) {
    return InvalidArgument("token record " + t.id + ": createdUs: expected microseconds");
  }
  t.created = FromMicros(created->get<int64_t>());
  ABACUS_RETURN_IF_ERROR(ReadOptionalTime(j, "expiresUs", t.expires));
  ABACUS_RETURN_IF_ERROR(ReadOptionalTime(j, "revokedUs", t.revoked));
  ABACUS_RETURN_IF_ERROR(ReadOptionalTime(j, "lastUsedUs", t.last_used));
  return t;
}

TokenRegistry::TokenRegistry(const Clock& clock) : clock_(clock) {}

Status TokenRegistry::PutUser(UserSpec user) {
  if (user.name.empty()) return InvalidArgument("user needs a name");
  for (const auto& b : user.roles) {
    if (b.role == Role::kAgent) return InvalidArgument("user " + user.name + ": agent is not a user role");
    ABACUS_RETURN_IF_ERROR(b.Validate().WithContext("user " + user.name));
  }
  MutexLock lock(mu_);
  std::string name = user.name;
  users_[name] = std::move(user);
  return Status::OK();
}

Status TokenRegistry::RemoveUser(std::string_view name) {
  MutexLock lock(mu_);
  auto it = users_.find(name);
  if (it == users_.end()) return NotFound("user " + std::string(name) + " not found");
  users_.erase(it);
  Time now = clock_.Now();
  for (auto& [id, t] : tokens_) {
    if (!t.agent && t.owner == name && !t.revoked) t.revoked = now;
  }
  return Status::OK();
}

std::optional<UserSpec> TokenRegistry::FindUser(std::string_view name) const {
  MutexLock lock(mu_);
  auto it = users_.find(name);
  if (it == users_.end()) return std::nullopt;
  return it->second;
}

std::vector<UserSpec> TokenRegistry::Users() const {
  MutexLock lock(mu_);
  std::vector<UserSpec> out;
  for (const auto& [name, u] : users_) out.push_back(u);
  return out;
}

Result<IssuedToken> TokenRegistry::Issue(std::string owner, bool agent, std::string description,
                                         std::optional<Duration> ttl) {
  if (ttl && ttl->count() <= 0) return InvalidArgument("token lifetime must be positive");
  IssuedToken out;
  out.secret = RandomHex(kSecretBytes);
  TokenRecord& t = out.record;
  t.id = "tok-" + RandomHex(8);
  t.hash = Sha256Hex(out.secret);
  t.owner = std::move(owner);
  t.agent = agent;
  t.description = std::move(description);
  t.created = clock_.Now();
  if (ttl) t.expires = t.created + *ttl;
  ABACUS_RETURN_IF_ERROR(AddToken(t));
  return out;
}

Result<IssuedToken> TokenRegistry::IssueToken(std::string_view owner, std::string description,
                                              std::optional<Duration> ttl) {
  {
    MutexLock lock(mu_);
    if (users_.find(owner) == users_.end()) return NotFound("user " + std::string(owner) + " not found");
  }
  return Issue(std::string(owner), /*agent=*/false, std::move(description), ttl);
}

Result<IssuedToken> TokenRegistry::IssueNodeCredential(std::string_view node, std::optional<Duration> ttl) {
  RoleBinding b;
  b.role = Role::kAgent;
  b.node = std::string(node);
  ABACUS_RETURN_IF_ERROR(b.Validate());
  return Issue(std::string(node), /*agent=*/true, "node credential", ttl);
}

Status TokenRegistry::AddToken(TokenRecord record) {
  MutexLock lock(mu_);
  if (tokens_.count(record.id) > 0) return AlreadyExists("token " + record.id + " already exists");
  for (const auto& [id, t] : tokens_) {
    if (t.hash == record.hash) return AlreadyExists("a token with this hash already exists (" + id + ")");
  }
  std::string id = record.id;
  tokens_.emplace(std::move(id), std::move(record));
  return Status::OK();
}

void TokenRegistry::RemoveToken(std::string_view id) {
  MutexLock lock(mu_);
  auto it = tokens_.find(id);
  if (it != tokens_.end()) tokens_.erase(it);
}

Result<TokenRecord> TokenRegistry::Revoke(std::string_view id) {
  MutexLock lock(mu_);
  auto it = tokens_.find(id);
  if (it == tokens_.end()) return NotFound("token " + std::string(id) + " not found");
  if (!it->second.revoked) it->second.revoked = clock_.Now();
  return it->second;
}

std::optional<TokenRecord> TokenRegistry::FindToken(std::string_view id) const {
  MutexLock lock(mu_);
  auto it = tokens_.find(id);
  if (it == tokens_.end()) return std::nullopt;
  return it->second;
}

std::vector<TokenRecord> TokenRegistry::Tokens(std::optional<std::string_view> owner) const {
  MutexLock lock(mu_);
  std::vector<TokenRecord> out;
  for (const auto& [id, t] : tokens_) {
    if (!owner || t.owner == *owner) out.push_back(t);
  }
  return out;
}

Status TokenRegistry::StillStands(const Principal& p) const {
  Time now = clock_.Now();
  MutexLock lock(mu_);
  auto t = tokens_.find(p.token_id);
  if (t == tokens_.end()) return Unauthenticated("token " + p.token_id + " no longer exists");
  if (t->second.revoked) return Unauthenticated("token " + p.token_id + " was revoked");
  if (t->second.expires && now >= *t->second.expires) {
    return Unauthenticated("token " + p.token_id + " expired at " + FormatTime(*t->second.expires));
  }
  if (t->second.agent) return Status::OK();
  auto u = users_.find(t->second.owner);
  if (u == users_.end()) return Unauthenticated("user " + t->second.owner + " no longer exists");
  if (u->second.disabled) return Unauthenticated("user " + t->second.owner + " is disabled");
  if (Principal::User(u->second.name, u->second.roles).ToString() != p.ToString()) {
    return Unauthenticated("the roles of user " + t->second.owner + " changed: ask again");
  }
  return Status::OK();
}

Result<Principal> TokenRegistry::Authenticate(std::string_view bearer) {
  if (bearer.empty()) return Unauthenticated("missing bearer token (Authorization: Bearer TOKEN)");
  const std::string hash = BearerSha256Hex(bearer);
  Time now = clock_.Now();
  MutexLock lock(mu_);
  // 1) Compare against every stored hash in constant time, without stopping at a match.
  TokenRecord* found = nullptr;
  for (auto& [id, t] : tokens_) {
    if (ConstantTimeEqual(t.hash, hash)) found = &t;
  }
  if (found == nullptr) return Unauthenticated("invalid token");
  // 2) Check that it is still good, then who holds it.
  if (found->revoked) return Unauthenticated("token " + found->id + " was revoked");
  if (found->expires && now >= *found->expires) {
    return Unauthenticated("token " + found->id + " expired at " + FormatTime(*found->expires));
  }
  Principal p;
  if (found->agent) {
    p = Principal::Agent(found->owner);
  } else {
    auto u = users_.find(found->owner);
    if (u == users_.end()) return Unauthenticated("token " + found->id + " belongs to no user");
    if (u->second.disabled) return Unauthenticated("user " + found->owner + " is disabled");
    p = Principal::User(u->second.name, u->second.roles);
  }
  p.token_id = found->id;
  // 3) Record the use.
  found->last_used = now;
  if (std::find(dirty_.begin(), dirty_.end(), found->id) == dirty_.end()) dirty_.push_back(found->id);
  return p;
}

std::vector<TokenRecord> TokenRegistry::TakeDirtyTokens() {
  MutexLock lock(mu_);
  std::vector<TokenRecord> out;
  for (const auto& id : dirty_) {
    auto it = tokens_.find(id);
    if (it != tokens_.end()) out.push_back(it->second);
  }
  dirty_.clear();
  return out;
}

Status TokenRegistry::LoadFrom(Store& store) {
  ABACUS_ASSIGN_OR_RETURN(auto user_records, store.List(kUserStoreKind));
  ABACUS_ASSIGN_OR_RETURN(auto token_records, store.List(kTokenStoreKind));
  std::map<std::string, UserSpec, std::less<>> users;
  for (const auto& r : user_records) {
    auto j = nlohmann::json::parse(r.json, nullptr, false);
    if (j.is_discarded()) return Internal("stored user " + r.key + " is not JSON");
    auto o = GovernanceObjectFromJson(j);
    if (!o.ok()) return Internal("stored user " + r.key + ": " + o.status().message());
    auto* u = std::get_if<UserSpec>(&*o);
    if (u == nullptr) return Internal("stored user " + r.key + " is not a User");
    users[u->name] = *u;
  }
  std::map<std::string, TokenRecord, std::less<>> tokens;
  for (const auto& r : token_records) {
    auto j = nlohmann::json::parse(r.json, nullptr, false);
    if (j.is_discarded()) return Internal("stored token " + r.key + " is not JSON");
    auto t = TokenRecordFromJson(j);
    if (!t.ok()) return Internal(t.status().message());
    tokens[t->id] = *t;
  }
  MutexLock lock(mu_);
  users_ = std::move(users);
  tokens_ = std::move(tokens);
  dirty_.clear();
  return Status::OK();
}

void StagePutUser(WriteBatch& batch, const UserSpec& user) {
  batch.Put(std::string(kUserStoreKind), user.name, ToPlainJson(EncodeUserSpec(user)).dump());
}

void StagePutToken(WriteBatch& batch, const TokenRecord& token) {
  batch.Put(std::string(kTokenStoreKind), token.id, TokenRecordToJson(token).dump());
}

}  // namespace abacus::govern
