#include "model/extended_request.h"

#include <string>

#include "model/quantity.h"
#include "model/quantity_limit.h"

namespace abacus {

Result<int64_t> ParseExtendedRequest(const ExtendedResource& resource, std::string_view text) {
  auto amount = resource.ParseAmount(text);
  if (!amount.ok()) return amount.status();
  if (*amount <= 0) return InvalidArgument(resource.name() + ": must be positive, got " + std::string(text));
  Status st = CheckQuantityLimit(*Quantity::FromUnits(*amount),
                                 resource.is_bytes() ? QuantityUnit::kMemory : QuantityUnit::kCount);
  if (!st.ok()) return InvalidArgument(resource.name() + ": " + st.message());
  return amount;
}

}  // namespace abacus
