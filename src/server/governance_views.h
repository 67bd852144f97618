// What the token, user and policy operations of Governance answer, typed (issue 22.1: JSON only
// at the HTTP edge); governance_views_json.h writes them as the API shows them (docs/api.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "govern/identity.h"
#include "workload/governance_spec.h"

namespace abacus::server {

// A token as its manager sees it: never its hash or secret. `active`: it authenticates now.
struct TokenView {
  govern::TokenRecord record;
  bool active = false;
};

// A token just issued: the secret is in this answer once and nowhere else.
struct IssuedTokenView {
  TokenView token;
  std::string secret;
};

// The admin token after a rotation: the new secret, once; `warning` when DATA/admin.token could
// not be written (the token works; keep it from the answer).
struct RotatedAdminTokenView {
  std::string secret;
  Time rotated_at{};
  std::string warning;
};

// A user, with the API tokens it holds (node credentials left out) where the answer shows them.
struct UserView {
  UserSpec user;
  std::optional<std::vector<TokenView>> tokens;
};

// What a delete removed: its name.
struct DeletedView {
  std::string name;
};

}  // namespace abacus::server
