// Table: what every report returns, a title, typed columns and rows of cells, rendered as an
// aligned text table, CSV (RFC 4180) or JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace abacus::meter {

struct Column {
  std::string name;
  bool numeric = false;  // right-aligned in text; a JSON number
};

struct Table {
  std::string title;
  std::vector<Column> columns;
  std::vector<std::vector<std::string>> rows;  // one cell per column; numeric cells are decimals
  std::vector<std::string> notes;              // shown under the text table and in JSON
  // Empty, or one row per row: a numeric cell's unrounded value where the cell is rounded for
  // print ("" where the cell is exact). JSON carries these; the text table and CSV the cells.
  std::vector<std::vector<std::string>> exact;

  // Returns the index of column `name`, or -1.
  int ColumnIndex(std::string_view name) const;
};

enum class TableFormat { kText, kCsv, kJson };

// Parses "table", "csv" or "json"; InvalidArgument otherwise.
Result<TableFormat> ParseTableFormat(std::string_view text);
// Returns the table in `format`.
std::string RenderTable(const Table& table, TableFormat format);
// Returns the title, a header, a rule and the rows with columns padded to one width, then notes.
std::string RenderText(const Table& table);
// Returns the header and rows as CSV (RFC 4180: CRLF line ends; fields with a comma, quote, CR
// or LF quoted, quotes doubled). Title and notes are left out.
std::string RenderCsv(const Table& table);
// Returns {"title", "columns": [..], "rows": [{column: value}], "notes"}; numeric cells as
// numbers, their exact value where the table has one (Table::exact).
nlohmann::ordered_json TableToJson(const Table& table);

}  // namespace abacus::meter
