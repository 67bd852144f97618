#include "server/secret_views_json.h"

#include "server/result_json.h"

namespace abacus::server {

using nlohmann::json;

json SecretViewJson(const SecretView& s) {
  json out = {{"name", s.name},          {"tenant", s.tenant},          {"keys", s.keys},
              {"version", s.version},    {"createdBy", s.created_by}, {"createdAt", FormatTime(s.created_at)}};
  if (!s.project.empty()) out["project"] = s.project;
  return out;
}

json SecretListJson(const std::vector<SecretView>& secrets) {
  json items = json::array();
  for (const SecretView& s : secrets) items.push_back(SecretViewJson(s));
  return {{"items", std::move(items)}};
}

json SecretDeletedJson(const SecretDeletedView& d) {
  json out = {{"name", d.name}, {"tenant", d.tenant}, {"deleted", true}};
  if (!d.project.empty()) out["project"] = d.project;
  return out;
}

json SecretsReencryptedJson(const SecretsReencryptedView& r) {
  return {{"reencrypted", r.reencrypted}, {"keyId", r.key_id}};
}

Result<json> SecretViewJson(const Result<SecretView>& s) {
  return EncodeResult(s, [](const SecretView& v) { return SecretViewJson(v); });
}
Result<json> SecretListJson(const Result<std::vector<SecretView>>& secrets) {
  return EncodeResult(secrets, [](const std::vector<SecretView>& v) { return SecretListJson(v); });
}
Result<json> SecretDeletedJson(const Result<SecretDeletedView>& d) {
  return EncodeResult(d, [](const SecretDeletedView& v) { return SecretDeletedJson(v); });
}
Result<json> SecretsReencryptedJson(const Result<SecretsReencryptedView>& r) {
  return EncodeResult(r, [](const SecretsReencryptedView& v) { return SecretsReencryptedJson(v); });
}

}  // namespace abacus::server
