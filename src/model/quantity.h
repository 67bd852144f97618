// Quantity: an exact amount with a unit suffix, as written in specs ("500m", "16", "64Gi", "80G").
// Stored as an integer count of thousandths (milli-units); no floating point anywhere.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace abacus {

class Quantity {
 public:
  // Which suffix family ToString() prefers: powers of 1000 (k, M, G…) or 1024 (Ki, Mi, Gi…).
  enum class Format { kDecimal, kBinary };

  // Largest magnitude representable, in milli-units (INT64_MAX).
  static constexpr int64_t kMaxMilli = INT64_MAX;

  Quantity() = default;

  // Parses "[+-]DIGITS[.DIGITS][SUFFIX]" where SUFFIX is m, k, M, G, T, P, E, Ki, Mi, Gi, Ti, Pi,
  // Ei or an exponent e<N>/E<N>. Fails with InvalidArgument on bad syntax, on precision finer
  // than 1m, and with OutOfRange past ±9.2e15 units.
  static Result<Quantity> Parse(std::string_view text);
  // Returns a quantity of `milli` thousandths.
  static Quantity FromMilli(int64_t milli, Format format = Format::kDecimal) {
    return Quantity(milli, format);
  }
  // Returns a quantity of `units` whole units; OutOfRange if it cannot be held.
  static Result<Quantity> FromUnits(int64_t units, Format format = Format::kDecimal);

  int64_t milli() const { return milli_; }
  Format format() const { return format_; }
  // Returns the value in whole units, rounded up (bytes for memory, devices for counts).
  int64_t CeilUnits() const;
  // Returns true when the value is a whole number of units.
  bool IsWhole() const { return milli_ % 1000 == 0; }

  // Returns the canonical text: the largest suffix of this quantity's family that divides the
  // value exactly, "Nm" for fractions; Parse(ToString()) == *this always.
  std::string ToString() const;

  friend bool operator==(const Quantity& a, const Quantity& b) { return a.milli_ == b.milli_; }
  friend std::strong_ordering operator<=>(const Quantity& a, const Quantity& b) {
    return a.milli_ <=> b.milli_;
  }

 private:
  Quantity(int64_t milli, Format format) : milli_(milli), format_(format) {}
  int64_t milli_ = 0;
  Format format_ = Format::kDecimal;
};

}  // namespace abacus
