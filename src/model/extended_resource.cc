#include "model/extended_resource.h"


#include "common/check.h"
#include "model/intern_table.h"
#include "model/quantity.h"
#include "model/resources.h"

namespace abacus {
namespace {

bool IsEdgeChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

bool ValidPart(std::string_view s, bool allow_underscore) {
  if (s.empty() || s.size() > 63 || !IsEdgeChar(s.front()) || !IsEdgeChar(s.back())) return false;
  for (char c : s) {
    if (!IsEdgeChar(c) && c != '.' && c != '-' && !(allow_underscore && c == '_')) return false;
  }
  return true;
}

using ExtendedTable = model_internal::InternTable<ExtendedResource, ExtendedId>;

ExtendedTable& Table() {
  static ExtendedTable* table = new ExtendedTable();
  return *table;
}

}  // namespace

Result<ExtendedResource> ExtendedResource::Parse(std::string_view name) {
  auto bad = [&](std::string_view why) {
    return InvalidArgument("invalid resource name '" + std::string(name) + "': " + std::string(why));
  };
  if (name == "cpu" || name == "memory") return bad("cpu and memory are not extended resources");
  size_t slash = name.find('/');
  if (slash == std::string_view::npos) {
    if (!ValidPart(name, true)) return bad("expected NAME or PREFIX/NAME in lowercase letters, digits, '.', '-', '_'");
  } else {
    std::string_view prefix = name.substr(0, slash);
    std::string_view rest = name.substr(slash + 1);
    if (prefix == "gpu" || prefix == "npu" || prefix == "cpu") {
      return bad("a device flavor (gpu/VENDOR/MODEL) is requested with devices:, not resources:");
    }
    if (!ValidPart(prefix, false) || !ValidPart(rest, true)) {
      return bad("expected NAME or PREFIX/NAME in lowercase letters, digits, '.', '-', '_'");
    }
  }
  ExtendedResource r;
  r.name_ = std::string(name);
  r.bytes_ = name.size() >= 7 && name.substr(name.size() - 7) == "storage";
  return r;
}

Result<int64_t> ExtendedResource::ParseAmount(std::string_view text) const {
  auto q = Quantity::Parse(text);
  if (!q.ok()) return q.status().WithContext(name_);
  if (q->milli() < 0) return InvalidArgument(name_ + ": amount '" + std::string(text) + "' is negative");
  if (!q->IsWhole()) return InvalidArgument(name_ + ": amount '" + std::string(text) + "' is not a whole number");
  return q->milli() / 1000;
}

std::string ExtendedResource::FormatAmount(int64_t amount) const {
  return bytes_ ? FormatBytes(amount) : std::to_string(amount);
}

ExtendedId ExtendedResource::Intern() const {
  return Table().Intern(name_, *this, "too many extended resources interned");
}

const ExtendedResource& ExtendedResource::FromId(ExtendedId id) {
  return Table().At(id, "extended resource id was never interned");
}

Result<std::map<std::string, int64_t>> ParseExtendedList(std::string_view text) {
  std::map<std::string, int64_t> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view item = text.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (!item.empty()) {
      size_t eq = item.find('=');
      if (eq == std::string_view::npos) {
        return InvalidArgument("'" + std::string(item) + "' is not NAME=AMOUNT (e.g. rdma/hca=4)");
      }
      auto r = ExtendedResource::Parse(item.substr(0, eq));
      if (!r.ok()) return r.status();
      auto amount = r->ParseAmount(item.substr(eq + 1));
      if (!amount.ok()) return amount.status();
      out[r->name()] = *amount;
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace abacus
