#include "model/resources.h"

#include <algorithm>

#include "common/check.h"
#include "model/quantity.h"

namespace abacus {
namespace {

int64_t CheckedAdd(int64_t a, int64_t b) {
  int64_t out;
  ABACUS_CHECK(!__builtin_add_overflow(a, b, &out), "resource amount overflow");
  return out;
}

template <typename Op>
ResourceVector Merge(const ResourceVector& a, const ResourceVector& b, Op op) {
  ResourceVector out;
  a.ForEach([&](ResourceKey k, int64_t v) { out.Set(k, op(v, b.Get(k))); });
  b.ForEach([&](ResourceKey k, int64_t v) {
    if (a.Get(k) == 0) out.Set(k, op(0, v));
  });
  return out;
}

}  // namespace

std::string ResourceKey::ToString() const {
  switch (type) {
    case ResourceType::kCpu: return "cpu";
    case ResourceType::kMemory: return "memory";
    case ResourceType::kDeviceMilli: return Flavor::FromId(flavor).name();
    case ResourceType::kDeviceMemory: return Flavor::FromId(flavor).name() + ".memory";
    case ResourceType::kExtended: return ExtendedResource::FromId(flavor).name();
  }
  return "?";
}

int64_t ResourceVector::Get(ResourceKey key) const {
  uint32_t p = key.packed();
  auto it = std::lower_bound(entries_.begin(), entries_.end(), p,
                             [](const auto& e, uint32_t k) { return e.first < k; });
  return (it != entries_.end() && it->first == p) ? it->second : 0;
}

void ResourceVector::Set(ResourceKey key, int64_t amount) {
  uint32_t p = key.packed();
  auto it = std::lower_bound(entries_.begin(), entries_.end(), p,
                             [](const auto& e, uint32_t k) { return e.first < k; });
  if (it != entries_.end() && it->first == p) {
    if (amount == 0) {
      entries_.erase(it);
    } else {
      it->second = amount;
    }
  } else if (amount != 0) {
    entries_.insert(it, {p, amount});
  }
}

void ResourceVector::Add(ResourceKey key, int64_t delta) {
  if (delta != 0) Set(key, CheckedAdd(Get(key), delta));
}

ResourceVector& ResourceVector::operator+=(const ResourceVector& other) {
  for (const auto& [k, v] : other.entries_) Add(ResourceKey::Unpack(k), v);
  return *this;
}

ResourceVector& ResourceVector::operator-=(const ResourceVector& other) {
  for (const auto& [k, v] : other.entries_) {
    ABACUS_CHECK(v != INT64_MIN, "resource amount overflow");
    Add(ResourceKey::Unpack(k), -v);
  }
  return *this;
}

Result<ResourceVector> ResourceVector::Times(int64_t n) const {
  ResourceVector out;
  for (const auto& [k, v] : entries_) {
    int64_t product;
    if (__builtin_mul_overflow(v, n, &product)) {
      return OutOfRange(ResourceKey::Unpack(k).ToString() + " × " + std::to_string(n) +
                        " overflows");
    }
    out.Set(ResourceKey::Unpack(k), product);
  }
  return out;
}

bool ResourceVector::FitsIn(const ResourceVector& limit) const {
  for (const auto& [k, v] : entries_) {
    if (v > limit.Get(ResourceKey::Unpack(k))) return false;
  }
  return true;
}

ResourceVector ResourceVector::ExcessOver(const ResourceVector& limit) const {
  ResourceVector out;
  for (const auto& [k, v] : entries_) {
    int64_t lim = limit.Get(ResourceKey::Unpack(k));
    if (v > lim) out.Set(ResourceKey::Unpack(k), v - lim);
  }
  return out;
}

ResourceVector ResourceVector::SaturatingSub(const ResourceVector& other) const {
  ResourceVector out;
  for (const auto& [k, v] : entries_) {
    int64_t rest = v - other.Get(ResourceKey::Unpack(k));
    if (rest > 0) out.Set(ResourceKey::Unpack(k), rest);
  }
  return out;
}

ResourceVector ResourceVector::Min(const ResourceVector& a, const ResourceVector& b) {
  return Merge(a, b, [](int64_t x, int64_t y) { return std::min(x, y); });
}

ResourceVector ResourceVector::Max(const ResourceVector& a, const ResourceVector& b) {
  return Merge(a, b, [](int64_t x, int64_t y) { return std::max(x, y); });
}

bool ResourceVector::AnyNegative() const {
  return std::any_of(entries_.begin(), entries_.end(), [](const auto& e) { return e.second < 0; });
}

std::string FormatDeviceMilli(int64_t milli) {
  if (milli % 1000 == 0) return std::to_string(milli / 1000);
  return std::to_string(milli) + "m";
}

std::string FormatBytes(int64_t bytes) {
  if (bytes > INT64_MAX / 1000 || bytes < -(INT64_MAX / 1000)) return std::to_string(bytes);
  return Quantity::FromMilli(bytes * 1000, Quantity::Format::kBinary).ToString();
}

std::string ResourceVector::ToString() const {
  if (entries_.empty()) return "{}";
  std::string out;
  for (const auto& [p, v] : entries_) {
    ResourceKey k = ResourceKey::Unpack(p);
    if (!out.empty()) out += ", ";
    out += k.ToString();
    out += '=';
    out += FormatAmount(k, v);
  }
  return out;
}

std::string FormatAmount(ResourceKey key, int64_t amount) {
  switch (key.type) {
    case ResourceType::kCpu: return Quantity::FromMilli(amount).ToString();
    case ResourceType::kMemory:
    case ResourceType::kDeviceMemory: return FormatBytes(amount);
    case ResourceType::kDeviceMilli: return FormatDeviceMilli(amount);
    case ResourceType::kExtended: return ExtendedResource::FromId(key.flavor).FormatAmount(amount);
  }
  return std::to_string(amount);
}

}  // namespace abacus
