// The -o formats of `abacus get` beyond table/json/yaml: wide (more columns), name (KIND/NAME
// per line) and custom-columns=HEADER:PATH,... over a small JSON-path subset (docs/cli.md).
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"

namespace abacus::cli {

// One step of a JSON path: a field name, or an array index when `field` is empty.
struct PathStep {
  std::string field;
  int index = -1;
};

// A parsed -o of `get`.
struct GetFormat {
  enum class Kind { kTable, kWide, kName, kJson, kYaml, kCustomColumns };
  struct Column {
    std::string header;
    std::vector<PathStep> path;
  };
  Kind kind = Kind::kTable;
  std::vector<Column> columns;  // kCustomColumns
};

// The -o values of `get`, for --help and completion.
inline constexpr char kGetFormats[] = "{table,wide,name,json,yaml,custom-columns=SPEC}";

// Parses a JSON path of the subset: dotted fields and [N] indexes, the leading dot and kubectl's
// braces optional: ".name", "placements[0].node", "{.spec.taskGroups[1].replicas}".
// InvalidArgument names the offending character.
Result<std::vector<PathStep>> ParseJsonPath(const std::string& text);
// Parses an -o value of `get`; InvalidArgument lists the valid ones or names the bad column.
Result<GetFormat> ParseGetFormat(const std::string& text);
// Returns what `path` names in `j`, or null when any step is missing.
const nlohmann::json* Lookup(const nlohmann::json& j, const std::vector<PathStep>& path);
// Prints one row per item: the columns' values ("<none>" for a missing one), strings as they
// are, anything else as compact JSON.
void PrintCustomColumns(std::ostream& out, const nlohmann::json& items, const std::vector<GetFormat::Column>& columns);
// Prints "KIND/NAME" per item: `kind` singular ("workload", "node"); a project is
// "project/TENANT/NAME", a device "device/NODE/INDEX".
void PrintNames(std::ostream& out, const std::string& kind, const nlohmann::json& items);

}  // namespace abacus::cli
