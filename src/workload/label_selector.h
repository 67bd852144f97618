// LabelSelector: the `-l` of `abacus get workloads` and `?labelSelector=` of GET
// /api/v1/workloads, as kubectl writes it: comma-separated requirements, each `k=v` (or `k==v`),
// `k!=v`, `k` (the label exists) or `!k` (it does not). All requirements must hold.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace abacus {

class LabelSelector {
 public:
  enum class Op { kEquals, kNotEquals, kExists, kNotExists };
  struct Requirement {
    std::string key;
    Op op = Op::kEquals;
    std::string value;
  };

  // Parses `text`; an empty text selects everything. InvalidArgument naming the bad part
  // ("label selector 'a=b,=c': requirement '=c' has no key").
  static Result<LabelSelector> Parse(std::string_view text);

  // True when every requirement holds for `labels`.
  bool Matches(const std::map<std::string, std::string>& labels) const;
  bool empty() const { return requirements_.empty(); }
  const std::vector<Requirement>& requirements() const { return requirements_; }

 private:
  std::vector<Requirement> requirements_;
};

}  // namespace abacus
