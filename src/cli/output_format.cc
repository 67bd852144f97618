#include "cli/output_format.h"

#include <cctype>
#include <ostream>

#include "cli/output.h"

namespace abacus::cli {
namespace {

using nlohmann::json;

bool FieldChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

}  // namespace

Result<std::vector<PathStep>> ParseJsonPath(const std::string& text) {
  std::string p = text;
  if (p.size() >= 2 && p.front() == '{' && p.back() == '}') p = p.substr(1, p.size() - 2);
  if (p.empty() || p == ".") return InvalidArgument("empty JSON path '" + text + "' (expected .field.field[N])");
  std::vector<PathStep> steps;
  size_t i = 0;
  bool need_field = p[0] != '.';  // "name" as ".name"
  while (i < p.size()) {
    if (p[i] == '.' || need_field) {
      if (!need_field) ++i;
      need_field = false;
      size_t start = i;
      while (i < p.size() && FieldChar(p[i])) ++i;
      if (i == start) {
        return InvalidArgument("JSON path '" + text + "': expected a field name at position " + std::to_string(i + 1) +
                               " (only .field and [N] are supported)");
      }
      steps.push_back({p.substr(start, i - start), -1});
    } else if (p[i] == '[') {
      size_t close = p.find(']', i);
      std::string n = close == std::string::npos ? "" : p.substr(i + 1, close - i - 1);
      bool digits = !n.empty() && n.size() < 9;
      for (char c : n) digits &= std::isdigit(static_cast<unsigned char>(c)) != 0;
      if (!digits) {
        return InvalidArgument("JSON path '" + text + "': expected [N] with N a number at position " +
                               std::to_string(i + 1) + " (only .field and [N] are supported)");
      }
      steps.push_back({"", std::stoi(n)});
      i = close + 1;
    } else {
      return InvalidArgument("JSON path '" + text + "': unexpected '" + std::string(1, p[i]) + "' at position " +
                             std::to_string(i + 1) + " (only .field and [N] are supported)");
    }
  }
  return steps;
}

Result<GetFormat> ParseGetFormat(const std::string& text) {
  GetFormat f;
  if (text == "table") return f;
  if (text == "wide") f.kind = GetFormat::Kind::kWide;
  else if (text == "name") f.kind = GetFormat::Kind::kName;
  else if (text == "json") f.kind = GetFormat::Kind::kJson;
  else if (text == "yaml") f.kind = GetFormat::Kind::kYaml;
  if (f.kind != GetFormat::Kind::kTable) return f;
  const std::string prefix = "custom-columns=";
  if (text.rfind(prefix, 0) != 0) {
    return InvalidArgument("unknown output format '" + text +
                           "' (expected table, wide, name, json, yaml or custom-columns=HEADER:.path,...)");
  }
  f.kind = GetFormat::Kind::kCustomColumns;
  std::string spec = text.substr(prefix.size());
  size_t start = 0;
  int n = 0;
  while (start <= spec.size()) {
    size_t comma = spec.find(',', start);
    std::string col = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    ++n;
    size_t colon = col.find(':');
    if (colon == std::string::npos || colon == 0) {
      return InvalidArgument("custom-columns: column " + std::to_string(n) + " '" + col +
                             "': expected HEADER:.json.path (e.g. NAME:.name,NODE:.placements[0].node)");
    }
    auto path = ParseJsonPath(col.substr(colon + 1));
    if (!path.ok()) {
      return InvalidArgument("custom-columns: column " + std::to_string(n) + ": " + path.status().message());
    }
    f.columns.push_back({col.substr(0, colon), *path});
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return f;
}

const json* Lookup(const json& j, const std::vector<PathStep>& path) {
  const json* at = &j;
  for (const PathStep& s : path) {
    if (s.field.empty()) {
      if (!at->is_array() || s.index >= static_cast<int>(at->size())) return nullptr;
      at = &(*at)[static_cast<size_t>(s.index)];
    } else {
      if (!at->is_object()) return nullptr;
      auto it = at->find(s.field);
      if (it == at->end()) return nullptr;
      at = &*it;
    }
  }
  return at;
}

void PrintCustomColumns(std::ostream& out, const json& items, const std::vector<GetFormat::Column>& columns) {
  std::vector<std::string> headers;
  for (const auto& c : columns) headers.push_back(c.header);
  std::vector<std::vector<std::string>> rows;
  for (const auto& item : items) {
    std::vector<std::string> row;
    for (const auto& c : columns) {
      const json* v = Lookup(item, c.path);
      row.push_back(v == nullptr || v->is_null() ? "<none>" : v->is_string() ? v->get<std::string>() : v->dump());
    }
    rows.push_back(std::move(row));
  }
  PrintTable(out, headers, rows);
}

void PrintNames(std::ostream& out, const std::string& kind, const json& items) {
  for (const auto& item : items) {
    std::string name = item.value("name", "");
    if (kind == "project" && item.contains("tenant")) name = item.value("tenant", "") + "/" + name;
    if (kind == "device") name = item.value("node", "") + "/" + std::to_string(item.value("index", 0));
    out << kind << "/" << name << "\n";
  }
}

}  // namespace abacus::cli
