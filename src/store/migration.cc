#include "store/migration.h"

#include <limits>
#include <string>

namespace abacus {

Status CheckMigrations(std::span<const Migration> migrations) {
  for (size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version != static_cast<int>(i) + 1) {
      return Internal("schema migrations must be numbered 1, 2, 3, ...; found version " +
                      std::to_string(migrations[i].version) + " at position " + std::to_string(i + 1));
    }
  }
  return Status::OK();
}

int64_t LimitOrAll(size_t limit) {
  return limit == 0 || limit > static_cast<size_t>(std::numeric_limits<int64_t>::max())
             ? std::numeric_limits<int64_t>::max()
             : static_cast<int64_t>(limit);
}

}  // namespace abacus
