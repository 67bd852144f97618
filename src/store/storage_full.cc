#include "store/storage_full.h"

#include <string_view>

namespace abacus {
namespace {

constexpr std::string_view kPrefix = "storage full: ";

}  // namespace

Status StorageFullError(std::string detail) { return Unavailable(std::string(kPrefix) + detail); }

bool IsStorageFull(const Status& st) {
  return st.code() == StatusCode::kUnavailable && st.message().starts_with(kPrefix);
}

}  // namespace abacus
