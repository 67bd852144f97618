#include "common/diagnostic.h"

#include <string_view>

namespace abacus {
namespace {

// Appends `text` with its control characters written as escapes (\n, \t, \r, \xNN): a value
// a client sent ("a\nb" as a name) is quoted in a message, and must not split it into lines
// that read like the server's own.
void AppendEscaped(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != 0x7f) {
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

}  // namespace

std::string Diagnostic::ToString() const {
  std::string out;
  if (!file.empty()) {
    out += file;
    if (line > 0) out += ":" + std::to_string(line);
    out += ": ";
  } else if (line > 0) {
    out += "line " + std::to_string(line) + ": ";
  }
  if (!field.empty()) {
    AppendEscaped(out, field);
    out += ": ";
  }
  AppendEscaped(out, message);
  return out;
}

std::string Diagnostics::ToString() const {
  std::string out;
  for (const auto& d : items_) {
    out += d.ToString();
    out += '\n';
  }
  return out;
}

Status Diagnostics::ToStatus() const {
  if (items_.empty()) return Status::OK();
  std::string msg = ToString();
  if (!msg.empty() && msg.back() == '\n') msg.pop_back();
  return InvalidArgument(std::move(msg));
}

}  // namespace abacus
