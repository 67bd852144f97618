// The one rule for a JSON object's field names where a body is read by hand (action bodies,
// metrics samples, secrets): a field not among those allowed is refused by name, never taken as
// absent — a misspelt "expire" must not give a token that never expires.
//
//   ABACUS_RETURN_IF_ERROR(OnlyFields(body, {"reason"}, R"({} or {"reason": "..."})"));
#pragma once

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string_view>

#include "common/status.h"

namespace abacus {

// OK when `value` is a JSON object whose fields are all among `allowed`; else InvalidArgument,
// prefixed with `where` ("body", "samples[2]"): "unknown field 'reson'; allowed: reason (expected
// …)", or "expected …" (`expected`: the object's shape) when it is not an object.
Status OnlyFields(const nlohmann::json& value, std::initializer_list<std::string_view> allowed,
                  std::string_view expected, std::string_view where = "body");

}  // namespace abacus
