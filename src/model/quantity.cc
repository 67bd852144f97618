#include "model/quantity.h"

#include <array>
#include <cctype>
#include <utility>

namespace abacus {
namespace {

using i128 = __int128;

struct Suffix {
  std::string_view text;
  int64_t multiplier;  // in units
  Quantity::Format format;
};

constexpr int64_t kKi = 1024;
constexpr std::array<Suffix, 12> kSuffixes = {{
    {"Ki", kKi, Quantity::Format::kBinary},
    {"Mi", kKi * kKi, Quantity::Format::kBinary},
    {"Gi", kKi * kKi * kKi, Quantity::Format::kBinary},
    {"Ti", kKi * kKi * kKi * kKi, Quantity::Format::kBinary},
    {"Pi", kKi * kKi * kKi * kKi * kKi, Quantity::Format::kBinary},
    {"Ei", kKi * kKi * kKi * kKi * kKi * kKi, Quantity::Format::kBinary},
    {"k", 1'000, Quantity::Format::kDecimal},
    {"M", 1'000'000, Quantity::Format::kDecimal},
    {"G", 1'000'000'000, Quantity::Format::kDecimal},
    {"T", 1'000'000'000'000, Quantity::Format::kDecimal},
    {"P", 1'000'000'000'000'000, Quantity::Format::kDecimal},
    {"E", 1'000'000'000'000'000'000, Quantity::Format::kDecimal},
}};

Status Bad(std::string_view text, std::string_view why) {
  return InvalidArgument("invalid quantity '" + std::string(text) + "': " + std::string(why) +
                         " (expected a number with an optional suffix: m, k, M, G, T, P, Ki, "
                         "Mi, Gi, Ti, Pi)");
}

}  // namespace

Result<Quantity> Quantity::Parse(std::string_view text) {
  std::string_view s = text;
  if (s.empty()) return Bad(text, "empty");
  bool negative = false;
  if (s.front() == '+' || s.front() == '-') {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  // Mantissa: digits with an optional fraction, held as an integer and a count of decimals.
  i128 mantissa = 0;
  int decimals = 0;
  int digits = 0;
  bool seen_point = false;
  size_t i = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '.') {
      if (seen_point) return Bad(text, "two decimal points");
      seen_point = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(c))) break;
    if (mantissa > static_cast<i128>(INT64_MAX) * 10) {
      return OutOfRange("quantity '" + std::string(text) + "' is too large");
    }
    mantissa = mantissa * 10 + (c - '0');
    ++digits;
    if (seen_point) ++decimals;
  }
  if (digits == 0) return Bad(text, "no digits");
  std::string_view suffix = s.substr(i);

  i128 multiplier = 1;  // units per mantissa unit, times 1000 for milli below
  int exponent = 0;
  Format format = Format::kDecimal;
  bool milli_suffix = false;
  if (suffix.empty()) {
  } else if (suffix == "m") {
    milli_suffix = true;
  } else if ((suffix.front() == 'e' || suffix.front() == 'E') && suffix != "E" && suffix != "Ei") {
    std::string_view e = suffix.substr(1);
    bool eneg = false;
    if (!e.empty() && (e.front() == '+' || e.front() == '-')) {
      eneg = e.front() == '-';
      e.remove_prefix(1);
    }
    if (e.empty() || e.size() > 2) return Bad(text, "bad exponent");
    for (char c : e) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return Bad(text, "bad exponent");
      exponent = exponent * 10 + (c - '0');
    }
    if (eneg) exponent = -exponent;
    if (exponent > 18) return OutOfRange("quantity '" + std::string(text) + "' is too large");
  } else {
    bool found = false;
    for (const auto& sfx : kSuffixes) {
      if (suffix == sfx.text) {
        multiplier = sfx.multiplier;
        format = sfx.format;
        found = true;
        break;
      }
    }
    if (!found) return Bad(text, "unknown suffix '" + std::string(suffix) + "'");
  }

  // value_milli = mantissa * multiplier * 1000 * 10^exponent / 10^decimals (exactly).
  // Bound every factor first so that no intermediate overflows 128 bits.
  if (decimals + (exponent < 0 ? -exponent : 0) > 30) {
    return Bad(text, "more precise than 1m (one thousandth)");
  }
  constexpr i128 kI128Max = static_cast<i128>((~static_cast<unsigned __int128>(0)) >> 1);
  if (mantissa > kI128Max / 1000 / multiplier) {
    return OutOfRange("quantity '" + std::string(text) + "' is too large");
  }
  i128 numerator = mantissa * multiplier;
  if (!milli_suffix) numerator *= 1000;
  i128 denominator = 1;
  for (int d = 0; d < decimals; ++d) denominator *= 10;
  if (exponent > 0) {
    for (int d = 0; d < exponent; ++d) {
      numerator *= 10;
      if (numerator > static_cast<i128>(INT64_MAX) * 1'000'000'000'000'000'000) {
        return OutOfRange("quantity '" + std::string(text) + "' is too large");
      }
    }
  } else {
    for (int d = 0; d < -exponent; ++d) denominator *= 10;
  }
  if (numerator % denominator != 0) {
    return Bad(text, "more precise than 1m (one thousandth)");
  }
  i128 milli = numerator / denominator;
  if (milli > static_cast<i128>(kMaxMilli)) {
    return OutOfRange("quantity '" + std::string(text) + "' is too large (at most 9.2e15 units)");
  }
  int64_t value = static_cast<int64_t>(milli);
  return Quantity(negative ? -value : value, format);
}

Result<Quantity> Quantity::FromUnits(int64_t units, Format format) {
  if (units > kMaxMilli / 1000 || units < -(kMaxMilli / 1000)) {
    return OutOfRange("quantity of " + std::to_string(units) + " units is too large");
  }
  return Quantity(units * 1000, format);
}

int64_t Quantity::CeilUnits() const {
  if (milli_ >= 0) return milli_ / 1000 + (milli_ % 1000 != 0 ? 1 : 0);
  return milli_ / 1000;
}

std::string Quantity::ToString() const {
  if (milli_ == 0) return "0";
  if (milli_ % 1000 != 0) return std::to_string(milli_) + "m";
  int64_t units = milli_ / 1000;
  int64_t magnitude = units < 0 ? -units : units;
  const Suffix* best = nullptr;
  for (const auto& sfx : kSuffixes) {
    if (sfx.format != format_) continue;
    if (magnitude % sfx.multiplier == 0) best = &sfx;  // suffixes are listed smallest first
  }
  if (best == nullptr) return std::to_string(units);
  return std::to_string(units / best->multiplier) + std::string(best->text);
}

}  // namespace abacus
