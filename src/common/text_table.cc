#include "common/text_table.h"

#include <algorithm>

#include "common/control_chars.h"

namespace abacus {

TextTableStyle LeftThenRight(size_t left) {
  TextTableStyle style;
  style.align.assign(left, CellAlign::kLeft);
  style.others = CellAlign::kRight;
  return style;
}

std::string RenderTextTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                            const TextTableStyle& style) {
  const size_t columns = header.size();
  // A cell is one line of text a client may have sent (a reason, a label): its control
  // characters are escaped (common/control_chars.h), so none reaches the terminal raw.
  bool any_control = false;
  for (const auto& row : rows) {
    for (const auto& cell : row) any_control |= HasControl(cell);
  }
  if (any_control) {
    std::vector<std::vector<std::string>> escaped = rows;
    for (auto& row : escaped) {
      for (auto& cell : row) cell = EscapeControl(cell);
    }
    return RenderTextTable(header, escaped, style);
  }
  std::vector<size_t> width(columns, 0);
  auto measure = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < columns && c < cells.size(); ++c) width[c] = std::max(width[c], cells[c].size());
  };
  measure(header);
  for (const auto& row : rows) measure(row);
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    size_t start = out.size();
    for (size_t c = 0; c < columns; ++c) {
      const std::string empty;
      const std::string& cell = c < cells.size() ? cells[c] : empty;
      std::string pad(width[c] - cell.size(), ' ');
      bool right = (c < style.align.size() ? style.align[c] : style.others) == CellAlign::kRight;
      out += right ? pad + cell : cell + pad;
      if (c + 1 < columns) out += "  ";
    }
    while (out.size() > start && out.back() == ' ') out.pop_back();
    out += "\n";
  };
  line(header);
  if (style.rule) {
    std::vector<std::string> rule;
    for (size_t w : width) rule.emplace_back(w, '-');
    line(rule);
  }
  for (const auto& row : rows) line(row);
  return out;
}

}  // namespace abacus
