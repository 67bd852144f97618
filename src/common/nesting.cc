#include "common/nesting.h"

#include <algorithm>
#include <unordered_set>
#include <vector>

namespace abacus {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// Walks YAML text line by line, keeping the open block collections (their columns) and the
// depth of the open flow collection; records the first line where the sum passes the limit.
class YamlDepthScanner {
 public:
  explicit YamlDepthScanner(int max_depth) : max_depth_(max_depth) {}

  // Returns the 1-based line of the first overflow, or 0.
  int Run(std::string_view text) {
    size_t start = 0;
    while (start <= text.size() && overflow_line_ == 0) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      std::string_view line = text.substr(start, end - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      ++line_;
      Line(line);
      start = end + 1;
    }
    return overflow_line_;
  }

 private:
  struct Level {
    size_t column;
    bool sequence;
  };

  static size_t Indent(std::string_view l) {
    size_t i = 0;
    while (i < l.size() && l[i] == ' ') ++i;
    return i;
  }
  static bool IsEntryIndicator(std::string_view l, size_t i) {
    return i < l.size() && (l[i] == '-' || l[i] == '?') && (i + 1 == l.size() || IsBlank(l[i + 1]));
  }

  void Check() {
    if (overflow_line_ == 0 && static_cast<int>(block_.size()) + flow_ > max_depth_) overflow_line_ = line_;
  }
  void Push(size_t column, bool sequence) {
    block_.push_back({column, sequence});
    Check();
  }

  void Line(std::string_view l) {
    size_t indent = Indent(l);
    if (block_scalar_parent_ >= 0) {
      // A block scalar's content: blank lines and lines indented past its parent's line.
      if (indent == l.size() || static_cast<int>(indent) > block_scalar_parent_) return;
      block_scalar_parent_ = -1;
    }
    if (quote_ != 0 || flow_ > 0) {  // a quoted scalar or flow collection spanning lines
      Scan(l, 0, indent);
      return;
    }
    if (indent == l.size() || l[indent] == '#') return;
    if (indent == 0 && (l.substr(0, 3) == "---" || l.substr(0, 3) == "...") && (l.size() == 3 || IsBlank(l[3]))) {
      block_.clear();  // a new document
      Scan(l, 3, 0);
      return;
    }
    if (indent == 0 && l[0] == '%') return;  // a directive
    // 1) Close the collections this line's indentation leaves; open the one it starts.
    const bool sequence_line = IsEntryIndicator(l, indent);
    while (!block_.empty() && block_.back().column > indent) block_.pop_back();
    if (!block_.empty() && block_.back().column == indent) {
      if (block_.back().sequence && !sequence_line) {
        block_.pop_back();  // a list under a key at the key's column ended: the mapping goes on
      } else if (!block_.back().sequence && sequence_line) {
        Push(indent, true);  // "key:" then "- item" at the key's column
      }
    }
    if (block_.empty() || block_.back().column < indent) Push(indent, sequence_line);
    // 2) Compact entries on the same line ("- - x", "- key: v"): each opens a level.
    size_t pos = indent;
    if (sequence_line) {
      ++pos;
      while (pos < l.size() && IsBlank(l[pos])) ++pos;
      while (IsEntryIndicator(l, pos)) {
        Push(pos, true);
        ++pos;
        while (pos < l.size() && IsBlank(l[pos])) ++pos;
      }
    }
    // 3) The rest of the line: a mapping entry after "- " opens a mapping at its column.
    if (Scan(l, pos, indent) && pos > indent) Push(pos, false);
  }

  // Scans `l` from `pos` for quoted scalars, flow collections, comments and block scalar
  // indicators. Returns whether a block mapping's "key:" was seen on this line.
  bool Scan(std::string_view l, size_t pos, size_t indent) {
    bool key = false;
    bool value_start = true;
    for (size_t i = pos; i < l.size() && overflow_line_ == 0; ++i) {
      char c = l[i];
      if (quote_ == '"') {
        if (c == '\\') {
          ++i;
        } else if (c == '"') {
          quote_ = 0;
        }
        continue;
      }
      if (quote_ == '\'') {
        if (c == '\'') {
          if (i + 1 < l.size() && l[i + 1] == '\'') {
            ++i;
          } else {
            quote_ = 0;
          }
        }
        continue;
      }
      if (IsBlank(c)) continue;
      if (c == '#' && (i == 0 || IsBlank(l[i - 1]))) break;  // a comment
      if (flow_ > 0) {
        if (c == '[' || c == '{') {
          ++flow_;
          Check();
          value_start = true;
        } else if (c == ']' || c == '}') {
          --flow_;
          value_start = false;
        } else if (c == ',' || c == ':' || c == '?') {
          value_start = true;
        } else if ((c == '"' || c == '\'') && value_start) {
          quote_ = c;
          value_start = false;
        } else {
          value_start = false;
        }
        continue;
      }
      if (value_start) {
        if (c == '[' || c == '{') {
          flow_ = 1;
          Check();
          continue;
        }
        if (c == '"' || c == '\'') {
          quote_ = c;
          value_start = false;
          continue;
        }
        if (c == '|' || c == '>') {
          block_scalar_parent_ = static_cast<int>(indent);
          break;
        }
        if (c == '&' || c == '!' || c == '*') {  // an anchor, tag or alias: the value may follow
          while (i + 1 < l.size() && !IsBlank(l[i + 1])) ++i;
          continue;
        }
        value_start = false;
      }
      if (c == ':' && (i + 1 == l.size() || IsBlank(l[i + 1]))) {
        key = true;
        value_start = true;
      }
    }
    return key;
  }

  const int max_depth_;
  std::vector<Level> block_;
  int flow_ = 0;
  char quote_ = 0;
  int block_scalar_parent_ = -1;
  int line_ = 0;
  int overflow_line_ = 0;
};

// Walks JSON text byte by byte outside its strings, skipping whitespace: calls on(c, line) for
// each other byte, and once for each string as on('"', its first line). Stops when `on`
// returns false.
template <typename On>
void WalkJson(std::string_view text, On&& on) {
  int line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') ++line;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    if (c == '"') {
      int first = line;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\n') ++line;
        if (text[i] == '\\') ++i;
      }
      if (!on('"', first)) return;
      continue;
    }
    if (!on(c, line)) return;
  }
}

// Returns the line of the `index`-th (1-based) key of valid JSON text: a string followed by ':'.
int LineOfJsonKey(std::string_view text, size_t index) {
  int found = 0;
  int string_line = 0;
  size_t keys = 0;
  WalkJson(text, [&](char c, int line) {
    if (c == ':' && string_line > 0 && ++keys == index) {
      found = string_line;
      return false;
    }
    string_line = c == '"' ? line : 0;
    return true;
  });
  return found;
}

}  // namespace

int FindJsonNestingOverflow(std::string_view text, int max_depth) {
  int depth = 0;
  int overflow = 0;
  WalkJson(text, [&](char c, int line) {
    if (c == '[' || c == '{') {
      if (++depth > max_depth) overflow = line;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
    return overflow == 0;
  });
  return overflow;
}

int FindYamlNestingOverflow(std::string_view text, int max_depth) {
  return YamlDepthScanner(max_depth).Run(text);
}

std::string NestingMessage(int max_depth) {
  return "nesting deeper than " + std::to_string(max_depth) + " levels (the limit)";
}

namespace {

// Members of every object in `j` (nesting is bounded by the scan before the parse).
size_t CountMembers(const nlohmann::json& j) {
  size_t n = 0;
  if (j.is_object()) n += j.size();
  if (j.is_structured()) {
    for (const auto& v : j) n += CountMembers(v);
  }
  return n;
}

}  // namespace

nlohmann::json ParseJsonChecked(std::string_view text, JsonTextProblem* problem) {
  using Json = nlohmann::json;
  // One scan: the nesting limit, and the keys the text writes (':' outside strings).
  int depth = 0;
  int overflow = 0;
  size_t written_keys = 0;
  WalkJson(text, [&](char c, int line) {
    if (c == '[' || c == '{') {
      if (++depth > kMaxNestingDepth) overflow = line;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ':') {
      ++written_keys;
    }
    return overflow == 0;
  });
  if (overflow != 0) {
    *problem = {overflow, NestingMessage()};
    return Json(Json::value_t::discarded);
  }
  // The plain parse keeps one member per repeated key, so a repeat shows as fewer members than
  // keys written; only then is the text parsed again to find which key repeats (the common case
  // pays no per-key callback).
  Json plain = Json::parse(text, nullptr, false);
  if (plain.is_discarded() || CountMembers(plain) == written_keys) return plain;
  // Keys of the open objects; the first repeat is remembered by its position among all keys.
  std::vector<std::unordered_set<std::string>> open;
  size_t keys = 0;
  size_t duplicate_index = 0;
  std::string duplicate;
  Json::parser_callback_t on_event = [&](int, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) {
      open.emplace_back();
    } else if (event == Json::parse_event_t::object_end) {
      if (!open.empty()) open.pop_back();
    } else if (event == Json::parse_event_t::key) {
      ++keys;
      if (duplicate_index == 0 && !open.empty() && !open.back().insert(parsed.get<std::string>()).second) {
        duplicate_index = keys;
        duplicate = parsed.get<std::string>();
      }
    }
    return true;
  };
  Json j = Json::parse(text, on_event, false);
  if (duplicate_index == 0 || j.is_discarded()) return j;
  if (duplicate.size() > 64) duplicate = duplicate.substr(0, 64) + "...";
  *problem = {LineOfJsonKey(text, duplicate_index), "duplicate key '" + duplicate + "'"};
  return Json(Json::value_t::discarded);
}

JsonTextProblem JsonSyntaxProblem(std::string_view text) {
  try {
    [[maybe_unused]] nlohmann::json parsed = nlohmann::json::parse(text);
    return {};
  } catch (const nlohmann::json::exception& e) {
    // e.what(): "[json.exception.parse_error.101] parse error at line 1, column 8: syntax error
    // while parsing value - invalid literal; last read: 'tru}'; expected ..." The token read
    // last is the caller's bytes: it is cut out; what the parser expected is a fixed phrase.
    std::string_view what = e.what();
    size_t reason = what.find(": ", what.find("parse error"));
    reason = reason == std::string_view::npos ? what.size() : reason + 2;
    size_t last_read = what.find("; last read", reason);
    std::string message(what.substr(reason, last_read == std::string_view::npos ? std::string_view::npos
                                                                              : last_read - reason));
    if (last_read != std::string_view::npos) {
      size_t expected = what.rfind("; expected ");
      if (expected > last_read && expected != std::string_view::npos && what.size() - expected <= 48) {
        message += what.substr(expected);
      }
    }
    // The parser's byte position (1-based, one past the end for a text cut short) gives the
    // line and column.
    size_t at = 0;
    if (const auto* parse = dynamic_cast<const nlohmann::json::parse_error*>(&e); parse != nullptr && parse->byte > 0) {
      at = std::min<size_t>(parse->byte - 1, text.size());
    }
    int line = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < at; ++i) {
      if (text[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    if (message.empty()) message = "the parser stopped";
    return {line, "not valid JSON at column " + std::to_string(at - line_start + 1) + ": " + message};
  }
}

Result<nlohmann::json> ParseJsonBody(std::string_view body) {
  JsonTextProblem problem;
  nlohmann::json j = ParseJsonChecked(body, &problem);
  if (problem.message.empty() && j.is_discarded()) problem = JsonSyntaxProblem(body);
  if (!problem.message.empty()) {
    return InvalidArgument("request body: line " + std::to_string(problem.line) + ": " + problem.message);
  }
  return j;
}

}  // namespace abacus
