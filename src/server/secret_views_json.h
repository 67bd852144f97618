// The JSON shapes of SecretVault's answers (secret_views.h) at the HTTP edge; field names are
// those of the API (docs/api.md, "Secrets"). Never a value.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "common/status.h"
#include "server/secret_views.h"

namespace abacus::server {

// {name, tenant, project?, keys, version, createdBy, createdAt}.
nlohmann::json SecretViewJson(const SecretView& s);
// {"items": [SecretViewJson]}.
nlohmann::json SecretListJson(const std::vector<SecretView>& secrets);
// {name, tenant, project?, deleted: true}.
nlohmann::json SecretDeletedJson(const SecretDeletedView& d);
// {reencrypted, keyId}.
nlohmann::json SecretsReencryptedJson(const SecretsReencryptedView& r);

// The same for a result: its error, or the answer encoded.
Result<nlohmann::json> SecretViewJson(const Result<SecretView>& s);
Result<nlohmann::json> SecretListJson(const Result<std::vector<SecretView>>& secrets);
Result<nlohmann::json> SecretDeletedJson(const Result<SecretDeletedView>& d);
Result<nlohmann::json> SecretsReencryptedJson(const Result<SecretsReencryptedView>& r);

}  // namespace abacus::server
