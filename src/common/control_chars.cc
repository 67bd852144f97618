#include "common/control_chars.h"

namespace abacus {
namespace {

bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7f; }

}  // namespace

void AppendEscapedControl(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (!IsControl(c)) {
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
}

std::string EscapeControl(std::string_view text) {
  if (!HasControl(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  AppendEscapedControl(out, text);
  return out;
}

bool HasControl(std::string_view text) {
  for (char ch : text) {
    if (IsControl(static_cast<unsigned char>(ch))) return true;
  }
  return false;
}

}  // namespace abacus
