#include "model/version.h"

#include <algorithm>
#include <cctype>

namespace abacus {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Natural, case-insensitive comparison: runs of digits compare as numbers.
std::strong_ordering NaturalCompare(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (IsDigit(a[i]) && IsDigit(b[j])) {
      size_t ei = i, ej = j;
      while (ei < a.size() && IsDigit(a[ei])) ++ei;
      while (ej < b.size() && IsDigit(b[ej])) ++ej;
      std::string_view na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
      while (na.size() > 1 && na.front() == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb.front() == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() <=> nb.size();
      if (int c = na.compare(nb); c != 0) return c <=> 0;
      i = ei;
      j = ej;
      continue;
    }
    char ca = static_cast<char>(std::tolower(static_cast<unsigned char>(a[i])));
    char cb = static_cast<char>(std::tolower(static_cast<unsigned char>(b[j])));
    if (ca != cb) return ca <=> cb;
    ++i;
    ++j;
  }
  return (a.size() - i) <=> (b.size() - j);
}

constexpr std::string_view kForm = " (expected NAME OP VERSION such as cuda>=12.2; OP is one of >=, >, <=, <, ==, !=)";

}  // namespace

Result<Version> Version::Parse(std::string_view input) {
  std::string_view text = Trim(input);
  std::string_view s = text;
  if (!s.empty() && (s.front() == 'v' || s.front() == 'V') && s.size() > 1 && IsDigit(s[1])) {
    s.remove_prefix(1);
  }
  if (s.empty() || !IsDigit(s.front())) {
    return InvalidArgument("invalid version '" + std::string(text) +
                           "': expected dotted numbers such as 12.2, 535.104.05 or 8.0.RC1");
  }
  Version v;
  v.text_ = std::string(text);
  size_t i = 0;
  while (i < s.size()) {
    size_t start = i;
    while (i < s.size() && IsDigit(s[i])) ++i;
    if (i == start) break;  // a component that does not start with a digit: suffix
    std::string_view digits = s.substr(start, i - start);
    if (digits.size() > 18) {
      return InvalidArgument("invalid version '" + std::string(text) + "': component too long");
    }
    v.numbers_.push_back(std::stoll(std::string(digits)));
    if (i < s.size() && s[i] == '.' && i + 1 < s.size() && IsDigit(s[i + 1])) {
      ++i;
      continue;
    }
    break;
  }
  std::string_view rest = s.substr(i);
  while (!rest.empty() && (rest.front() == '.' || rest.front() == '-' || rest.front() == '+' ||
                           rest.front() == '_')) {
    rest.remove_prefix(1);
  }
  v.suffix_ = std::string(rest);
  for (char c : v.suffix_) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      return InvalidArgument("invalid version '" + std::string(text) + "': contains a space");
    }
  }
  return v;
}

std::strong_ordering Version::CompareNumbers(const Version& other) const {
  size_t n = std::max(numbers_.size(), other.numbers_.size());
  for (size_t k = 0; k < n; ++k) {
    int64_t a = k < numbers_.size() ? numbers_[k] : 0;
    int64_t b = k < other.numbers_.size() ? other.numbers_[k] : 0;
    if (a != b) return a <=> b;
  }
  return std::strong_ordering::equal;
}

std::strong_ordering operator<=>(const Version& a, const Version& b) {
  if (auto c = a.CompareNumbers(b); c != 0) return c;
  if (a.suffix_.empty() || b.suffix_.empty()) {
    // A release (no suffix) sorts after its pre-releases.
    return a.suffix_.empty() <=> b.suffix_.empty();
  }
  return NaturalCompare(a.suffix_, b.suffix_);
}

const std::vector<std::string>& VersionConstraint::KnownNames() {
  static const std::vector<std::string> kNames = {"cann", "cuda", "driver", "rocm"};
  return kNames;
}

std::string_view VersionOpText(VersionConstraint::Op op) {
  switch (op) {
    case VersionConstraint::Op::kGe: return ">=";
    case VersionConstraint::Op::kGt: return ">";
    case VersionConstraint::Op::kLe: return "<=";
    case VersionConstraint::Op::kLt: return "<";
    case VersionConstraint::Op::kEq: return "==";
    case VersionConstraint::Op::kNe: return "!=";
  }
  return ">=";
}

Result<VersionConstraint> VersionConstraint::Parse(std::string_view input) {
  std::string_view text = Trim(input);
  std::string quoted = "'" + std::string(text) + "'";
  size_t op_pos = text.find_first_of("<>=!");
  if (op_pos == std::string_view::npos) {
    return InvalidArgument("invalid runtime constraint " + quoted + ": no operator" + std::string(kForm));
  }
  std::string_view name = Trim(text.substr(0, op_pos));
  if (name.empty()) {
    return InvalidArgument("invalid runtime constraint " + quoted + ": missing runtime name" +
                           std::string(kForm));
  }
  const auto& known = KnownNames();
  if (std::find(known.begin(), known.end(), name) == known.end()) {
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    return InvalidArgument("invalid runtime constraint " + quoted + ": unknown runtime '" +
                           std::string(name) + "' (known: " + list + ")");
  }
  std::string_view rest = text.substr(op_pos);
  static constexpr std::pair<std::string_view, Op> kOps[] = {
      {">=", Op::kGe}, {"<=", Op::kLe}, {"==", Op::kEq}, {"!=", Op::kNe}, {">", Op::kGt}, {"<", Op::kLt}};
  VersionConstraint c;
  bool found = false;
  for (const auto& [t, op] : kOps) {
    if (rest.substr(0, t.size()) == t) {
      c.op_ = op;
      rest.remove_prefix(t.size());
      found = true;
      break;
    }
  }
  if (!found || (!rest.empty() && (rest.front() == '=' || rest.front() == '<' || rest.front() == '>'))) {
    return InvalidArgument("invalid runtime constraint " + quoted + ": bad operator" + std::string(kForm));
  }
  rest = Trim(rest);
  if (rest.empty()) {
    return InvalidArgument("invalid runtime constraint " + quoted + ": missing version" + std::string(kForm));
  }
  auto v = Version::Parse(rest);
  if (!v.ok()) return v.status().WithContext("invalid runtime constraint " + quoted);
  c.name_ = std::string(name);
  c.version_ = std::move(v).value();
  return c;
}

bool VersionConstraint::Matches(const Version& actual) const {
  std::strong_ordering cmp =
      version_.suffix().empty() ? actual.CompareNumbers(version_) : (actual <=> version_);
  switch (op_) {
    case Op::kGe: return cmp >= 0;
    case Op::kGt: return cmp > 0;
    case Op::kLe: return cmp <= 0;
    case Op::kLt: return cmp < 0;
    case Op::kEq: return cmp == 0;
    case Op::kNe: return cmp != 0;
  }
  return false;
}

bool VersionConstraint::Matches(const std::map<std::string, std::string>& versions) const {
  auto it = versions.find(name_);
  if (it == versions.end()) return false;
  auto v = Version::Parse(it->second);
  return v.ok() && Matches(*v);
}

std::string VersionConstraint::ToString() const {
  return name_ + std::string(VersionOpText(op_)) + version_.text();
}

bool MatchesAll(const std::vector<VersionConstraint>& constraints,
                const std::map<std::string, std::string>& versions) {
  return std::all_of(constraints.begin(), constraints.end(),
                     [&](const VersionConstraint& c) { return c.Matches(versions); });
}

}  // namespace abacus
