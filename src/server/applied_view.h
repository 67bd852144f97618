// What an apply (or a delete) did to one configuration document (issue 22.1): the typed item
// of an apply's answer, written as JSON at the HTTP edge (write_views_json.h).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace abacus::server {

struct AppliedView {
  std::string kind;
  std::string name;
  std::string action;  // created, configured, unchanged, deleted
  // A dry run's diff against what the server holds, [{path, from, to}]; nullopt: none shown.
  std::optional<nlohmann::json> diff;
  // A Secret's summary (names, keys, version: never a value; secrets.h), which the answer
  // shows in place of kind, name and action; nullopt for other kinds.
  std::optional<nlohmann::json> secret;
};

}  // namespace abacus::server
