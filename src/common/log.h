// Logging: spdlog underneath; one call configures level and format for the process.
#pragma once

#include <spdlog/spdlog.h>

#include <string_view>

#include "common/status.h"

namespace abacus {

// Sets the process-wide log level ("trace", "debug", "info", "warn", "error", "off") and
// pattern; logs go to stderr. Returns InvalidArgument for an unknown level.
Status InitLogging(std::string_view level);

}  // namespace abacus

#define ABACUS_LOG_DEBUG(...) SPDLOG_DEBUG(__VA_ARGS__)
#define ABACUS_LOG_INFO(...) SPDLOG_INFO(__VA_ARGS__)
#define ABACUS_LOG_WARN(...) SPDLOG_WARN(__VA_ARGS__)
#define ABACUS_LOG_ERROR(...) SPDLOG_ERROR(__VA_ARGS__)
