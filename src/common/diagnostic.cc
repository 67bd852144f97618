#include "common/diagnostic.h"

#include "common/control_chars.h"

namespace abacus {

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
    AppendEscapedControl(out, field);
    out += ": ";
  }
  AppendEscapedControl(out, message);
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
