// The one aligned text table of the CLI verbs, the reports (meter/table.h) and the simulator's
// summaries: a header and rows, columns padded to their widest cell, two spaces apart.
//
//   RenderTextTable({"NAME", "GPUS"}, {{"a100-0", "8"}}, LeftThenRight(1));
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace abacus {

enum class CellAlign { kLeft, kRight };

struct TextTableStyle {
  std::vector<CellAlign> align;         // per column, from the first
  CellAlign others = CellAlign::kLeft;  // the columns past the end of `align`
  bool rule = false;                    // a line of dashes under the header, each as wide as its column
};

// Returns the style of name columns then numbers: the first `left` columns left-aligned, the
// others right-aligned.
TextTableStyle LeftThenRight(size_t left);

// Returns the header line, the rule (when asked) and one line per row, each ending in "\n" with
// no trailing spaces; control characters in cells are escaped (common/control_chars.h). The header names the columns: cells past its length are left out, missing
// cells are empty.
std::string RenderTextTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                            const TextTableStyle& style = {});

}  // namespace abacus
