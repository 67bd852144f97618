// Shell completion for bash and zsh, generated from the CLI11 app itself (its subcommands,
// flags and the values a flag accepts), so that the script never drifts from the commands.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace abacus::cli {

// What a shell completes at one command path ("" for `abacus`, "token create" for
// `abacus token create`).
struct CompletionNode {
  std::vector<std::string> subcommands;
  std::vector<std::string> flags;   // every option name: -o, --output, --help, ...
  std::vector<std::string> valued;  // the flags that take a value
  std::map<std::string, std::vector<std::string>> choices;  // flag → the values it accepts
  std::vector<std::string> arguments;  // the values the first positional argument accepts
};
using CompletionTree = std::map<std::string, CompletionNode>;

// Returns the completion tree of `app`: one node per command path. A flag's choices come from
// its CLI11 validator's "{a,b,c}" description; "custom-columns=SPEC" is offered as
// "custom-columns=".
CompletionTree BuildCompletionTree(const CLI::App& app);
// Returns a bash completion script for `abacus` (bash 4+; `source <(abacus completion bash)`).
std::string BashCompletion(const CompletionTree& tree);
// Returns a zsh completion script (`source <(abacus completion zsh)`, or saved as _abacus on
// $fpath).
std::string ZshCompletion(const CompletionTree& tree);
// Registers `abacus completion bash|zsh`.
void AddCompletionCommand(CLI::App& app, int* exit_code);

}  // namespace abacus::cli
