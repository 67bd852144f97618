// What this binary is: its version, the git commit it was built from and the day it was built.
// Defined in one generated source (cmake/build_info.cmake), so that a new commit recompiles that
// file alone and everything else keeps its ccache hits.
#pragma once

#include <string_view>

namespace abacus {

// Returns the project version, "0.1.0".
std::string_view BuildVersion();
// Returns the short git commit ("3f2a9c1d0b7e", "-dirty" appended when tracked files were
// changed), or "unknown" when built outside a git checkout.
std::string_view BuildCommit();
// Returns the build day, UTC, "2026-12-04" (SOURCE_DATE_EPOCH's day when set).
std::string_view BuildDate();

}  // namespace abacus
