#include "common/json_fields.h"

#include <algorithm>
#include <string>

namespace abacus {

Status OnlyFields(const nlohmann::json& value, std::initializer_list<std::string_view> allowed,
                  std::string_view expected, std::string_view where) {
  const std::string at(where);
  if (!value.is_object()) return InvalidArgument(at + ": expected " + std::string(expected));
  for (const auto& [field, v] : value.items()) {
    if (std::find(allowed.begin(), allowed.end(), std::string_view(field)) != allowed.end()) continue;
    std::string names;
    for (std::string_view a : allowed) names += (names.empty() ? "" : ", ") + std::string(a);
    return InvalidArgument(at + ": unknown field '" + field + "'; " +
                           (allowed.size() == 0 ? std::string("it takes none") : "allowed: " + names) +
                           " (expected " + std::string(expected) + ")");
  }
  return Status::OK();
}

}  // namespace abacus
