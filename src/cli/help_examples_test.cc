// docs/cli.md: every client verb's `--help` shows at least one example, its subcommands' too
// (the probe of 2026-12-07 found `rollout status|history|undo --help` without one).
#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/app.h"

namespace abacus::cli {
namespace {

void Collect(const CLI::App& app, const std::string& path, std::vector<std::string>& missing) {
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    const std::string name = path.empty() ? sub->get_name() : path + " " + sub->get_name();
    if (sub->get_description().find("Example") == std::string::npos) missing.push_back(name);
    Collect(*sub, name, missing);
  }
}

TEST(HelpExamplesTest, EveryClientVerbAndSubcommandShowsAnExample) {
  CLI::App app{"test", "abacus"};
  int exit_code = 0;
  AddClientCommands(app, &exit_code);
  std::vector<std::string> missing;
  Collect(app, "", missing);
  EXPECT_TRUE(missing.empty()) << "no example in --help of: " << ::testing::PrintToString(missing);
}

}  // namespace
}  // namespace abacus::cli
