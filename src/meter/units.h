// Exact amounts the meter sums and prints: resource-time as amount × microseconds in 128 bits,
// money as int64 micro-units of the price list's currency. No floating point in sums.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace abacus::meter {

// amount × microseconds; amount is milli-devices, millicores or bytes, by context.
using ResourceTime = __int128;

inline constexpr int64_t kMicrosPerHour = 3'600'000'000;
inline constexpr int64_t kBytesPerGiB = int64_t{1} << 30;

// Returns num / den rounded half away from zero; den > 0.
ResourceTime RoundDiv(ResourceTime num, ResourceTime den);
// Formats milli-unit × microseconds as unit-hours with 3 decimals ("12.500").
std::string FormatMilliHours(ResourceTime milli_micros);
// Formats byte × microseconds as GiB-hours with 3 decimals.
std::string FormatGiBHours(ResourceTime byte_micros);
// The same two amounts with 9 decimals (billionths of an hour, 3.6 µs of one unit): what JSON
// reports carry where a printed table shows 3 (Table::exact).
std::string FormatMilliHoursExact(ResourceTime milli_micros);
std::string FormatGiBHoursExact(ResourceTime byte_micros);
// Returns milli-unit × microseconds as unit-hours (for charts and ratios, not for sums).
double MilliHours(ResourceTime milli_micros);
// Formats an exact count of thousandths as a decimal with 3 decimals ("-1.250").
std::string FormatThousandths(int64_t thousandths);
// Formats micro-units of money with 2 decimals, or up to 6 when needed ("2.50", "0.000125").
std::string FormatMoney(int64_t micros);
// Parses a non-negative decimal ("2.5", "0.004", "3") with at most 6 fraction digits into
// micro-units; InvalidArgument otherwise.
Result<int64_t> ParseMoney(std::string_view text);
// Formats seconds from microseconds with one decimal ("90.5").
std::string FormatSeconds(int64_t micros);
// Formats a ratio in [0, 1] as a percentage with one decimal ("12.5").
std::string FormatPercent(double ratio);

}  // namespace abacus::meter
