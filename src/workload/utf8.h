// Spec text must be UTF-8: the JSON forms of every object are, and an invalid byte that reached
// a string field would make encoding throw later.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace abacus {

// Returns the offset of the first byte of `text` that is not part of well-formed UTF-8 (RFC
// 3629: no overlong forms, surrogates or code points above U+10FFFF), or nullopt when all is.
std::optional<size_t> FindInvalidUtf8(std::string_view text);

}  // namespace abacus
