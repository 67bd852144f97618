// Points in time as people write them on a command line (`report --from`, `audit --since`):
// one parser, so every verb that takes a time takes the same forms.
#pragma once

#include <string_view>

#include "common/clock.h"
#include "common/status.h"

namespace abacus {

// Parses `text` relative to `now`: an RFC 3339 time or a date (ParseTime), a duration ago
// ("7d", "24h", "1h30m": ParseDurationSpec), or "now", "today" (midnight UTC) and "yesterday"
// (the midnight UTC before today's). Case does not matter for the words. InvalidArgument
// naming every accepted form otherwise.
Result<Time> ParseTimeSpec(std::string_view text, Time now);

}  // namespace abacus
