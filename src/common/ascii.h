// ASCII case folding for names and keywords (HTTP methods, kinds, states): bytes outside A-Z are
// kept as they are, whatever the locale.
#pragma once

#include <string>
#include <string_view>

namespace abacus {

// `s` with A-Z turned into a-z.
inline std::string AsciiLower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

// `s` with A-Z turned into a-z.
inline std::string AsciiLower(std::string_view s) { return AsciiLower(std::string(s)); }

}  // namespace abacus
