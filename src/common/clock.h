// Clock: the one way code reads time, injected so tests and the simulator control it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace abacus {

using Duration = std::chrono::microseconds;
// Wall time, microseconds since the Unix epoch.
using Time = std::chrono::sys_time<Duration>;

// Returns `t` as microseconds since the epoch.
inline int64_t ToMicros(Time t) { return t.time_since_epoch().count(); }
// Returns the Time `micros` microseconds after the epoch.
inline Time FromMicros(int64_t micros) { return Time(Duration(micros)); }
// Formats `t` as RFC 3339 UTC with millisecond precision ("2026-12-02T17:51:20.123Z").
std::string FormatTime(Time t);
// Parses RFC 3339 ("2026-12-02T17:51:20.123Z", "…+08:00", fractions to microseconds) or a
// plain date ("2026-12-02", midnight UTC); InvalidArgument naming the expected form otherwise.
Result<Time> ParseTime(std::string_view text);
// Formats a duration for people: "850ms", "42s", "3m12s", "5h02m", "2d04h".
std::string FormatDuration(Duration d);

class Clock {
 public:
  virtual ~Clock() = default;
  // Returns the current time.
  virtual Time Now() const = 0;
};

// The real clock (system_clock).
class SystemClock final : public Clock {
 public:
  Time Now() const override;
  // Returns a process-wide instance.
  static SystemClock& Get();
};

// A clock that only moves when told; safe to read from several threads.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(Time start = FromMicros(1'767'225'600'000'000));  // 2026-01-01T00:00:00Z
  Time Now() const override { return FromMicros(micros_.load(std::memory_order_acquire)); }
  // Moves the clock forward by `d` (negative durations are rejected by assert).
  void Advance(Duration d);
  // Sets the clock to `t`.
  void Set(Time t) { micros_.store(ToMicros(t), std::memory_order_release); }

 private:
  std::atomic<int64_t> micros_;
};

}  // namespace abacus
