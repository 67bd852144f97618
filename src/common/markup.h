// Escaping text for HTML, XML and SVG documents the project writes (reports, plots).
#pragma once

#include <string>
#include <string_view>

namespace abacus {

// Returns `text` with & < > " ' replaced by entities, safe in element content and in quoted
// attribute values.
std::string EscapeMarkup(std::string_view text);

}  // namespace abacus
