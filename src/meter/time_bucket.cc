#include "meter/time_bucket.h"

#include <chrono>
#include <cstdio>

namespace abacus::meter {
namespace {

using std::chrono::days;
using std::chrono::floor;
using std::chrono::sys_days;
using std::chrono::year_month_day;

// Reads exactly `n` digits at text[pos]; advances pos. -1 when they are not digits.
int Digits(std::string_view text, size_t& pos, int n) {
  if (pos + n > text.size()) return -1;
  int v = 0;
  for (int i = 0; i < n; ++i) {
    char c = text[pos + i];
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  pos += n;
  return v;
}

bool Expect(std::string_view text, size_t& pos, char c) {
  if (pos >= text.size() || (text[pos] != c && !(c == 'T' && text[pos] == 't'))) return false;
  ++pos;
  return true;
}

}  // namespace

Result<Time> ParseTimestamp(std::string_view text) {
  auto bad = [&] {
    return InvalidArgument("invalid time '" + std::string(text) +
                           "': expected RFC 3339 (2026-03-15T08:00:00Z) or a date (2026-03-15)");
  };
  size_t pos = 0;
  int y = Digits(text, pos, 4);
  if (y < 0 || !Expect(text, pos, '-')) return bad();
  int mo = Digits(text, pos, 2);
  if (mo < 0 || !Expect(text, pos, '-')) return bad();
  int d = Digits(text, pos, 2);
  if (d < 0) return bad();
  year_month_day ymd{std::chrono::year(y), std::chrono::month(mo), std::chrono::day(d)};
  if (!ymd.ok()) return bad();
  int64_t micros = std::chrono::duration_cast<Duration>(sys_days(ymd).time_since_epoch()).count();
  if (pos == text.size()) return FromMicros(micros);
  if (!Expect(text, pos, 'T')) return bad();
  int h = Digits(text, pos, 2);
  if (h < 0 || h > 23 || !Expect(text, pos, ':')) return bad();
  int mi = Digits(text, pos, 2);
  if (mi < 0 || mi > 59 || !Expect(text, pos, ':')) return bad();
  int s = Digits(text, pos, 2);
  if (s < 0 || s > 60) return bad();
  micros += (int64_t{h} * 3600 + mi * 60 + s) * 1'000'000;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    int64_t frac = 0, scale = 100'000;
    size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      frac += (text[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return bad();
    micros += frac;
  }
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    int sign = text[pos] == '+' ? 1 : -1;
    ++pos;
    int oh = Digits(text, pos, 2);
    if (oh < 0 || oh > 23 || !Expect(text, pos, ':')) return bad();
    int om = Digits(text, pos, 2);
    if (om < 0 || om > 59) return bad();
    micros -= sign * (int64_t{oh} * 3600 + om * 60) * 1'000'000;
  } else {
    return bad();
  }
  if (pos != text.size()) return bad();
  return FromMicros(micros);
}

Time BucketStart(Time t, TimeBucket bucket) {
  sys_days day = floor<days>(t);
  switch (bucket) {
    case TimeBucket::kNone: return t;
    case TimeBucket::kHour: return std::chrono::floor<std::chrono::hours>(t);
    case TimeBucket::kDay: return Time(day);
    case TimeBucket::kWeek: {
      std::chrono::weekday wd{day};
      return Time(day - days((wd.c_encoding() + 6) % 7));  // back to Monday
    }
    case TimeBucket::kMonth: {
      year_month_day ymd{day};
      return Time(sys_days(ymd.year() / ymd.month() / 1));
    }
  }
  return t;
}

Time NextBucket(Time start, TimeBucket bucket) {
  sys_days day = floor<days>(start);
  switch (bucket) {
    case TimeBucket::kNone: return Time::max();
    case TimeBucket::kHour: return std::chrono::floor<std::chrono::hours>(start) + std::chrono::hours(1);
    case TimeBucket::kDay: return Time(day + days(1));
    case TimeBucket::kWeek: return Time(day + days(7));
    case TimeBucket::kMonth: {
      year_month_day ymd{day};
      return Time(sys_days((ymd.year() / ymd.month() / 1) + std::chrono::months(1)));
    }
  }
  return Time::max();
}

std::string BucketLabel(Time start, TimeBucket bucket) {
  if (bucket == TimeBucket::kNone) return "";
  year_month_day ymd{floor<days>(start)};
  char buf[32];
  if (bucket == TimeBucket::kHour) {
    auto hour = std::chrono::duration_cast<std::chrono::hours>(start - Time(floor<days>(start))).count();
    std::snprintf(buf, sizeof(buf), "%04d-%02u-%02uT%02d:00:00Z", static_cast<int>(ymd.year()),
                  static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                  static_cast<int>(hour));
  } else if (bucket == TimeBucket::kMonth) {
    std::snprintf(buf, sizeof(buf), "%04d-%02u", static_cast<int>(ymd.year()),
                  static_cast<unsigned>(ymd.month()));
  } else {
    std::snprintf(buf, sizeof(buf), "%04d-%02u-%02u", static_cast<int>(ymd.year()),
                  static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
  }
  return buf;
}

std::string_view TimeBucketName(TimeBucket bucket) {
  switch (bucket) {
    case TimeBucket::kNone: return "none";
    case TimeBucket::kHour: return "hour";
    case TimeBucket::kDay: return "day";
    case TimeBucket::kWeek: return "week";
    case TimeBucket::kMonth: return "month";
  }
  return "none";
}

}  // namespace abacus::meter
