// Assertion policy (after Envoy's):
//   ABACUS_DCHECK(cond, msg)  debug-only invariant, compiled out in Release.
//   ABACUS_CHECK(cond, msg)   impossible state (e.g. a device allocated twice): log and abort,
//                             in every build.
// Expected failures (bad input, missing objects, races) return Status instead.
#pragma once

#include <string_view>

namespace abacus::internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* cond, std::string_view msg);
}  // namespace abacus::internal

#define ABACUS_CHECK(cond, msg)                                                   \
  do {                                                                            \
    if (!(cond)) ::abacus::internal::CheckFailed(__FILE__, __LINE__, #cond, msg); \
  } while (0)

#ifdef NDEBUG
#define ABACUS_DCHECK(cond, msg) \
  do {                           \
  } while (0)
#else
#define ABACUS_DCHECK(cond, msg) ABACUS_CHECK(cond, msg)
#endif
