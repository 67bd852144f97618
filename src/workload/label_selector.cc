#include "workload/label_selector.h"

#include <algorithm>
#include <cctype>

namespace abacus {
namespace {

std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

// Label keys and values as workloads may carry them: letters, digits, '-', '_', '.', '/'.
bool ValidToken(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.' || ch == '/';
  });
}

}  // namespace

Result<LabelSelector> LabelSelector::Parse(std::string_view text) {
  LabelSelector out;
  const std::string whole(text);
  auto bad = [&](const std::string& part, const std::string& why) {
    return InvalidArgument("label selector '" + whole + "': requirement '" + part + "' " + why +
                           " (expected k=v, k!=v, k or !k, comma-separated)");
  };
  if (Trim(text).empty()) return out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string part = Trim(text.substr(start, comma - start));
    start = comma + 1;
    if (part.empty()) return bad(part, "is empty");
    Requirement req;
    std::string value;
    bool has_value = false;
    if (size_t ne = part.find("!="); ne != std::string::npos) {
      req.op = Op::kNotEquals;
      req.key = Trim(part.substr(0, ne));
      value = Trim(part.substr(ne + 2));
      has_value = true;
    } else if (size_t eq = part.find('='); eq != std::string::npos) {
      req.op = Op::kEquals;
      req.key = Trim(part.substr(0, eq));
      size_t v = part.compare(eq, 2, "==") == 0 ? eq + 2 : eq + 1;
      value = Trim(part.substr(v));
      has_value = true;
    } else if (part[0] == '!') {
      req.op = Op::kNotExists;
      req.key = Trim(part.substr(1));
    } else {
      req.op = Op::kExists;
      req.key = part;
    }
    if (req.key.empty()) return bad(part, "has no key");
    if (!ValidToken(req.key)) return bad(part, "has a key with characters other than letters, digits, '-', '_', '.', '/'");
    if (has_value && value.empty()) return bad(part, "has no value");
    if (has_value && (value.find_first_of("=!") != std::string::npos || !ValidToken(value))) {
      return bad(part, "has a value with characters other than letters, digits, '-', '_', '.', '/'");
    }
    req.value = value;
    out.requirements_.push_back(std::move(req));
    if (comma == text.size()) break;
  }
  return out;
}

bool LabelSelector::Matches(const std::map<std::string, std::string>& labels) const {
  for (const Requirement& r : requirements_) {
    auto it = labels.find(r.key);
    switch (r.op) {
      case Op::kEquals:
        if (it == labels.end() || it->second != r.value) return false;
        break;
      case Op::kNotEquals:  // as kubectl: a workload without the label matches k!=v
        if (it != labels.end() && it->second == r.value) return false;
        break;
      case Op::kExists:
        if (it == labels.end()) return false;
        break;
      case Op::kNotExists:
        if (it != labels.end()) return false;
        break;
    }
  }
  return true;
}

}  // namespace abacus
