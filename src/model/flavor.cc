#include "model/flavor.h"

#include <algorithm>

#include "common/check.h"
#include "model/intern_table.h"

namespace abacus {
namespace {

bool IsVendorChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }
bool IsModelChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

std::vector<std::string_view> SplitSlash(std::string_view s) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t pos = s.find('/', start);
    parts.push_back(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return parts;
}

using FlavorTable = model_internal::InternTable<Flavor, FlavorId>;

FlavorTable& Table() {
  static FlavorTable* table = [] {
    auto* t = new FlavorTable();
    t->Intern("cpu", Flavor::Cpu(), "too many flavors interned");  // id 0: kCpuFlavorId
    return t;
  }();
  return *table;
}

}  // namespace

std::string_view DeviceKindName(DeviceKind kind) {
  switch (kind) {
    case DeviceKind::kCpu: return "cpu";
    case DeviceKind::kGpu: return "gpu";
    case DeviceKind::kNpu: return "npu";
  }
  return "cpu";
}

Result<DeviceKind> ParseDeviceKind(std::string_view text) {
  if (text == "cpu") return DeviceKind::kCpu;
  if (text == "gpu") return DeviceKind::kGpu;
  if (text == "npu") return DeviceKind::kNpu;
  return InvalidArgument("unknown device kind '" + std::string(text) + "' (expected cpu, gpu or npu)");
}

Flavor Flavor::Cpu() { return Flavor(); }

Result<Flavor> Flavor::Parse(std::string_view text) {
  if (text == "cpu") return Cpu();
  auto parts = SplitSlash(text);
  if (parts.size() != 3) {
    return InvalidArgument("invalid flavor '" + std::string(text) +
                           "': expected 'cpu' or KIND/VENDOR/MODEL such as gpu/nvidia/A100-80G");
  }
  auto kind = ParseDeviceKind(parts[0]);
  if (!kind.ok()) return kind.status().WithContext("invalid flavor '" + std::string(text) + "'");
  if (*kind == DeviceKind::kCpu) {
    return InvalidArgument("invalid flavor '" + std::string(text) + "': the cpu flavor is plain 'cpu'");
  }
  if (parts[1].empty() || !std::all_of(parts[1].begin(), parts[1].end(), IsVendorChar)) {
    return InvalidArgument("invalid flavor '" + std::string(text) + "': vendor '" +
                           std::string(parts[1]) + "' must be lowercase letters, digits or '-'");
  }
  if (parts[2].empty() || !std::all_of(parts[2].begin(), parts[2].end(), IsModelChar)) {
    return InvalidArgument("invalid flavor '" + std::string(text) + "': model '" +
                           std::string(parts[2]) + "' must be letters, digits, '.', '_' or '-'");
  }
  Flavor f;
  f.kind_ = *kind;
  f.vendor_ = std::string(parts[1]);
  f.model_ = std::string(parts[2]);
  f.name_ = std::string(text);
  return f;
}

FlavorId Flavor::Intern() const { return Table().Intern(name_, *this, "too many flavors interned"); }

const Flavor& Flavor::FromId(FlavorId id) { return Table().At(id, "flavor id was never interned"); }

size_t Flavor::InternedCount() { return Table().size(); }

Result<FlavorPattern> FlavorPattern::Parse(std::string_view text) {
  auto fail = [&](std::string why) {
    return InvalidArgument("invalid flavor pattern '" + std::string(text) + "': " + why +
                           " (expected e.g. 'cpu', 'gpu/*', 'gpu/nvidia/*', 'gpu/nvidia/A100-80G')");
  };
  if (text.empty()) return fail("empty");
  auto parts = SplitSlash(text);
  if (parts.size() > 3) return fail("more than three segments");
  FlavorPattern p;
  p.text_ = std::string(text);
  for (size_t i = 0; i < parts.size(); ++i) {
    std::string_view seg = parts[i];
    if (seg.empty()) return fail("empty segment");
    size_t star = seg.find('*');
    if (star != std::string_view::npos && star != seg.size() - 1) {
      return fail("'*' may only end a segment");
    }
    std::string_view literal = seg.substr(0, star == std::string_view::npos ? seg.size() : star);
    bool ok = true;
    if (i == 0) {
      if (!literal.empty() && star == std::string_view::npos && !ParseDeviceKind(literal).ok()) ok = false;
      if (!std::all_of(literal.begin(), literal.end(), IsVendorChar)) ok = false;
    } else if (i == 1) {
      ok = std::all_of(literal.begin(), literal.end(), IsVendorChar);
    } else {
      ok = std::all_of(literal.begin(), literal.end(), IsModelChar);
    }
    if (!ok) return fail("bad segment '" + std::string(seg) + "'");
    p.segments_.emplace_back(seg);
  }
  if (parts.size() < 3 && p.segments_.back() != "*" && !(parts.size() == 1 && p.segments_[0] == "cpu")) {
    if (p.segments_.back().back() != '*') return fail("a pattern shorter than KIND/VENDOR/MODEL must end in '*'");
  }
  if (parts.size() > 1 && p.segments_[0] == "cpu") return fail("the cpu flavor has no vendor or model");
  return p;
}

bool FlavorPattern::Matches(const Flavor& flavor) const {
  if (flavor.kind() == DeviceKind::kCpu) {
    return (segments_.size() == 1 && (segments_[0] == "*" || segments_[0] == "cpu" ||
                                      (segments_[0].back() == '*' &&
                                       std::string_view("cpu").starts_with(
                                           std::string_view(segments_[0]).substr(0, segments_[0].size() - 1)))));
  }
  const std::string* fields[3] = {nullptr, &flavor.vendor(), &flavor.model()};
  std::string kind(DeviceKindName(flavor.kind()));
  fields[0] = &kind;
  for (size_t i = 0; i < 3; ++i) {
    if (i >= segments_.size()) return segments_.back().back() == '*';
    const std::string& seg = segments_[i];
    if (seg.back() == '*') {
      std::string_view prefix(seg.data(), seg.size() - 1);
      if (!std::string_view(*fields[i]).starts_with(prefix)) return false;
    } else if (seg != *fields[i]) {
      return false;
    }
  }
  return true;
}

bool FlavorPattern::IsExact() const {
  for (const auto& s : segments_) {
    if (s.back() == '*') return false;
  }
  return segments_.size() == 3 || (segments_.size() == 1 && segments_[0] == "cpu");
}

}  // namespace abacus
