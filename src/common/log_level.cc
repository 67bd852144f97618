#include "common/log_level.h"

#include <array>
#include <string>

namespace abacus {

Status CheckLogLevel(std::string_view level) {
  static constexpr std::array<std::string_view, 6> kLevels = {"trace", "debug", "info", "warn", "error", "off"};
  for (std::string_view known : kLevels) {
    if (level == known) return Status::OK();
  }
  return InvalidArgument("unknown log level '" + std::string(level) +
                         "' (expected trace, debug, info, warn, error or off)");
}

}  // namespace abacus
