// The small value parsers of scenario files (sim/scenario_parse.cc): tokens, numbers,
// quantities, durations, labels, taints, tolerations, runtimes, name ranges and places. Internal
// to the scenario reader and runner; docs/scenarios.md has the syntax.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sim/scenario.h"

namespace abacus::sim::scenario_text {

constexpr int64_t kGiB = 1024LL * 1024 * 1024;
constexpr int64_t kDefaultDeviceMemory = 80 * kGiB;

struct Token {
  std::string text;
  bool quoted = false;
};

// Splits `line` at blanks; "double quoted" text (with \" and \\ escapes) is one token, and a
// quoted part inside a token (reason="XID 79") is part of it, blanks included, quotes dropped.
// A '#' that starts a token outside quotes begins a comment.
Status Tokenize(std::string_view line, std::vector<Token>* out);
// Splits `s` at `sep` (empty parts kept).
std::vector<std::string> Split(std::string_view s, char sep);
// A decimal integer, the whole text.
Result<int64_t> ParseInt(std::string_view text);
// A decimal integer >= 0.
Result<int64_t> ParseNonNegative(std::string_view text);
// A quantity in milli-units: "8" → 8000, "500m" → 500.
Result<int64_t> ParseMilli(std::string_view text);
// A quantity of bytes: "512Gi", "80G", "1024".
Result<int64_t> ParseBytes(std::string_view text);
// true or false.
Result<bool> ParseBool(std::string_view text);
// A priority: a number or a default priority class name (DESIGN §3).
Result<int32_t> ParsePriority(std::string_view text);
// Seconds: "120" or a duration "2m".
Result<int64_t> ParseSeconds(std::string_view text);
// "k=v,k2=v2" into a map.
Status ParseLabels(std::string_view text, std::map<std::string, std::string>* out);
// "key=value:Effect" or "key:Effect" (effect NoSchedule when left out).
Result<Taint> ParseTaint(std::string_view text);
// "key=value[:Effect]" (Equal), "key[:Effect]" (Exists) or "*" (tolerates everything).
Result<Toleration> ParseToleration(std::string_view text);
// "cuda>=12.2": a runtime name and a version requirement.
Result<sched::VersionRequirement> ParseRuntime(std::string_view text);
// "h[1-3]" → h1, h2, h3; anything else is one name.
Result<std::vector<std::string>> ExpandNames(std::string_view text);
// "node:0,1,2" → place; "node" → CPU-only place.
Result<ScenarioTaskPlace> ParsePlace(std::string_view text);
// Places separated by ';'.
Result<std::vector<ScenarioTaskPlace>> ParsePlaces(std::string_view text);
// A pending code by its name (NoFit, QuotaExceeded, ...).
Result<sched::PendingCode> ParsePendingCode(std::string_view text);
// Whether `text` names a pending code.
bool IsPendingCode(std::string_view text);
// A preemption reason by its name.
Result<sched::PreemptionReason> ParsePreemptionReason(std::string_view text);
// `items` joined by `sep`.
std::string Join(const std::vector<std::string>& items, std::string_view sep);

}  // namespace abacus::sim::scenario_text
