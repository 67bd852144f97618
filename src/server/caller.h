// Who is calling: the caller the HTTP layer authenticated (Governance::Authenticate,
// governance_identity.cc), what every authorization check and audit entry of its request uses.
#pragma once

#include <cstdint>
#include <string>

#include "govern/identity.h"
#include "server/auth.h"

namespace abacus::server {

// Who is calling, as the HTTP layer authenticated it.
struct Caller {
  enum class Via : uint8_t {
    kAdminToken,      // DATA/admin.token: user "admin" holding the admin role
    kJoinToken,       // DATA/join.token: registers agents only
    kNodeCredential,  // a node credential from /api/v1/agent/register: its own node's agent calls
    kApiToken,        // an API token of a user (POST /api/v1/tokens)
  };
  Via via = Via::kApiToken;
  govern::Principal principal;  // what govern::Authorize checks
  Principal bootstrap;          // the TokenAuthorizer principal, for the first three

  // True for the join token and node credentials, whose rules stay TokenAuthorizer's.
  bool IsBootstrapAgent() const { return via == Via::kJoinToken || via == Via::kNodeCredential; }
  // The rate-limit bucket: the token id, "admin-token", "join-token" or "node:NAME".
  std::string RateKey() const;
  // The audit actor: "user alice", "user admin", "agent of node gpu-01", "join token".
  std::string Actor() const;
};

}  // namespace abacus::server
