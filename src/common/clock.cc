#include "common/clock.h"

#include <cassert>
#include <cstdio>
#include <ctime>

namespace abacus {

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
