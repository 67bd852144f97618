// Authentication and authorization seam. Tokens are random 256-bit values shown once (written
// to DATA/admin.token and DATA/join.token, mode 0600) and kept in the store only as SHA-256
// hashes. Roles and tenant isolation (issue 9) plug in behind Authorizer.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "common/mutex.h"
#include "common/private_file.h"
#include "common/status.h"
#include "store/store.h"

namespace abacus::server {

// Who is calling.
struct Principal {
  std::string name;  // "admin", "agent-join", or the node name of a node credential
  std::string role;  // "admin", "agent" (join token), "node" (node credential)
};

// What a request wants to do: an HTTP method and path under /api/v1 or a top-level path.
struct AccessRequest {
  std::string method;
  std::string path;
};

class Authorizer {
 public:
  virtual ~Authorizer() = default;
  // Returns the principal holding `bearer_token`, or Unauthenticated.
  virtual Result<Principal> Authenticate(std::string_view bearer_token) const = 0;
  // Returns OK when `who` may do `what`, else PermissionDenied.
  virtual Status Authorize(const Principal& who, const AccessRequest& what) const = 0;
};

// Tokens from the store's meta table ("token.admin.sha256", "token.join.sha256"): the admin
// token may do everything; the join token only /api/v1/agent/ routes.
class TokenAuthorizer final : public Authorizer {
 public:
  // Loads the hashes; creates both tokens when the store has none or a token file is missing,
  // writing DATA/admin.token and DATA/join.token with mode 0600.
  static Result<std::unique_ptr<TokenAuthorizer>> Open(Store& store, const std::string& data_dir);

  Result<Principal> Authenticate(std::string_view bearer_token) const override;
  Status Authorize(const Principal& who, const AccessRequest& what) const override;
  // Makes `sha256` (of a node credential) the only credential of `node`; empty revokes it.
  // Thread-safe.
  void SetNodeCredential(const std::string& node, const std::string& sha256);
  // Makes `token` the admin token (the old one stops authenticating at once) and writes it to
  // DATA/admin.token (mode 0600). The caller has stored its hash under kAdminTokenMeta first.
  // Thread-safe. Unavailable when the file cannot be written (the token is in force anyway).
  Status ReplaceAdminToken(const std::string& token);

  static constexpr char kAdminTokenMeta[] = "token.admin.sha256";

 private:
  std::string data_dir_;
  mutable Mutex hash_mu_;  // the admin token can be rotated
  std::map<std::string, Principal> by_hash_ GUARDED_BY(hash_mu_);
  mutable Mutex nodes_mu_;
  std::map<std::string, std::string> node_by_hash_ GUARDED_BY(nodes_mu_);  // credential SHA-256 → node
};

// Writes `content` to `path` with mode 0600 (replacing it atomically): common/private_file.h.
using ::abacus::WritePrivateFile;

}  // namespace abacus::server
