// Standard base64 (RFC 4648, with padding): secret values travel in JSON as base64 (issue 24).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace abacus {

// Returns `bytes` as base64 with '=' padding.
std::string Base64Encode(std::string_view bytes);
// Returns the bytes of padded base64 `text`; nullopt when it is not valid base64.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace abacus
