// Name tables of control/'s enums: one array of names per enum, indexed by the enum value.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "common/status.h"

namespace abacus::control {

// Returns the enum whose name in `names` is `text`, or InvalidArgument
// "unknown WHAT "text" (want A, B, …)".
template <typename E, size_t N>
Result<E> ParseName(const std::array<std::string_view, N>& names, std::string_view text, std::string_view what) {
  std::string want;
  for (size_t i = 0; i < N; ++i) {
    if (names[i] == text) return static_cast<E>(i);
    want += (i == 0 ? "" : ", ") + (names[i].empty() ? std::string("\"\"") : std::string(names[i]));
  }
  return InvalidArgument("unknown " + std::string(what) + " \"" + std::string(text) + "\" (want " + want + ")");
}

}  // namespace abacus::control
