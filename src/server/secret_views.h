// What SecretVault answers, typed (issue 22.1: JSON only at the HTTP edge): names, keys and
// versions, never a value. secret_views_json.h writes them as the API shows them (docs/api.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/clock.h"

namespace abacus::server {

// A secret's summary. `project` is empty for a tenant's secret.
struct SecretView {
  std::string name;
  std::string tenant;
  std::string project;
  std::vector<std::string> keys;  // in order
  int64_t version = 0;
  std::string created_by;
  Time created_at{};
};

// A secret deleted: its name and scope.
struct SecretDeletedView {
  std::string name;
  std::string tenant;
  std::string project;
};

// POST /api/v1/secrets/reencrypt: how many secrets were sealed again, and with which key.
struct SecretsReencryptedView {
  int64_t reencrypted = 0;
  std::string key_id;
};

}  // namespace abacus::server
