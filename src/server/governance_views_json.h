// The JSON shapes of Governance's answers (governance_views.h) at the HTTP edge: field names and
// values are those of the API (docs/api.md, "Tokens and users", "Admission policies").
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "common/status.h"
#include "server/governance_views.h"

namespace abacus::server {

// {id, user, agent, description, createdAt, active, expiresAt?, revokedAt?, lastUsedAt?}.
nlohmann::json TokenViewJson(const TokenView& t);
// TokenViewJson plus "token": the secret.
nlohmann::json IssuedTokenJson(const IssuedTokenView& t);
// {"items": [TokenViewJson]}.
nlohmann::json TokenListJson(const std::vector<TokenView>& tokens);
// {token, rotatedAt, warning?}.
nlohmann::json RotatedAdminTokenJson(const RotatedAdminTokenView& r);
// The user's document fields, plus "tokens" when the view holds them.
nlohmann::json UserViewJson(const UserView& u);
// {"items": [UserViewJson]}.
nlohmann::json UserListJson(const std::vector<UserView>& users);
// The policy's document fields.
nlohmann::json PolicyJson(const AdmissionPolicy& p);
// {"items": [PolicyJson]}.
nlohmann::json PolicyListJson(const std::vector<AdmissionPolicy>& policies);
// {name, deleted: true}.
nlohmann::json DeletedJson(const DeletedView& d);

// The same for a result: its error, or the answer encoded.
Result<nlohmann::json> TokenViewJson(const Result<TokenView>& t);
Result<nlohmann::json> IssuedTokenJson(const Result<IssuedTokenView>& t);
Result<nlohmann::json> RotatedAdminTokenJson(const Result<RotatedAdminTokenView>& r);
Result<nlohmann::json> UserViewJson(const Result<UserView>& u);
Result<nlohmann::json> PolicyJson(const Result<AdmissionPolicy>& p);
Result<nlohmann::json> DeletedJson(const Result<DeletedView>& d);

}  // namespace abacus::server
