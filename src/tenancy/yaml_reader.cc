#include "tenancy/yaml_reader.h"

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/duration_parse.h"
#include "common/ids.h"

namespace abacus {

namespace {

// Finds keys given twice in one mapping (YAML keeps both entries, and lookups the first).
// Mappings are mostly a handful of fields: those are scanned, with no allocation beyond the keys
// (short keys stay in the string's own buffer); long ones (labels, env) are hashed.
class DuplicateKeys {
 public:
  explicit DuplicateKeys(size_t expected) : small_(expected <= kScanned) {
    if (small_) {
      seen_.reserve(expected);
    } else {
      first_lines_.reserve(expected);
    }
  }
  // Records `key` at `line`; returns the line it was first seen at when it is a repeat
  // (0 when that line is unknown), else nullopt.
  std::optional<int> Repeat(const std::string& key, int line) {
    if (small_) {
      for (const auto& [k, l] : seen_) {
        if (k == key) return l;
      }
      seen_.emplace_back(key, line);
      return std::nullopt;
    }
    auto [it, added] = first_lines_.try_emplace(key, line);
    if (added) return std::nullopt;
    return it->second;
  }
  // The error of a repeat: "duplicate key 'k'; first at line N", at the repeat's line.
  static void Report(SpecContext& ctx, const std::string& path, const std::string& key, int line, int first) {
    ctx.Error(line, path, "duplicate key '" + key + "'" + (first > 0 ? "; first at line " + std::to_string(first) : ""));
  }

 private:
  static constexpr size_t kScanned = 32;
  bool small_;
  std::vector<std::pair<std::string, int>> seen_;
  std::unordered_map<std::string, int> first_lines_;
};

}  // namespace

void SpecContext::Error(int line, std::string field, std::string message) {
  ++errors_;
  if (diags_ != nullptr) diags_->Add(file_, line, std::move(field), std::move(message));
}

void SpecContext::RecordLine(const std::string& field, int line) {
  if (lines_ != nullptr) (*lines_)[field] = line;
}

std::string SpecContext::Describe(const SpecNode& node) {
  if (node.IsMap()) return "a mapping";
  if (node.IsSequence()) return "a list";
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  return "something else";
}

std::string JoinNames(const std::vector<std::string_view>& names) {
  std::string out;
  for (auto n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

MapReader::MapReader(SpecContext& ctx, const SpecNode& node, std::string path,
                     std::vector<std::string_view> allowed)
    : ctx_(ctx), path_(std::move(path)), line_(node.Line()) {
  if (!node.IsMap()) {
    ctx_.Error(line_, path_, "expected a mapping, got " + SpecContext::Describe(node));
    return;
  }
  valid_ = true;
  std::vector<std::pair<SpecNode, SpecNode>> entries = node.Entries();
  entries_.reserve(entries.size());
  DuplicateKeys duplicates(entries.size());
  for (auto& kv : entries) {
    std::string key = kv.first.IsScalar() ? kv.first.Scalar() : SpecContext::Describe(kv.first);
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      ctx_.Error(kv.first.Line(), Path(key),
                 "unknown field '" + key + "'; allowed: " + JoinNames(allowed));
    }
    if (!kv.first.IsScalar()) continue;
    if (auto first = duplicates.Repeat(key, kv.first.Line())) {  // the first value counts
      DuplicateKeys::Report(ctx_, Path(key), key, kv.first.Line(), *first);
      continue;
    }
    entries_.emplace_back(std::move(key), std::move(kv.second));
  }
}


const SpecNode* MapReader::Find(std::string_view key) const {
  // The first entry of a key, as yaml-cpp's lookup finds it.
  for (const auto& [k, v] : entries_) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::string MapReader::Path(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

bool MapReader::Has(std::string_view key) const {
  const SpecNode* v = valid_ ? Find(key) : nullptr;
  return v != nullptr && v->IsDefined() && !v->IsNull();
}

int MapReader::LineOf(std::string_view key) const {
  if (const SpecNode* v = valid_ ? Find(key) : nullptr; v != nullptr && v->IsDefined()) {
    int line = v->Line();
    if (line > 0) return line;
  }
  return line_;
}

void MapReader::Error(std::string_view key, std::string message) {
  ctx_.Error(LineOf(key), Path(key), std::move(message));
}

std::optional<SpecNode> MapReader::Value(std::string_view key, Presence presence) {
  if (!valid_) return std::nullopt;
  const SpecNode* v = Find(key);
  if (v == nullptr || !v->IsDefined() || v->IsNull()) {
    if (presence == Presence::kRequired) ctx_.Error(line_, Path(key), "required field is missing");
    return std::nullopt;
  }
  // Nodes built from JSON carry no line: nothing to record (SourceLocation::LineOf treats a
  // missing field like line 0), and no path string to build for every field of every document.
  if (int line = v->Line(); line > 0) ctx_.RecordLine(Path(key), line);
  return *v;
}

std::optional<std::string> MapReader::String(std::string_view key, Presence presence) {
  auto v = Value(key, presence);
  if (!v) return std::nullopt;
  if (!v->IsScalar()) {
    Error(key, "expected a string, got " + SpecContext::Describe(*v));
    return std::nullopt;
  }
  return v->Scalar();
}

std::optional<int64_t> MapReader::Int(std::string_view key, Presence presence, int64_t min,
                                      int64_t max) {
  auto v = Value(key, presence);
  if (!v) return std::nullopt;
  std::optional<long long> parsed = v->AsInt();
  if (!parsed) {
    Error(key, "expected an integer, got " + SpecContext::Describe(*v));
    return std::nullopt;
  }
  long long n = *parsed;
  if (n < min) {
    Error(key, "must be at least " + std::to_string(min) + ", got " + std::to_string(n));
    return std::nullopt;
  }
  if (n > max) {
    Error(key, "must be at most " + std::to_string(max) + ", got " + std::to_string(n));
    return std::nullopt;
  }
  return static_cast<int64_t>(n);
}

std::optional<bool> MapReader::Bool(std::string_view key, Presence presence) {
  auto v = Value(key, presence);
  if (!v) return std::nullopt;
  std::optional<bool> b = v->AsBool();
  if (!b) Error(key, "expected true or false, got " + SpecContext::Describe(*v));
  return b;
}

std::optional<Quantity> MapReader::Qty(std::string_view key, Presence presence, bool positive) {
  auto v = Value(key, presence);
  if (!v) return std::nullopt;
  if (!v->IsScalar()) {
    Error(key, "expected a quantity such as 16, 500m or 64Gi, got " + SpecContext::Describe(*v));
    return std::nullopt;
  }
  auto q = Quantity::Parse(v->Scalar());
  if (!q.ok()) {
    Error(key, q.status().message());
    return std::nullopt;
  }
  if (q->milli() < 0 || (positive && q->milli() == 0)) {
    Error(key, std::string(positive ? "must be positive" : "must not be negative") + ", got " +
                   v->Scalar());
    return std::nullopt;
  }
  return *q;
}

std::optional<Duration> MapReader::Dur(std::string_view key, Presence presence) {
  auto v = Value(key, presence);
  if (!v) return std::nullopt;
  if (!v->IsScalar()) {
    Error(key, "expected a duration such as 90s, 30m or 72h, got " + SpecContext::Describe(*v));
    return std::nullopt;
  }
  auto d = ParseDurationSpec(v->Scalar());
  if (!d.ok()) {
    Error(key, d.status().message());
    return std::nullopt;
  }
  return *d;
}

std::optional<std::map<std::string, std::string>> MapReader::StringMap(std::string_view key) {
  auto v = Value(key);
  if (!v) return std::nullopt;
  if (!v->IsMap()) {
    Error(key, "expected a mapping of names to values, got " + SpecContext::Describe(*v));
    return std::nullopt;
  }
  std::map<std::string, std::string> out;
  bool ok = true;
  std::vector<std::pair<SpecNode, SpecNode>> entries = v->Entries();
  DuplicateKeys duplicates(entries.size());
  for (const auto& kv : entries) {
    if (!kv.first.IsScalar() || !(kv.second.IsScalar() || kv.second.IsNull())) {
      ctx_.Error(kv.first.Line(), Path(key),
                 "expected string values, got " + SpecContext::Describe(kv.second) + " for '" +
                     (kv.first.IsScalar() ? kv.first.Scalar() : std::string("?")) + "'");
      ok = false;
      continue;
    }
    if (auto first = duplicates.Repeat(kv.first.Scalar(), kv.first.Line())) {
      DuplicateKeys::Report(ctx_, Path(key) + "." + kv.first.Scalar(), kv.first.Scalar(), kv.first.Line(), *first);
      ok = false;
      continue;
    }
    out[kv.first.Scalar()] = kv.second.IsNull() ? std::string() : kv.second.Scalar();
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::vector<std::string>> MapReader::StringList(std::string_view key,
                                                              Presence presence) {
  auto v = List(key, presence);
  if (!v) return std::nullopt;
  std::vector<std::string> out;
  bool ok = true;
  for (size_t i = 0; i < v->size(); ++i) {
    SpecNode item = (*v)[i];
    if (!item.IsScalar()) {
      ctx_.Error(item.Line() > 0 ? item.Line() : LineOf(key),
                 Path(key) + "[" + std::to_string(i) + "]",
                 "expected a string, got " + SpecContext::Describe(item));
      ok = false;
      continue;
    }
    out.push_back(item.Scalar());
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<std::string> MapReader::Name(std::string_view key, Presence presence) {
  auto s = String(key, presence);
  if (!s) return std::nullopt;
  if (!IsValidName(*s)) {
    Error(key, "invalid name '" + *s +
                   "': use 1-63 characters of a-z, 0-9, '-', '_' or '.', starting and ending "
                   "with a letter or digit");
    return std::nullopt;
  }
  return s;
}

std::optional<MapReader> MapReader::Map(std::string_view key, std::vector<std::string_view> allowed,
                                        Presence presence) {
  auto v = Value(key, presence);
  if (!v) return std::nullopt;
  MapReader r(ctx_, *v, Path(key), std::move(allowed));
  if (!r.valid()) return std::nullopt;
  return r;
}

std::optional<SpecNode> MapReader::List(std::string_view key, Presence presence) {
  auto v = Value(key, presence);
  if (!v) return std::nullopt;
  if (!v->IsSequence()) {
    Error(key, "expected a list, got " + SpecContext::Describe(*v));
    return std::nullopt;
  }
  return v;
}

}  // namespace abacus
