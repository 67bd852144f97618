// Whole-file reads with errors that name the file.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace abacus {

// Reads the file at `path` into memory. NotFound "cannot open <what> '<path>'" when it cannot be
// opened, Unavailable when reading fails midway. `what` names the file's role ("trace file").
Result<std::string> ReadFile(const std::string& path, std::string_view what = "file");

}  // namespace abacus
