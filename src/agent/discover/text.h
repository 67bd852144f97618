// Small text helpers shared by the vendor-tool parsers.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace abacus::agent {

// Returns `s` without leading and trailing whitespace.
std::string_view TrimText(std::string_view s);
// Splits into lines (without "\n" or "\r").
std::vector<std::string_view> SplitLines(std::string_view text);
// Splits on runs of whitespace.
std::vector<std::string_view> SplitWords(std::string_view s);
// Splits on `sep`, trimming each piece.
std::vector<std::string_view> SplitTrim(std::string_view s, char sep);
// Parses a non-negative decimal integer (the whole text); false otherwise.
bool ParseUint(std::string_view s, long long& out);
// Returns true when `a` equals `b` ignoring ASCII case.
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

}  // namespace abacus::agent
