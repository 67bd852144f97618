// What an apply (or a delete) did to one configuration document (issue 22.1): the typed item
// of an apply's answer, written as JSON at the HTTP edge (write_views_json.h).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "server/secret_views.h"

namespace abacus::server {

struct AppliedView {
  std::string kind;
  std::string name;
  std::string action;  // created, configured, unchanged, deleted
  // A dry run's diff against what the server holds, [{path, from, to}]; nullopt: none shown.
  std::optional<nlohmann::json> diff;
  // A Secret's summary (names, keys, version: never a value; secrets.h), which the answer
  // shows beside kind and action (in place of name); nullopt for other kinds.
  std::optional<SecretView> secret;
};

}  // namespace abacus::server
