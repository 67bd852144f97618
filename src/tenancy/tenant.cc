#include "tenancy/tenant.h"

#include "common/ids.h"

namespace abacus {

Result<std::pair<std::string, std::string>> ParseProjectRef(std::string_view text) {
  size_t slash = text.find('/');
  if (slash == std::string_view::npos || text.find('/', slash + 1) != std::string_view::npos) {
    return InvalidArgument("invalid project '" + std::string(text) +
                           "': expected TENANT/PROJECT such as nlp/llm");
  }
  std::string tenant(text.substr(0, slash));
  std::string project(text.substr(slash + 1));
  if (!IsValidName(tenant) || !IsValidName(project)) {
    return InvalidArgument("invalid project '" + std::string(text) +
                           "': tenant and project must be valid names (a-z, 0-9, '-', '_', '.')");
  }
  return std::make_pair(std::move(tenant), std::move(project));
}

}  // namespace abacus
