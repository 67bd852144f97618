#include "meter/units.h"

#include <cstdio>

namespace abacus::meter {

ResourceTime RoundDiv(ResourceTime num, ResourceTime den) {
  if (num >= 0) return (num + den / 2) / den;
  return -((-num + den / 2) / den);
}

namespace {

// A decimal of `value` counted in units of 10^-digits, with `digits` decimals:
// FormatFixed(1500, 3) = "1.500", FormatFixed(277778, 9) = "0.000277778". The one decimal printer
// of the thousandths (tables) and billionths (JSON) below.
std::string FormatFixed(ResourceTime value, int digits) {
  const bool negative = value < 0;
  unsigned __int128 v = negative ? static_cast<unsigned __int128>(-value) : static_cast<unsigned __int128>(value);
  unsigned __int128 scale = 1;
  for (int i = 0; i < digits; ++i) scale *= 10;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%s%llu.%0*llu", negative ? "-" : "", static_cast<unsigned long long>(v / scale),
                digits, static_cast<unsigned long long>(v % scale));
  return buf;
}

}  // namespace

std::string FormatThousandths(int64_t thousandths) { return FormatFixed(thousandths, 3); }

std::string FormatMilliHours(ResourceTime milli_micros) {
  // milli-units × us / 3.6e9 = thousandths of unit-hours.
  return FormatThousandths(static_cast<int64_t>(RoundDiv(milli_micros, kMicrosPerHour)));
}

std::string FormatGiBHours(ResourceTime byte_micros) {
  ResourceTime den = static_cast<ResourceTime>(kBytesPerGiB) * kMicrosPerHour;
  return FormatThousandths(static_cast<int64_t>(RoundDiv(byte_micros * 1000, den)));
}

std::string FormatMilliHoursExact(ResourceTime milli_micros) {
  // milli-units × us / (1000 × 3.6e9) × 1e9 = milli_micros / 3600 billionths of unit-hours.
  return FormatFixed(RoundDiv(milli_micros, 3600), 9);
}

std::string FormatGiBHoursExact(ResourceTime byte_micros) {
  // bytes × us / (2^30 × 3.6e9) × 1e9 = bytes × us × 10 / (2^30 × 36).
  return FormatFixed(RoundDiv(byte_micros * 10, static_cast<ResourceTime>(kBytesPerGiB) * 36), 9);
}

double MilliHours(ResourceTime milli_micros) {
  return static_cast<double>(milli_micros) / (1000.0 * static_cast<double>(kMicrosPerHour));
}

std::string FormatMoney(int64_t micros) {
  bool negative = micros < 0;
  uint64_t v = negative ? 0 - static_cast<uint64_t>(micros) : static_cast<uint64_t>(micros);
  char frac[8];
  std::snprintf(frac, sizeof(frac), "%06llu", static_cast<unsigned long long>(v % 1'000'000));
  std::string f(frac);
  while (f.size() > 2 && f.back() == '0') f.pop_back();
  return (negative ? "-" : "") + std::to_string(v / 1'000'000) + "." + f;
}

Result<int64_t> ParseMoney(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument("invalid price '" + std::string(text) + "': " + why);
  };
  if (text.empty()) return bad("empty");
  int64_t whole = 0, frac = 0;
  int frac_digits = 0;
  bool dot = false, any_digit = false;
  for (char c : text) {
    if (c == '.' && !dot) {
      dot = true;
      continue;
    }
    if (c < '0' || c > '9') return bad("expected a non-negative decimal number");
    any_digit = true;
    if (dot) {
      if (++frac_digits > 6) return bad("at most 6 decimals");
      frac = frac * 10 + (c - '0');
    } else {
      if (whole > 1'000'000'000'000) return bad("too large");
      whole = whole * 10 + (c - '0');
    }
  }
  if (!any_digit) return bad("expected a non-negative decimal number");
  for (int i = frac_digits; i < 6; ++i) frac *= 10;
  return whole * 1'000'000 + frac;
}

std::string FormatSeconds(int64_t micros) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.1f", static_cast<double>(micros) / 1e6);
  return buf;
}

std::string FormatPercent(double ratio) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.1f", ratio * 100.0);
  return buf;
}

}  // namespace abacus::meter
