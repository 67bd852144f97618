// Task results (docs/agent.md, "Results"): every task gets a private directory, named by
// ABACUS_RESULTS_DIR, where it may write what it measured as JSON (an Evaluation's metrics).
// When the task ends the agent reads the results file back — at most kMaxResultsBytes, never
// through a symbolic link — and reports it with the task's Exited status.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "common/status.h"

namespace abacus::agent {

inline constexpr char kResultsDirVariable[] = "ABACUS_RESULTS_DIR";
inline constexpr char kDefaultResultsFile[] = "results.json";
inline constexpr size_t kMaxResultsBytes = 256 * 1024;
// Where a container task sees its results directory.
inline constexpr char kContainerResultsDir[] = "/abacus/results";

// What a task left in its results directory: nothing, the text of its results file, or why
// that file could not be taken.
struct TaskResults {
  std::optional<std::string> text;
  std::string error;
  bool empty() const { return !text && error.empty(); }
  bool operator==(const TaskResults&) const = default;
};

// Creates `dir` (and its parents) with mode 0700, or sets that mode on an existing one;
// FailedPrecondition naming the directory when it cannot.
Status PrepareResultsDir(const std::string& dir);

// Returns `name` when it is a plain file name (not empty, no '/', not "." or ".."), else
// results.json.
std::string ResultsFileName(const std::string& name);

// Reads the results a task left in `dir`: the file `preferred` (see ResultsFileName) when it is
// there, else results.json. Empty when neither exists; `error` set when the file is larger than
// kMaxResultsBytes, is not a regular file (a symbolic link included), is not UTF-8 text or
// cannot be read.
TaskResults ReadResults(const std::string& dir, const std::string& preferred = "");

}  // namespace abacus::agent
