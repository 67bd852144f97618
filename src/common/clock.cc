#include "common/clock.h"

#include <cassert>
#include <cstdio>
#include <ctime>

namespace abacus {

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

}  // namespace

Result<Time> ParseTime(std::string_view text) {
  auto bad = [&] {
    return InvalidArgument("'" + std::string(text) +
                           "': expected an RFC 3339 time like 2026-12-02T17:51:20Z or 2026-12-02T17:51:20.5+08:00, or a date 2026-12-02");
  };
  size_t i = 0;
  auto digits = [&](size_t n, int64_t& out) {
    if (i + n > text.size()) return false;
    out = 0;
    for (size_t k = 0; k < n; ++k) {
      char c = text[i + k];
      if (c < '0' || c > '9') return false;
      out = out * 10 + (c - '0');
    }
    i += n;
    return true;
  };
  auto expect = [&](char c) {
    if (i < text.size() && (text[i] == c || (c == 'T' && (text[i] == 't' || text[i] == ' ')))) {
      ++i;
      return true;
    }
    return false;
  };
  int64_t y, mo, d, h = 0, mi = 0, sec = 0, frac = 0;
  if (!digits(4, y) || !expect('-') || !digits(2, mo) || !expect('-') || !digits(2, d)) return bad();
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return bad();
  int64_t offset_s = 0;
  if (i < text.size()) {
    if (!expect('T') || !digits(2, h) || !expect(':') || !digits(2, mi) || !expect(':') || !digits(2, sec)) return bad();
    if (h > 23 || mi > 59 || sec > 60) return bad();
    if (i < text.size() && text[i] == '.') {
      ++i;
      int64_t scale = 100000;
      size_t start = i;
      while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
        frac += (text[i] - '0') * scale;
        scale /= 10;
        ++i;
      }
      if (i == start) return bad();
    }
    if (i < text.size() && (text[i] == 'Z' || text[i] == 'z')) {
      ++i;
    } else if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
      int sign = text[i] == '-' ? -1 : 1;
      ++i;
      int64_t oh, om;
      if (!digits(2, oh) || !expect(':') || !digits(2, om) || oh > 23 || om > 59) return bad();
      offset_s = sign * (oh * 3600 + om * 60);
    } else {
      return bad();
    }
    if (i != text.size()) return bad();
  }
  int64_t secs = DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d)) * 86400 + h * 3600 +
                 mi * 60 + sec - offset_s;
  return FromMicros(secs * 1'000'000 + frac);
}

std::string FormatTime(Time t) {
  int64_t micros = ToMicros(t);
  std::time_t secs = static_cast<std::time_t>(micros / 1'000'000);
  int millis = static_cast<int>((micros % 1'000'000) / 1000);
  if (micros < 0 && micros % 1'000'000 != 0) {
    secs -= 1;
    millis = static_cast<int>(((micros % 1'000'000) + 1'000'000) / 1000);
  }
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
  return buf;
}

std::string FormatDuration(Duration d) {
  int64_t us = d.count();
  std::string sign = us < 0 ? "-" : "";
  if (us < 0) us = -us;
  char buf[96];
  if (us < 1000) {
    std::snprintf(buf, sizeof(buf), "%s%lldus", sign.c_str(), static_cast<long long>(us));
  } else if (us < 1'000'000) {
    std::snprintf(buf, sizeof(buf), "%s%lldms", sign.c_str(), static_cast<long long>(us / 1000));
  } else {
    long long s = us / 1'000'000;
    if (s < 60) {
      std::snprintf(buf, sizeof(buf), "%s%llds", sign.c_str(), s);
    } else if (s < 3600) {
      std::snprintf(buf, sizeof(buf), "%s%lldm%02llds", sign.c_str(), s / 60, s % 60);
    } else if (s < 86400) {
      std::snprintf(buf, sizeof(buf), "%s%lldh%02lldm", sign.c_str(), s / 3600, (s % 3600) / 60);
    } else {
      std::snprintf(buf, sizeof(buf), "%s%lldd%02lldh", sign.c_str(), s / 86400, (s % 86400) / 3600);
    }
  }
  return buf;
}

Time SystemClock::Now() const {
  return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
}

SystemClock& SystemClock::Get() {
  static SystemClock clock;
  return clock;
}

ManualClock::ManualClock(Time start) : micros_(ToMicros(start)) {}

void ManualClock::Advance(Duration d) {
  assert(d.count() >= 0);
  micros_.fetch_add(d.count(), std::memory_order_acq_rel);
}

}  // namespace abacus
