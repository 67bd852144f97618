// Version and VersionConstraint: runtime stack versions ("cuda" 12.4, "cann" 8.0.RC1, "driver"
// 535.104.05) and the constraints workloads place on them ("cuda>=12.2").
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace abacus {

// A dotted version. The leading dot-separated numeric components are compared as integers
// (missing components count as 0, so "12" == "12.0"); the first component that is not all
// digits starts the suffix ("8.0.RC1": numbers 8.0, suffix "RC1"; "12.4rc2": numbers 12.4,
// suffix "rc2"; "535.104.05-beta": suffix "beta"). A leading "v" is ignored.
//
// Ordering (operator<=>): numbers first; on a tie a version with a suffix is a pre-release and
// sorts before the same numbers without one ("8.0.RC1" < "8.0"); two suffixes compare by
// natural order (digit runs as numbers: "RC2" < "RC10"), case-insensitively.
class Version {
 public:
  // Parses a version; InvalidArgument when it does not start with a number.
  static Result<Version> Parse(std::string_view text);

  // The text as given (without surrounding spaces).
  const std::string& text() const { return text_; }
  const std::vector<int64_t>& numbers() const { return numbers_; }
  const std::string& suffix() const { return suffix_; }

  // Compares the numeric components only (suffixes ignored): "8.0.RC1" equals "8.0" here.
  std::strong_ordering CompareNumbers(const Version& other) const;

  friend std::strong_ordering operator<=>(const Version& a, const Version& b);
  friend bool operator==(const Version& a, const Version& b) { return (a <=> b) == 0; }

 private:
  std::string text_;
  std::vector<int64_t> numbers_;
  std::string suffix_;
};

// A constraint on one named runtime version: "cuda>=12.2", "cann>=8.0", "driver>=535",
// "rocm<6.2", "cuda==12.4", "cann!=8.0.RC1". Spaces around the operator are allowed.
//
// Names: cuda, cann, rocm, driver. Operators: >=, >, <=, <, ==, !=.
// A constraint version WITHOUT a suffix compares numbers only (suffix of the actual version
// ignored): "cann>=8.0" accepts "8.0.RC1", "cuda==12.2" accepts "12.2", "12.2.0" and "12.2rc1"
// but not "12.2.1". A constraint version WITH a suffix uses the full ordering of Version.
class VersionConstraint {
 public:
  enum class Op : uint8_t { kGe, kGt, kLe, kLt, kEq, kNe };

  // The runtime names a constraint may use.
  static const std::vector<std::string>& KnownNames();

  // Parses "NAME OP VERSION"; InvalidArgument that names the problem and shows the form.
  static Result<VersionConstraint> Parse(std::string_view text);

  const std::string& name() const { return name_; }
  Op op() const { return op_; }
  const Version& version() const { return version_; }

  // Returns true when `actual` satisfies this constraint.
  bool Matches(const Version& actual) const;
  // Returns true when `versions` (runtime name → version text, e.g. {"cuda","12.4"},
  // {"driver","535.104.05"}) holds this constraint's runtime and its version satisfies it.
  // A missing or unparseable version never matches (whatever the operator).
  bool Matches(const std::map<std::string, std::string>& versions) const;

  // Returns the canonical text "cuda>=12.2".
  std::string ToString() const;

  bool operator==(const VersionConstraint& other) const { return ToString() == other.ToString(); }

 private:
  std::string name_;
  Op op_ = Op::kGe;
  Version version_;
};

// Returns the text of `op` (">=", ">", …).
std::string_view VersionOpText(VersionConstraint::Op op);

// Returns true when every constraint matches `versions`.
bool MatchesAll(const std::vector<VersionConstraint>& constraints,
                const std::map<std::string, std::string>& versions);

}  // namespace abacus
