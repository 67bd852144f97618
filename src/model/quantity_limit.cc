#include "model/quantity_limit.h"

#include <string>
#include <string_view>

namespace abacus {

Quantity QuantityLimit(QuantityUnit unit) {
  switch (unit) {
    case QuantityUnit::kCpu: return Quantity::FromMilli(10'000'000LL * 1000);
    case QuantityUnit::kMemory: return Quantity::FromMilli((int64_t{1} << 50) * 1000, Quantity::Format::kBinary);
    case QuantityUnit::kDevices: return Quantity::FromMilli(1'000'000LL * 1000);
    case QuantityUnit::kCount: break;
  }
  return Quantity::FromMilli(1'000'000'000LL * 1000);
}

Status CheckQuantityLimit(const Quantity& q, QuantityUnit unit) {
  Quantity limit = QuantityLimit(unit);
  if (q.milli() <= limit.milli() && q.milli() >= -limit.milli()) return Status::OK();
  std::string_view what = unit == QuantityUnit::kCpu       ? "cpu"
                          : unit == QuantityUnit::kMemory  ? "memory"
                          : unit == QuantityUnit::kDevices ? "devices"
                                                           : "an amount";
  return OutOfRange("must be at most " + limit.ToString() + " (the limit for " + std::string(what) + "), got " +
                    q.ToString());
}

}  // namespace abacus
