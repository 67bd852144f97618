// Reading spec documents from YAML with every problem reported at once, as
// "FILE:LINE: field: message" with dotted field paths ("spec.taskGroups[1].replicas").
// Shared by the tenancy and workload codecs. A document is a SpecNode: YAML as parsed, or JSON
// read in place (spec_node.h); JSON nodes have no line numbers (line 0).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/diagnostic.h"
#include "model/quantity.h"
#include "tenancy/spec_node.h"

namespace abacus {

// Field path → 1-based line of its value, filled while decoding; reference checks use it to
// point at the offending field rather than at the start of the document.
using FieldLines = std::map<std::string, int>;

// Where decoding problems go: the file name, the diagnostics sink and the field-line index.
class SpecContext {
 public:
  SpecContext(std::string file, Diagnostics* diags, FieldLines* lines = nullptr)
      : file_(std::move(file)), diags_(diags), lines_(lines) {}

  // Records a problem with `field` at `line` (0 when unknown).
  void Error(int line, std::string field, std::string message);
  // Records that `field`'s value sits at `line`.
  void RecordLine(const std::string& field, int line);
  // Number of problems recorded through this context.
  int errors() const { return errors_; }
  const std::string& file() const { return file_; }

  // Describes what `node` is, for "expected X, got Y" messages: "'abc'", "a list", "a mapping".
  static std::string Describe(const SpecNode& node);

 private:
  std::string file_;
  Diagnostics* diags_;
  FieldLines* lines_;
  int errors_ = 0;
};

enum class Presence : uint8_t { kOptional, kRequired };

// Reads one mapping. On construction it reports a node that is not a mapping and every
// key that is not in `allowed` ("unknown field 'x'; allowed: a, b"). Accessors return nullopt
// when the field is absent (or null) or invalid, reporting the latter and missing required
// fields.
class MapReader {
 public:
  MapReader(SpecContext& ctx, const SpecNode& node, std::string path,
            std::vector<std::string_view> allowed);

  // False when the node was not a mapping (already reported).
  bool valid() const { return valid_; }
  // The line of the mapping itself.
  int line() const { return line_; }
  const std::string& path() const { return path_; }
  SpecContext& ctx() { return ctx_; }
  // Returns the dotted path of `key` under this mapping.
  std::string Path(std::string_view key) const;
  // Returns the line of `key`'s value, or of the mapping when absent.
  int LineOf(std::string_view key) const;
  // True when `key` is present with a non-null value.
  bool Has(std::string_view key) const;
  // Reports a problem with `key` at its line.
  void Error(std::string_view key, std::string message);

  // Returns the value node; reports a missing required field.
  std::optional<SpecNode> Value(std::string_view key, Presence presence = Presence::kOptional);
  std::optional<std::string> String(std::string_view key, Presence presence = Presence::kOptional);
  // Reads an integer in [min, max] ("must be at least MIN, got V").
  std::optional<int64_t> Int(std::string_view key, Presence presence = Presence::kOptional,
                             int64_t min = std::numeric_limits<int64_t>::min(),
                             int64_t max = std::numeric_limits<int64_t>::max());
  std::optional<bool> Bool(std::string_view key, Presence presence = Presence::kOptional);
  // Reads a Quantity; with `positive`, zero and negative values are rejected, otherwise only
  // negative ones.
  std::optional<Quantity> Qty(std::string_view key, Presence presence = Presence::kOptional,
                              bool positive = false);
  std::optional<Duration> Dur(std::string_view key, Presence presence = Presence::kOptional);
  // Reads a mapping of string to scalar.
  std::optional<std::map<std::string, std::string>> StringMap(std::string_view key);
  // Reads a list of scalars.
  std::optional<std::vector<std::string>> StringList(std::string_view key,
                                                      Presence presence = Presence::kOptional);
  // Reads a name that must satisfy IsValidName().
  std::optional<std::string> Name(std::string_view key, Presence presence = Presence::kOptional);
  // Reads a string and converts it with `parse`; a failure is reported with its message.
  template <typename T, typename Parse>
  std::optional<T> Parsed(std::string_view key, Presence presence, Parse&& parse) {
    auto text = String(key, presence);
    if (!text) return std::nullopt;
    auto r = parse(*text);
    if (!r.ok()) {
      Error(key, r.status().message());
      return std::nullopt;
    }
    return std::move(r).value();
  }
  // Returns a reader for the nested mapping `key`.
  std::optional<MapReader> Map(std::string_view key, std::vector<std::string_view> allowed,
                               Presence presence = Presence::kOptional);
  // Returns the list node under `key` (reports a value that is not a list).
  std::optional<SpecNode> List(std::string_view key, Presence presence = Presence::kOptional);

 private:
  // The entry of `key` (keys in document order, read once in the constructor: yaml-cpp's own
  // lookup converts every key it passes to a string); null when absent.
  const SpecNode* Find(std::string_view key) const;

  SpecContext& ctx_;
  std::vector<std::pair<std::string, SpecNode>> entries_;
  std::string path_;
  int line_ = 0;
  bool valid_ = false;
};

// Returns "a, b, c".
std::string JoinNames(const std::vector<std::string_view>& names);

}  // namespace abacus
