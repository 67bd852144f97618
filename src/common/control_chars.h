// The one rule for showing text a client sent (a name, a reason, a label value, a description)
// where a person or a log reads it: control characters are written as escapes — \n, \t, \r,
// \xNN (ESC as \x1b) — so the text cannot split a message into lines that read like the
// server's own, nor move a terminal's cursor, recolour it or retitle it. Bytes from 0x20 up
// (UTF-8 included) are kept, but DEL (0x7f).
#pragma once

#include <string>
#include <string_view>

namespace abacus {

// Appends `text` to `out` with its control characters escaped.
void AppendEscapedControl(std::string& out, std::string_view text);

// `text` with its control characters escaped.
std::string EscapeControl(std::string_view text);

// True when `text` has a byte EscapeControl would escape.
bool HasControl(std::string_view text);

}  // namespace abacus
