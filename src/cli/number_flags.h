// A flag's lower bound, checked with a message a user reads: "--tail: must be at least 0, got
// -1" (CLI11's NonNegativeNumber printed its range up to DBL_MAX, 300 digits long).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <sstream>
#include <string>

namespace abacus::cli {

// A validator: the value is a number of at least `min` (integer flags and rates alike).
inline CLI::Validator AtLeast(double min) {
  std::ostringstream shown;
  shown << min;  // 0, 1, 0.5
  const std::string bound = shown.str();
  return CLI::Validator(
      [min, bound](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size()) return "expected a number, got " + text;
        if (!(value >= min)) return "must be at least " + bound + ", got " + text;
        return std::string();
      },
      "NUMBER >= " + bound);
}

}  // namespace abacus::cli
