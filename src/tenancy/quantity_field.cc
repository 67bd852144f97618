#include "tenancy/quantity_field.h"

#include "model/extended_resource.h"

namespace abacus {

QuantityUnit QuotaUnit(const QuotaResource& r) {
  switch (r.kind) {
    case QuotaResource::Kind::kCpu: return QuantityUnit::kCpu;
    case QuotaResource::Kind::kMemory: return QuantityUnit::kMemory;
    case QuotaResource::Kind::kDevices: break;
    case QuotaResource::Kind::kExtended: {
      auto x = ExtendedResource::Parse(r.extended);
      return x.ok() && x->is_bytes() ? QuantityUnit::kMemory : QuantityUnit::kCount;
    }
  }
  return QuantityUnit::kDevices;
}

std::optional<Quantity> BoundedQty(MapReader& r, std::string_view key, QuantityUnit unit, Presence presence,
                                   bool positive) {
  std::optional<Quantity> q = r.Qty(key, presence, positive);
  if (!q) return std::nullopt;
  if (Status st = CheckQuantityLimit(*q, unit); !st.ok()) {
    r.Error(key, st.message());
    return std::nullopt;
  }
  return q;
}

}  // namespace abacus
