#include "cli/usage.h"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <sstream>

namespace abacus::cli {
namespace {

// A small app shaped like `abacus`: a required subcommand, a global option with a value, a
// verb with positionals and one with subcommands of its own.
struct TestApp {
  CLI::App app{"test", "abacus"};
  std::string level, kind, output;
  bool quiet = false;
  TestApp() {
    app.require_subcommand(1);
    app.add_option("--log-level", level);
    app.add_flag("--quiet", quiet);
    CLI::App* get = app.add_subcommand("get", "list");
    get->add_option("KIND", kind)->required();
    get->add_option("-o,--output", output);
    app.add_subcommand("set", "set");
    CLI::App* token = app.add_subcommand("token", "tokens");
    token->require_subcommand(1);
    token->add_subcommand("create", "");
    token->add_subcommand("list", "");
  }
};

TEST(UsageTest, EditDistanceCountsSwapsAsOne) {
  EXPECT_EQ(EditDistance("gte", "get"), 1);
  EXPECT_EQ(EditDistance("get", "get"), 0);
  EXPECT_EQ(EditDistance("", "abc"), 3);
  EXPECT_EQ(EditDistance("submti", "submit"), 1);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3);
}

TEST(UsageTest, NearestOnlyWhenATypo) {
  std::vector<std::string> verbs = {"get", "set", "describe", "submit"};
  EXPECT_EQ(Nearest("gte", verbs), std::vector<std::string>{"get"});
  EXPECT_EQ(Nearest("xet", verbs), (std::vector<std::string>{"get", "set"}));
  EXPECT_TRUE(Nearest("frobnicate", verbs).empty());
  EXPECT_TRUE(Nearest("x", verbs).empty());  // one letter is no typo of anything
  EXPECT_EQ(DidYouMean("descibe", verbs), " did you mean 'describe'?");
  EXPECT_EQ(DidYouMean("xet", verbs), " did you mean 'get' or 'set'?");
}

TEST(UsageTest, FindsCommandWordsPastOptionsAndTheirValues) {
  TestApp t;
  auto w = FindCommandWords(t.app, {"--log-level", "debug", "get", "-o", "json", "workloads"});
  EXPECT_EQ(w.path, std::vector<std::string>{"get"});
  EXPECT_FALSE(w.unknown);
  w = FindCommandWords(t.app, {"--log-level=debug", "gte"});
  EXPECT_EQ(w.unknown, "gte");
  w = FindCommandWords(t.app, {"--quiet", "gte"});  // a flag takes no value
  EXPECT_EQ(w.unknown, "gte");
  w = FindCommandWords(t.app, {"token", "crate"});
  EXPECT_EQ(w.path, std::vector<std::string>{"token"});
  EXPECT_EQ(w.unknown, "crate");
  w = FindCommandWords(t.app, {"get", "gizmos"});  // a positional argument, not a command
  EXPECT_FALSE(w.unknown);
}

TEST(UsageTest, UnknownCommandSuggestsTheNearestAndExits2) {
  TestApp t;
  std::ostringstream out, err;
  EXPECT_EQ(PreParse(t.app, {"gte", "workloads"}, out, err), 2);
  EXPECT_NE(err.str().find("error: unknown command 'gte'; did you mean 'get'?"), std::string::npos) << err.str();
  std::ostringstream out2, err2;
  EXPECT_EQ(PreParse(t.app, {"token", "lsit"}, out2, err2), 2);
  EXPECT_NE(err2.str().find("unknown command 'lsit' for 'abacus token'; did you mean 'list'?"), std::string::npos)
      << err2.str();
}

TEST(UsageTest, BareCommandPrintsHelpAndExits0) {
  TestApp t;
  std::ostringstream out, err;
  EXPECT_EQ(PreParse(t.app, {}, out, err), 0);
  EXPECT_NE(out.str().find("Usage: abacus"), std::string::npos) << out.str();
  EXPECT_FALSE(PreParse(t.app, {"get", "workloads"}, out, err).has_value());
}

// Before: CLI11's own exit codes (105 conversion, 106 required, 109 extras) left the process.
TEST(UsageTest, EveryParseErrorExits2) {
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"get"}, {"get", "w", "--bogus"}, {"get", "w", "x", "y"}, {"token"}, {"get", "w", "-o"}}) {
    TestApp t;
    std::vector<std::string> argv_s = {"abacus"};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    std::ostringstream out, err;
    try {
      t.app.parse(static_cast<int>(argv.size()), argv.data());
      ADD_FAILURE() << "parsed: " << argv_s.back();
    } catch (const CLI::ParseError& e) {
      EXPECT_NE(e.get_exit_code(), 2);  // what CLI11 would have returned
      EXPECT_EQ(ExitForParseError(t.app, e, args, out, err), 2) << err.str();
      EXPECT_EQ(err.str().rfind("error: ", 0), 0u) << err.str();
    }
  }
}

TEST(UsageTest, HelpExits0) {
  TestApp t;
  std::vector<std::string> argv_s = {"abacus", "get", "--help"};
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  std::ostringstream out, err;
  try {
    t.app.parse(static_cast<int>(argv.size()), argv.data());
    FAIL();
  } catch (const CLI::ParseError& e) {
    EXPECT_EQ(ExitForParseError(t.app, e, {"get", "--help"}, out, err), 0);
    EXPECT_NE(out.str().find("KIND"), std::string::npos) << out.str();
  }
}

}  // namespace
}  // namespace abacus::cli
