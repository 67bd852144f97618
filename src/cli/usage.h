// Usage errors of the `abacus` command line: every one exits 2 (docs/cli.md, "Exit codes"),
// with "error: WHAT" and the command's --help to read; an unknown command names the nearest
// known one; bare `abacus` prints the help.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
class ParseError;
}  // namespace CLI

namespace abacus::cli {

// Returns the optimal-string-alignment distance of `a` and `b` (insertions, deletions,
// substitutions and swaps of neighbours each cost 1): "gte" is 1 from "get".
int EditDistance(const std::string& a, const std::string& b);
// Returns the candidates nearest to `word`, when near enough to be a typo (at most 2 edits and
// fewer than the word's length); empty when none is.
std::vector<std::string> Nearest(const std::string& word, const std::vector<std::string>& candidates);
// Returns " did you mean 'get'?" (or "'a' or 'b'") for `word` among `candidates`; "" when none
// is near.
std::string DidYouMean(const std::string& word, const std::vector<std::string>& candidates);

// The commands named on a command line: the subcommand path `abacus token create` → {"token",
// "create"}, and the first word that names no command where one is required.
struct CommandWords {
  std::vector<std::string> path;
  std::optional<std::string> unknown;
  bool help = false;  // -h/--help or --version before any unknown word
};
// Walks `args` (argv without argv[0]) through `app`'s subcommands, skipping options and their
// values.
CommandWords FindCommandWords(const CLI::App& app, const std::vector<std::string>& args);

// Checks the command words before CLI11 parses: bare `abacus` prints the help (exit 0); an
// unknown command prints "error: unknown command 'gte'; did you mean 'get'?" (exit 2). Returns
// the exit code when the command line was answered here, nullopt to parse it.
std::optional<int> PreParse(const CLI::App& app, const std::vector<std::string>& args, std::ostream& out,
                            std::ostream& err);
// Answers a CLI11 parse error: help and --version print and exit 0; every other error prints
// "error: WHAT" and where to read the usage, and returns 2 (CLI11's own codes, 105-109, never
// leave the process).
int ExitForParseError(const CLI::App& app, const CLI::ParseError& e, const std::vector<std::string>& args,
                      std::ostream& out, std::ostream& err);

}  // namespace abacus::cli
