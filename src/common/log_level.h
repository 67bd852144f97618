// Log level names, checked without the logging library (the lean client validates
// `--log-level` but loads no logger; docs/cli.md "Start cost").
#pragma once

#include <string_view>

#include "common/status.h"

namespace abacus {

// Returns OK for "trace", "debug", "info", "warn", "error" or "off"; InvalidArgument (naming
// the accepted levels) otherwise.
Status CheckLogLevel(std::string_view level);

}  // namespace abacus
