#include "common/time_spec.h"

#include <cctype>
#include <string>

#include "common/duration_parse.h"

namespace abacus {

Result<Time> ParseTimeSpec(std::string_view text, Time now) {
  std::string word;
  for (char c : text) word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const Time midnight = std::chrono::floor<std::chrono::days>(now);
  if (word == "now") return now;
  if (word == "today") return midnight;
  if (word == "yesterday") return midnight - std::chrono::days(1);
  if (auto t = ParseTime(text); t.ok()) return *t;
  if (!text.empty() && std::isdigit(static_cast<unsigned char>(text[0])) != 0) {
    if (auto d = ParseDurationSpec(text); d.ok()) return now - *d;
  }
  return InvalidArgument("'" + std::string(text) +
                         "': expected a time like 2026-12-02T17:51:20Z, a date 2026-12-02, a duration ago like "
                         "7d, 24h or 1h30m, or now, today or yesterday");
}

}  // namespace abacus
