// Identity: users (governance_spec.h UserSpec), API tokens and node credentials, and the
// TokenRegistry that turns a bearer token into a Principal.
//
// A token is 256 random bits from OpenSSL's CSPRNG, written as 64 hex characters. Its secret
// is returned once, when it is made; the registry and the store keep only its SHA-256 hash,
// plus a public id ("tok-…") by which it is listed and revoked. Tokens may expire; revoked,
// expired or disabled-user tokens stop authenticating. A node credential is a token owned by
// a node, whose principal holds only the `agent` role for that node.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "workload/governance_spec.h"

namespace abacus {
class Store;
class WriteBatch;
}  // namespace abacus

namespace abacus::govern {

// Who is calling: a user with its role bindings, or a node agent.
struct Principal {
  enum class Kind : uint8_t { kUser, kAgent };
  Kind kind = Kind::kUser;
  std::string name;                // user name, or node name for an agent
  std::vector<RoleBinding> roles;  // an agent: exactly {agent of node <name>}
  std::string token_id;            // the token that authenticated (empty when built in code)

  // Returns a principal holding `roles`, for tests and built-in callers.
  static Principal User(std::string name, std::vector<RoleBinding> roles);
  static Principal Agent(std::string node);
  // True when one of its bindings has role `r`.
  bool HasRole(Role r) const;
  // Returns "user alice (member of nlp/llm, viewer)" or "agent of node gpu-01".
  std::string ToString() const;
};

// One token as stored: never the secret.
struct TokenRecord {
  std::string id;           // public: "tok-" + 16 hex
  std::string hash;         // hex SHA-256 of the secret
  std::string owner;        // user name, or node name when agent
  bool agent = false;       // a node credential
  std::string description;  // what it is for ("ci", "laptop")
  Time created{};
  std::optional<Time> expires;
  std::optional<Time> revoked;
  std::optional<Time> last_used;

  // True when it authenticates at `now`: not revoked and not expired.
  bool ActiveAt(Time now) const;
  bool operator==(const TokenRecord&) const = default;
};

// A freshly made token: `secret` is shown to its owner once and never stored.
struct IssuedToken {
  std::string secret;
  TokenRecord record;
};

// Returns the store form of a token record (kind "token", key = id).
nlohmann::json TokenRecordToJson(const TokenRecord& t);
// Reads a token record; InvalidArgument when a field is missing or malformed.
Result<TokenRecord> TokenRecordFromJson(const nlohmann::json& j);

// Store kinds used by the registry: users under "user" (key: name, JSON: EncodeUserSpec) and
// tokens under "token" (key: id, JSON: TokenRecordToJson).
inline constexpr std::string_view kUserStoreKind = "user";
inline constexpr std::string_view kTokenStoreKind = "token";

// Users and tokens in memory; safe to call from several threads. Mutations change memory only:
// the caller persists them (StagePut…) in the same store commit as the request they serve, and
// on commit failure undoes them (RemoveToken / PutUser of the old value).
class TokenRegistry {
 public:
  explicit TokenRegistry(const Clock& clock);

  // Adds or replaces a user; InvalidArgument when a binding is malformed.
  Status PutUser(UserSpec user);
  // Removes a user and revokes its tokens; NotFound when absent.
  Status RemoveUser(std::string_view name);
  // Returns a copy of the user, or nullopt.
  std::optional<UserSpec> FindUser(std::string_view name) const;
  std::vector<UserSpec> Users() const;

  // Makes a token for user `owner`, valid for `ttl` (forever when nullopt), and adds it.
  // NotFound when the user does not exist, InvalidArgument for a non-positive ttl.
  Result<IssuedToken> IssueToken(std::string_view owner, std::string description,
                                 std::optional<Duration> ttl = std::nullopt);
  // Makes a node credential for `node` (role agent of that node) and adds it.
  Result<IssuedToken> IssueNodeCredential(std::string_view node, std::optional<Duration> ttl = std::nullopt);
  // Adds a token record made elsewhere (loaded from the store, or a commit being redone).
  // AlreadyExists when its id or hash is already present.
  Status AddToken(TokenRecord record);
  // Removes a token record entirely (undo of an issue whose commit failed).
  void RemoveToken(std::string_view id);
  // Marks a token revoked now and returns the updated record; NotFound when absent.
  Result<TokenRecord> Revoke(std::string_view id);
  // Returns a copy of the token record, or nullopt.
  std::optional<TokenRecord> FindToken(std::string_view id) const;
  // Returns the token records, ordered by id; only `owner`'s when given.
  std::vector<TokenRecord> Tokens(std::optional<std::string_view> owner = std::nullopt) const;

  // Returns the principal the token `bearer` belongs to and records its last use, or
  // Unauthenticated ("invalid token", "token tok-… expired at …", "token tok-… was revoked",
  // "user alice is disabled"). Compares hashes in constant time, over every token.
  Result<Principal> Authenticate(std::string_view bearer);
  // Whether `p`, as Authenticate returned it, still stands: its token neither revoked nor
  // expired, its user there, enabled and holding the same roles. Unauthenticated naming what
  // changed otherwise. A long poll asks before it answers with what happened while it waited.
  Status StillStands(const Principal& p) const;

  // Returns the records whose last_used changed since the previous call, so that the caller
  // can persist them in the background rather than write on every request.
  std::vector<TokenRecord> TakeDirtyTokens();

  // Loads users and tokens from `store`, replacing what is in memory.
  Status LoadFrom(Store& store);

 private:
  Result<IssuedToken> Issue(std::string owner, bool agent, std::string description,
                            std::optional<Duration> ttl);

  const Clock& clock_;
  mutable Mutex mu_;
  std::map<std::string, UserSpec, std::less<>> users_ GUARDED_BY(mu_);
  std::map<std::string, TokenRecord, std::less<>> tokens_ GUARDED_BY(mu_);  // by id
  std::vector<std::string> dirty_ GUARDED_BY(mu_);  // ids
};

// Adds the writes that persist `user` / `token` to `batch`.
void StagePutUser(WriteBatch& batch, const UserSpec& user);
void StagePutToken(WriteBatch& batch, const TokenRecord& token);

}  // namespace abacus::govern
