#include "sim/scenario_text.h"
#include "tenancy/priority_class.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include "common/diagnostic.h"
#include "common/duration_parse.h"
#include "model/quantity.h"
#include "model/version.h"
#include "sched/claims.h"
#include "sched/cluster_state.h"
#include "sched/invariants.h"

namespace abacus::sim::scenario_text {

using sched::PendingCode;
using sched::PreemptionReason;
using sched::WorkloadInfo;

// Splits `line` at blanks; "double quoted" text (with \" and \\ escapes) is one token. A '#'
// that starts a token outside quotes begins a comment.
Status Tokenize(std::string_view line, std::vector<Token>* out) {
  size_t i = 0;
  while (i < line.size()) {
    char c = line[i];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '#') break;
    Token t;
    if (c == '"') {
      t.quoted = true;
      ++i;
      bool closed = false;
      while (i < line.size()) {
        char d = line[i++];
        if (d == '\\' && i < line.size()) {
          t.text += line[i++];
        } else if (d == '"') {
          closed = true;
          break;
        } else {
          t.text += d;
        }
      }
      if (!closed) return InvalidArgument("unterminated quoted text");
    } else {
      // A quoted part inside a token (key="text with blanks") belongs to it, without the quotes.
      bool in_quotes = false;
      while (i < line.size() && (in_quotes || (line[i] != ' ' && line[i] != '\t' && line[i] != '\r'))) {
        char d = line[i++];
        if (d == '"') {
          in_quotes = !in_quotes;
        } else if (d == '\\' && in_quotes && i < line.size()) {
          t.text += line[i++];
        } else {
          t.text += d;
        }
      }
      if (in_quotes) return InvalidArgument("unterminated quoted text");
    }
    out->push_back(std::move(t));
  }
  return Status::OK();
}

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  size_t start = 0;
  while (true) {
    size_t p = s.find(sep, start);
    out.emplace_back(s.substr(start, p == std::string_view::npos ? std::string_view::npos : p - start));
    if (p == std::string_view::npos) break;
    start = p + 1;
  }
  return out;
}

Result<int64_t> ParseInt(std::string_view text) {
  if (text.empty()) return InvalidArgument("expected a number, got nothing");
  bool neg = text[0] == '-';
  size_t i = neg ? 1 : 0;
  if (i == text.size()) return InvalidArgument("expected a number, got '" + std::string(text) + "'");
  int64_t v = 0;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return InvalidArgument("expected a number, got '" + std::string(text) + "'");
    if (v > (INT64_MAX - 9) / 10) return InvalidArgument("number '" + std::string(text) + "' is too large");
    v = v * 10 + (text[i] - '0');
  }
  return neg ? -v : v;
}

Result<int64_t> ParseNonNegative(std::string_view text) {
  auto v = ParseInt(text);
  if (!v.ok()) return v;
  if (*v < 0) return InvalidArgument("expected a number >= 0, got '" + std::string(text) + "'");
  return v;
}

// A quantity in milli-units: "8" → 8000, "500m" → 500.
Result<int64_t> ParseMilli(std::string_view text) {
  auto q = Quantity::Parse(text);
  if (!q.ok()) return q.status();
  if (q->milli() < 0) return InvalidArgument("'" + std::string(text) + "' must not be negative");
  return q->milli();
}

// A quantity of bytes: "512Gi", "80G", "1024".
Result<int64_t> ParseBytes(std::string_view text) {
  auto q = Quantity::Parse(text);
  if (!q.ok()) return q.status();
  if (q->milli() < 0) return InvalidArgument("'" + std::string(text) + "' must not be negative");
  return q->CeilUnits();
}

Result<bool> ParseBool(std::string_view text) {
  if (text == "true" || text == "on" || text == "yes") return true;
  if (text == "false" || text == "off" || text == "no") return false;
  return InvalidArgument("expected true/false (or on/off), got '" + std::string(text) + "'");
}

// A priority: a number or a default priority class name (DESIGN §3).
Result<int32_t> ParsePriority(std::string_view text) {
  // The server's default classes (tenancy/priority_class.h), not a copy of their values.
  if (const PriorityClass* pc = FindDefaultPriorityClass(text)) return pc->value;
  auto v = ParseInt(text);
  if (!v.ok()) {
    std::string names;
    for (const auto& pc : DefaultPriorityClasses()) names += (names.empty() ? "" : ", ") + pc.name;
    return InvalidArgument("expected a priority number or class (" + names + "), got '" + std::string(text) + "'");
  }
  if (*v < -1'000'000'000 || *v > 1'000'000'000) return InvalidArgument("priority out of range");
  return static_cast<int32_t>(*v);
}

// Seconds: "120" or a duration "2m".
Result<int64_t> ParseSeconds(std::string_view text) {
  if (auto v = ParseNonNegative(text); v.ok()) return v;
  auto d = ParseDurationSpec(text);
  if (!d.ok()) return d.status();
  return std::chrono::duration_cast<std::chrono::seconds>(*d).count();
}

// "k=v,k2=v2" into a map.
Status ParseLabels(std::string_view text, std::map<std::string, std::string>* out) {
  for (const auto& item : Split(text, ',')) {
    size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) return InvalidArgument("expected key=value, got '" + item + "'");
    (*out)[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return Status::OK();
}

// "key=value:Effect" or "key:Effect" (effect NoSchedule when left out).
Result<Taint> ParseTaint(std::string_view text) {
  Taint t;
  std::string s(text);
  size_t colon = s.rfind(':');
  if (colon != std::string::npos) {
    auto e = ParseTaintEffect(s.substr(colon + 1));
    if (!e.ok()) return e.status();
    t.effect = *e;
    s = s.substr(0, colon);
  }
  size_t eq = s.find('=');
  t.key = s.substr(0, eq);
  if (eq != std::string::npos) t.value = s.substr(eq + 1);
  if (t.key.empty()) return InvalidArgument("taint '" + std::string(text) + "' has no key");
  return t;
}

// "key=value[:Effect]" (Equal), "key[:Effect]" (Exists) or "*" (tolerates everything).
Result<Toleration> ParseToleration(std::string_view text) {
  Toleration t;
  std::string s(text);
  if (s == "*") {
    t.op = Toleration::Op::kExists;
    return t;
  }
  size_t colon = s.rfind(':');
  if (colon != std::string::npos) {
    auto e = ParseTaintEffect(s.substr(colon + 1));
    if (!e.ok()) return e.status();
    t.effect = *e;
    s = s.substr(0, colon);
  }
  size_t eq = s.find('=');
  if (eq == std::string::npos) {
    t.op = Toleration::Op::kExists;
    t.key = s;
  } else {
    t.key = s.substr(0, eq);
    t.value = s.substr(eq + 1);
  }
  if (t.key.empty()) return InvalidArgument("toleration '" + std::string(text) + "' has no key");
  return t;
}

Result<sched::VersionRequirement> ParseRuntime(std::string_view text) {
  auto c = VersionConstraint::Parse(text);
  if (!c.ok()) return c.status();
  sched::VersionRequirement r;
  r.name = c->name();
  switch (c->op()) {
    case VersionConstraint::Op::kGe: r.op = sched::VersionRequirement::Op::kGe; break;
    case VersionConstraint::Op::kGt: r.op = sched::VersionRequirement::Op::kGt; break;
    case VersionConstraint::Op::kLe: r.op = sched::VersionRequirement::Op::kLe; break;
    case VersionConstraint::Op::kLt: r.op = sched::VersionRequirement::Op::kLt; break;
    case VersionConstraint::Op::kEq: r.op = sched::VersionRequirement::Op::kEq; break;
    case VersionConstraint::Op::kNe: r.op = sched::VersionRequirement::Op::kNe; break;
  }
  r.version = c->version().numbers();
  r.text = c->ToString();
  return r;
}

// "h[1-3]" → h1, h2, h3; anything else is one name.
Result<std::vector<std::string>> ExpandNames(std::string_view text) {
  size_t open = text.find('[');
  if (open == std::string_view::npos) return std::vector<std::string>{std::string(text)};
  size_t close = text.find(']', open);
  size_t dash = text.find('-', open);
  if (close == std::string_view::npos || dash == std::string_view::npos || dash > close) {
    return InvalidArgument("bad name range '" + std::string(text) + "' (expected e.g. gpu[1-4])");
  }
  auto lo = ParseNonNegative(text.substr(open + 1, dash - open - 1));
  auto hi = ParseNonNegative(text.substr(dash + 1, close - dash - 1));
  if (!lo.ok() || !hi.ok() || *lo > *hi || *hi - *lo > 10000) {
    return InvalidArgument("bad name range '" + std::string(text) + "' (expected e.g. gpu[1-4])");
  }
  std::vector<std::string> out;
  for (int64_t i = *lo; i <= *hi; ++i) {
    out.push_back(std::string(text.substr(0, open)) + std::to_string(i) + std::string(text.substr(close + 1)));
  }
  return out;
}

// "node:0,1,2" → place; "node" → CPU-only place.
Result<ScenarioTaskPlace> ParsePlace(std::string_view text) {
  ScenarioTaskPlace p;
  size_t colon = text.find(':');
  p.node = std::string(text.substr(0, colon));
  if (p.node.empty()) return InvalidArgument("place '" + std::string(text) + "' names no node");
  if (colon != std::string_view::npos) {
    for (const auto& d : Split(text.substr(colon + 1), ',')) {
      auto v = ParseNonNegative(d);
      if (!v.ok()) return v.status().WithContext("device index in '" + std::string(text) + "'");
      p.devices.push_back(static_cast<int>(*v));
    }
  }
  return p;
}

Result<std::vector<ScenarioTaskPlace>> ParsePlaces(std::string_view text) {
  std::vector<ScenarioTaskPlace> out;
  for (const auto& item : Split(text, ';')) {
    auto p = ParsePlace(item);
    if (!p.ok()) return p.status();
    out.push_back(std::move(*p));
  }
  return out;
}

Result<PendingCode> ParsePendingCode(std::string_view text) {
  for (int c = 0; c <= static_cast<int>(sched::kLastPendingCode); ++c) {
    std::string_view name = sched::PendingCodeName(static_cast<PendingCode>(c));
    if (name.size() == text.size() &&
        std::equal(name.begin(), name.end(), text.begin(), [](char a, char b) { return std::tolower(a) == std::tolower(b); })) {
      return static_cast<PendingCode>(c);
    }
  }
  return InvalidArgument("unknown pending code '" + std::string(text) + "'");
}

Result<PreemptionReason> ParsePreemptionReason(std::string_view text) {
  for (auto r : {PreemptionReason::kReclaimQuota, PreemptionReason::kInQueuePriority, PreemptionReason::kMakeRoom}) {
    if (sched::PreemptionReasonName(r) == text) return r;
  }
  return InvalidArgument("unknown preemption reason '" + std::string(text) +
                         "' (expected ReclaimQuota, InQueuePriority or MakeRoom)");
}

bool IsPendingCode(std::string_view text) { return ParsePendingCode(text).ok(); }

std::string Join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += sep;
    out += items[i];
  }
  return out;
}

}  // namespace abacus::sim::scenario_text
