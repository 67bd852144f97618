// Calendar arithmetic for reports, all in UTC: parsing report times, and hour/day/week/month
// buckets (weeks start on Monday, ISO 8601).
#pragma once

#include <string>
#include <string_view>

#include "common/clock.h"
#include "common/status.h"

namespace abacus::meter {

enum class TimeBucket { kNone, kHour, kDay, kWeek, kMonth };

// Parses RFC 3339 ("2026-03-15T08:00:00Z", "2026-03-15T08:00:00.5+02:00") or a bare date
// ("2026-03-15", midnight UTC); InvalidArgument otherwise.
Result<Time> ParseTimestamp(std::string_view text);
// Returns the start of the bucket holding `t` (t itself for kNone).
Time BucketStart(Time t, TimeBucket bucket);
// Returns the start of the bucket after the one starting at `start` (far future for kNone).
Time NextBucket(Time start, TimeBucket bucket);
// Returns the label of the bucket starting at `start`: "2026-03-15T08:00:00Z" for an hour,
// "2026-03-15" for a day, the Monday's date for a week, "2026-03" for a month, "" for kNone.
std::string BucketLabel(Time start, TimeBucket bucket);
// Returns "hour", "day", "week", "month" or "none".
std::string_view TimeBucketName(TimeBucket bucket);

}  // namespace abacus::meter
