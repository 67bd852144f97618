#include "common/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <string>

#include "common/log_level.h"

namespace abacus {

Status InitLogging(std::string_view level) {
  if (Status st = CheckLogLevel(level); !st.ok()) return st;
  const auto parsed = spdlog::level::from_str(std::string(level));
  auto logger = spdlog::stderr_color_mt("abacus");
  spdlog::set_default_logger(logger);
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %^%l%$ %v", spdlog::pattern_time_type::utc);
  spdlog::set_level(parsed);
  return Status::OK();
}

}  // namespace abacus
