// Durations as written in specs: "72h", "30m", "90s", "1h30m", "2d", "500ms".
#pragma once

#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"

namespace abacus {

// Parses one or more NUMBER UNIT pairs, largest unit first, each unit at most once: units d
// (24h), h, m, s, ms. "0" alone is zero. InvalidArgument on anything else (negative values,
// fractions, unknown or repeated units, overflow past ~290 years).
Result<Duration> ParseDurationSpec(std::string_view text);

// Formats `d` canonically ("72h", "1h30m", "1m30s", "1500ms" → "1s500ms", "0s");
// ParseDurationSpec(FormatDurationSpec(d)) == d for every d >= 0 that is a whole number of
// milliseconds. Days are not used, so "72h" stays "72h".
std::string FormatDurationSpec(Duration d);

}  // namespace abacus
