#include "cli/completion.h"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <algorithm>

namespace abacus::cli {
namespace {

bool Has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

TEST(CompletionTest, TreeComesFromTheAppItself) {
  CLI::App app{"test", "abacus"};
  std::string output, file, shell;
  bool flag = false;
  CLI::App* get = app.add_subcommand("get", "");
  get->add_option("-o,--output", output)->check(CLI::IsMember({"table", "json"}));
  get->add_flag("--watch", flag);
  CLI::App* token = app.add_subcommand("token", "");
  token->add_subcommand("create", "")->add_option("-f,--file", file);
  app.add_subcommand("completion", "")->add_option("SHELL", shell)->check(CLI::IsMember({"bash", "zsh"}));

  CompletionTree tree = BuildCompletionTree(app);
  ASSERT_TRUE(tree.count("abacus"));
  EXPECT_EQ(tree["abacus"].subcommands, (std::vector<std::string>{"get", "token", "completion"}));
  const CompletionNode& g = tree["abacus get"];
  EXPECT_TRUE(Has(g.flags, "-o") && Has(g.flags, "--output") && Has(g.flags, "--watch") && Has(g.flags, "--help"));
  EXPECT_TRUE(Has(g.valued, "-o"));
  EXPECT_FALSE(Has(g.valued, "--watch"));
  EXPECT_EQ(g.choices.at("--output"), (std::vector<std::string>{"table", "json"}));
  EXPECT_TRUE(Has(tree["abacus token create"].valued, "--file"));
  EXPECT_EQ(tree["abacus completion"].arguments, (std::vector<std::string>{"bash", "zsh"}));

  std::string bash = BashCompletion(tree);
  EXPECT_NE(bash.find("['abacus token']='create'"), std::string::npos) << bash;
  EXPECT_NE(bash.find("['abacus get --output']='table json'"), std::string::npos) << bash;
  EXPECT_NE(bash.find("complete -F _abacus abacus"), std::string::npos);
  std::string zsh = ZshCompletion(tree);
  EXPECT_EQ(zsh.rfind("#compdef abacus\n", 0), 0u);
  EXPECT_NE(zsh.find("'abacus token' 'create'"), std::string::npos) << zsh;
}

}  // namespace
}  // namespace abacus::cli
