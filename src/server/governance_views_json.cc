#include "server/governance_views_json.h"

#include "server/result_json.h"

#include "tenancy/yaml_json.h"
#include "workload/governance_codec.h"

namespace abacus::server {

using nlohmann::json;

json TokenViewJson(const TokenView& v) {
  const govern::TokenRecord& t = v.record;
  json j = {{"id", t.id},
            {"user", t.owner},
            {"agent", t.agent},
            {"description", t.description},
            {"createdAt", FormatTime(t.created)},
            {"active", v.active}};
  if (t.expires) j["expiresAt"] = FormatTime(*t.expires);
  if (t.revoked) j["revokedAt"] = FormatTime(*t.revoked);
  if (t.last_used) j["lastUsedAt"] = FormatTime(*t.last_used);
  return j;
}

json IssuedTokenJson(const IssuedTokenView& t) {
  json j = TokenViewJson(t.token);
  j["token"] = t.secret;
  return j;
}

json TokenListJson(const std::vector<TokenView>& tokens) {
  json items = json::array();
  for (const TokenView& t : tokens) items.push_back(TokenViewJson(t));
  return {{"items", std::move(items)}};
}

json RotatedAdminTokenJson(const RotatedAdminTokenView& r) {
  json out = {{"token", r.secret}, {"rotatedAt", FormatTime(r.rotated_at)}};
  if (!r.warning.empty()) out["warning"] = r.warning;
  return out;
}

json UserViewJson(const UserView& u) {
  json j = ToPlainJson(EncodeUserSpec(u.user));
  if (u.tokens) {
    json tokens = json::array();
    for (const TokenView& t : *u.tokens) tokens.push_back(TokenViewJson(t));
    j["tokens"] = std::move(tokens);
  }
  return j;
}

json UserListJson(const std::vector<UserView>& users) {
  json items = json::array();
  for (const UserView& u : users) items.push_back(UserViewJson(u));
  return {{"items", std::move(items)}};
}

json PolicyJson(const AdmissionPolicy& p) { return ToPlainJson(EncodeAdmissionPolicy(p)); }

json PolicyListJson(const std::vector<AdmissionPolicy>& policies) {
  json items = json::array();
  for (const AdmissionPolicy& p : policies) items.push_back(PolicyJson(p));
  return {{"items", std::move(items)}};
}

json DeletedJson(const DeletedView& d) { return {{"name", d.name}, {"deleted", true}}; }

Result<json> TokenViewJson(const Result<TokenView>& t) {
  return EncodeResult(t, [](const TokenView& v) { return TokenViewJson(v); });
}
Result<json> IssuedTokenJson(const Result<IssuedTokenView>& t) {
  return EncodeResult(t, [](const IssuedTokenView& v) { return IssuedTokenJson(v); });
}
Result<json> RotatedAdminTokenJson(const Result<RotatedAdminTokenView>& r) {
  return EncodeResult(r, [](const RotatedAdminTokenView& v) { return RotatedAdminTokenJson(v); });
}
Result<json> UserViewJson(const Result<UserView>& u) {
  return EncodeResult(u, [](const UserView& v) { return UserViewJson(v); });
}
Result<json> PolicyJson(const Result<AdmissionPolicy>& p) {
  return EncodeResult(p, [](const AdmissionPolicy& v) { return PolicyJson(v); });
}
Result<json> DeletedJson(const Result<DeletedView>& d) {
  return EncodeResult(d, [](const DeletedView& v) { return DeletedJson(v); });
}

}  // namespace abacus::server
