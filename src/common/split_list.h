// Splitting a comma-separated option value ("a,b,,c") into its non-empty entries, the one loop
// every KEY=VALUE,… and SPEC,… flag parser uses.
#pragma once

#include <string_view>
#include <vector>

namespace abacus {

// Returns the non-empty entries of `text` between `sep` characters, in order; views into `text`.
inline std::vector<std::string_view> SplitList(std::string_view text, char sep = ',') {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(sep, start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace abacus
