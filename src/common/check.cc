#include "common/check.h"

#include <cstdio>
#include <cstdlib>

namespace abacus::internal {

void CheckFailed(const char* file, int line, const char* cond, std::string_view msg) {
  std::fprintf(stderr, "FATAL %s:%d: check failed: %s: %.*s\n", file, line, cond,
               static_cast<int>(msg.size()), msg.data());
  std::fflush(stderr);
  std::abort();
}

}  // namespace abacus::internal
