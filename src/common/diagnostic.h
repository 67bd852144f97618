// Diagnostics: source-located problems found while reading a file, reported all at once.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace abacus {

// One problem in an input file: "FILE:LINE: field: message".
struct Diagnostic {
  std::string file;     // path as given by the user; may be empty for in-memory input
  int line = 0;         // 1-based; 0 when unknown
  std::string field;    // dotted path of the offending field ("spec.taskGroups[1].replicas"); may be empty
  std::string message;  // what was wrong and what was expected

  // Returns "FILE:LINE: field: message", leaving out the parts that are empty or zero.
  std::string ToString() const;
  bool operator==(const Diagnostic&) const = default;
};

// A list of diagnostics collected while reading one or more documents.
class Diagnostics {
 public:
  // Records a problem.
  void Add(Diagnostic d) { items_.push_back(std::move(d)); }
  void Add(std::string file, int line, std::string field, std::string message) {
    items_.push_back({std::move(file), line, std::move(field), std::move(message)});
  }
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  const std::vector<Diagnostic>& items() const { return items_; }
  // Returns every diagnostic, one per line.
  std::string ToString() const;
  // Returns OK when empty, else InvalidArgument carrying ToString().
  Status ToStatus() const;

 private:
  std::vector<Diagnostic> items_;
};

}  // namespace abacus
