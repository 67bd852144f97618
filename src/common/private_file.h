// Files only their owner may read: tokens, keys, the CLI's config.
#pragma once

#include <string>

#include "common/status.h"

namespace abacus {

// Writes `content` to `path` with mode 0600, replacing it atomically (a temporary file, fsync,
// rename).
Status WritePrivateFile(const std::string& path, const std::string& content);

}  // namespace abacus
