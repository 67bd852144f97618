#include "common/duration_parse.h"

#include <array>
#include <cstdint>

namespace abacus {
namespace {

struct Unit {
  std::string_view text;
  int64_t micros;
};
// Largest first; "ms" is matched before "m".
constexpr std::array<Unit, 5> kUnits = {{{"d", 86'400'000'000},
                                         {"h", 3'600'000'000},
                                         {"m", 60'000'000},
                                         {"s", 1'000'000},
                                         {"ms", 1'000}}};
constexpr int64_t kMaxMicros = INT64_MAX / 2;

Status Bad(std::string_view text, std::string_view why) {
  return InvalidArgument("invalid duration '" + std::string(text) + "': " + std::string(why) +
                         " (expected e.g. 90s, 30m, 1h30m, 72h, 2d)");
}

}  // namespace

Result<Duration> ParseDurationSpec(std::string_view text) {
  if (text.empty()) return Bad(text, "empty");
  if (text == "0") return Duration(0);
  int64_t total = 0;
  size_t last_unit = 0;  // index into kUnits + 1 of the previous unit; units must descend
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] == '-') return Bad(text, "must not be negative");
    size_t start = i;
    int64_t value = 0;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      if (value > kMaxMicros / 10) return Bad(text, "too large");
      value = value * 10 + (text[i] - '0');
      ++i;
    }
    if (i == start) {
      if (text[i] == '.') return Bad(text, "fractions are not allowed");
      return Bad(text, "expected a number at '" + std::string(text.substr(i)) + "'");
    }
    if (i < text.size() && text[i] == '.') return Bad(text, "fractions are not allowed");
    if (i == text.size()) return Bad(text, "missing unit after " + std::string(text.substr(start)));
    size_t unit_index = kUnits.size();
    // Prefer the longest unit text that matches here ("ms" over "m").
    for (size_t u = 0; u < kUnits.size(); ++u) {
      if (text.substr(i, kUnits[u].text.size()) == kUnits[u].text &&
          (unit_index == kUnits.size() || kUnits[u].text.size() > kUnits[unit_index].text.size())) {
        unit_index = u;
      }
    }
    if (unit_index == kUnits.size()) {
      return Bad(text, "unknown unit at '" + std::string(text.substr(i)) + "'");
    }
    if (unit_index + 1 <= last_unit) return Bad(text, "units must go from largest to smallest, once each");
    last_unit = unit_index + 1;
    i += kUnits[unit_index].text.size();
    if (value > kMaxMicros / kUnits[unit_index].micros) return Bad(text, "too large");
    total += value * kUnits[unit_index].micros;
    if (total > kMaxMicros) return Bad(text, "too large");
  }
  return Duration(total);
}

std::string FormatDurationSpec(Duration d) {
  int64_t us = d.count();
  if (us <= 0) return "0s";
  std::string out;
  for (size_t u = 1; u < kUnits.size(); ++u) {  // h, m, s, ms
    int64_t n = us / kUnits[u].micros;
    if (n > 0) {
      out += std::to_string(n);
      out += kUnits[u].text;
      us -= n * kUnits[u].micros;
    }
  }
  if (us > 0 || out.empty()) out += std::to_string(us) + "us";
  return out;
}

}  // namespace abacus
