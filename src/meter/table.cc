#include "meter/table.h"

#include <algorithm>

#include "common/text_table.h"

namespace abacus::meter {
namespace {

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

void CsvLine(std::string& out, const std::vector<std::string>& cells) {
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i) out += ',';
    out += CsvField(cells[i]);
  }
  out += "\r\n";
}

nlohmann::ordered_json NumberOrText(const std::string& cell) {
  if (cell.empty()) return nullptr;
  try {
    size_t used = 0;
    if (cell.find_first_of(".eE") == std::string::npos) {
      long long v = std::stoll(cell, &used);
      if (used == cell.size()) return v;
    } else {
      double v = std::stod(cell, &used);
      if (used == cell.size()) return v;
    }
  } catch (const std::exception&) {
  }
  return cell;
}

}  // namespace

int Table::ColumnIndex(std::string_view name) const {
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

Result<TableFormat> ParseTableFormat(std::string_view text) {
  if (text == "table" || text == "text") return TableFormat::kText;
  if (text == "csv") return TableFormat::kCsv;
  if (text == "json") return TableFormat::kJson;
  return InvalidArgument("unknown output format '" + std::string(text) + "'; use table, csv or json");
}

std::string RenderTable(const Table& table, TableFormat format) {
  switch (format) {
    case TableFormat::kText: return RenderText(table);
    case TableFormat::kCsv: return RenderCsv(table);
    case TableFormat::kJson: return TableToJson(table).dump(2) + "\n";
  }
  return "";
}

std::string RenderText(const Table& table) {
  std::string out;
  if (!table.title.empty()) out += table.title + "\n";
  std::vector<std::string> header;
  TextTableStyle style;
  style.rule = true;
  for (const auto& col : table.columns) {
    header.push_back(col.name);
    style.align.push_back(col.numeric ? CellAlign::kRight : CellAlign::kLeft);
  }
  out += RenderTextTable(header, table.rows, style);
  if (table.rows.empty()) out += "(no rows)\n";
  for (const auto& note : table.notes) out += "note: " + note + "\n";
  return out;
}

std::string RenderCsv(const Table& table) {
  std::string out;
  std::vector<std::string> header;
  for (const auto& col : table.columns) header.push_back(col.name);
  CsvLine(out, header);
  for (const auto& row : table.rows) CsvLine(out, row);
  return out;
}

nlohmann::ordered_json TableToJson(const Table& table) {
  nlohmann::ordered_json j;
  j["title"] = table.title;
  nlohmann::ordered_json cols = nlohmann::ordered_json::array();
  for (const auto& col : table.columns) cols.push_back(col.name);
  j["columns"] = std::move(cols);
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const auto& row = table.rows[i];
    const std::vector<std::string>* exact = i < table.exact.size() ? &table.exact[i] : nullptr;
    nlohmann::ordered_json r = nlohmann::ordered_json::object();
    for (size_t c = 0; c < table.columns.size(); ++c) {
      const std::string& cell = exact != nullptr && c < exact->size() && !(*exact)[c].empty() ? (*exact)[c] : row[c];
      r[table.columns[c].name] = table.columns[c].numeric ? NumberOrText(cell) : nlohmann::ordered_json(cell);
    }
    rows.push_back(std::move(r));
  }
  j["rows"] = std::move(rows);
  j["notes"] = table.notes;
  return j;
}

}  // namespace abacus::meter
