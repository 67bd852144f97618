// Nesting-depth guards for text from users (request bodies, spec files), run BEFORE parsing:
// the parsers (nlohmann::json, yaml-cpp) and everything that walks their trees (copies,
// decoders, emitters) recurse once per level, so a body nested 100,000 levels deep would
// overflow the stack. A scan without recursion refuses it first, with the line where the
// limit was crossed.
//
//   auto j = ParseJsonBody(req.body);        // InvalidArgument (400) naming the line and limit
//   if (int line = FindYamlNestingOverflow(text)) diags.Add(file, line, "", NestingMessage());
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

namespace abacus {

// The deepest nesting of collections (objects, arrays, mappings, lists) any body or spec file
// may have. Real documents stay under 12 (a workload: spec.taskGroups[i].resources.accelerators).
inline constexpr int kMaxNestingDepth = 64;

// Returns the 1-based line where the JSON text first nests objects and arrays deeper than
// `max_depth`, or 0 when it does not (also for text that is not valid JSON: the parser reports
// that).
int FindJsonNestingOverflow(std::string_view text, int max_depth = kMaxNestingDepth);

// As FindJsonNestingOverflow, for YAML text (any number of documents): counts block nesting (by
// indentation and "- " entries) plus flow nesting ([...], {...}); quoted strings, comments and
// block scalars (| and >) are skipped. Conservative: it may count a level more than yaml-cpp
// builds, never fewer.
int FindYamlNestingOverflow(std::string_view text, int max_depth = kMaxNestingDepth);

// Returns "nesting deeper than 64 levels (the limit)": the message for either overflow.
std::string NestingMessage(int max_depth = kMaxNestingDepth);

// What made a JSON text unacceptable before its content was read: the 1-based line (0 when
// unknown) and a message without the input's bytes.
struct JsonTextProblem {
  int line = 0;
  std::string message;
};

// Parses JSON text from a user: nesting deeper than kMaxNestingDepth is refused before parsing,
// a key given twice in one object ("duplicate key 'cpu'") while parsing; either fills
// `problem` and returns a discarded value. Text that is not JSON returns a discarded value with
// `problem` untouched, as json::parse(text, nullptr, false) does.
nlohmann::json ParseJsonChecked(std::string_view text, JsonTextProblem* problem);

// Where and why `text` is not JSON: the 1-based line, and "not valid JSON at column 7: syntax
// error while parsing value - invalid literal" (the parser's reason, never the bytes it read).
// An empty message (line 0) when `text` parses. Call it only on text already found invalid:
// it parses again, to reach the parser's position.
JsonTextProblem JsonSyntaxProblem(std::string_view text);

// ParseJsonChecked for a request body: InvalidArgument "request body: line 2: duplicate key
// 'cpu'" (or the nesting limit, or JsonSyntaxProblem's reason when it is not JSON at all: an
// empty body too), else the parsed value. The one parse every route that reads a JSON body
// uses, so no route takes a malformed body for one without fields.
Result<nlohmann::json> ParseJsonBody(std::string_view body);

}  // namespace abacus
