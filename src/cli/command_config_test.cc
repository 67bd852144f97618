#include "cli/command_config.h"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

namespace abacus::cli {
namespace {

namespace fs = std::filesystem;

// `tool --log-level L run [--listen A] [--threads N] [--no-cache] [--name S]`, the shape of
// `abacus server`: the config is applied in the subcommand's callback.
struct Tool {
  CLI::App app{"tool"};
  std::string log_level = "warn";
  std::string listen = "127.0.0.1:8420";
  int threads = 4;
  bool cache = true;
  std::string name;
  std::shared_ptr<CommandConfig> config;
  Status applied;
  bool ran = false;

  explicit Tool(const std::string& default_path) {
    app.add_option("--log-level", log_level, "level")->capture_default_str();
    CLI::App* run = app.add_subcommand("run", "run");
    config = std::make_shared<CommandConfig>(run, default_path);
    run->add_option("--listen", listen, "HOST:PORT")->capture_default_str();
    run->add_option("--threads", threads, "worker threads")->check(CLI::Range(1, 64))->capture_default_str();
    run->add_flag("!--no-cache", cache, "do not cache");
    run->add_option("--name", name, "a name");
    run->callback([this] {
      applied = config->Apply();
      ran = true;
    });
  }

  // Parses `tool ARGS...`; returns CLI11's exit code (0 when parsing succeeded).
  int Parse(std::vector<std::string> args) {
    std::vector<const char*> argv{"tool"};
    for (const auto& a : args) argv.push_back(a.c_str());
    try {
      app.parse(static_cast<int>(argv.size()), argv.data());
    } catch (const CLI::ParseError& e) {
      return e.get_exit_code();
    }
    return 0;
  }
};

class CommandConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("abacus-config-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  fs::path dir_;
};

TEST_F(CommandConfigTest, KeysInTheFileSetTheOptions) {
  std::string file = Write("run.yaml", "listen: 0.0.0.0:9000\nthreads: 16\nno-cache: true\nname:\n");
  Tool t("/nonexistent/run.yaml");
  ASSERT_EQ(t.Parse({"run", "--config", file}), 0);
  ASSERT_TRUE(t.ran);
  ASSERT_TRUE(t.applied.ok()) << t.applied.message();
  EXPECT_EQ(t.listen, "0.0.0.0:9000");
  EXPECT_EQ(t.threads, 16);
  EXPECT_FALSE(t.cache);
  EXPECT_EQ(t.name, "");  // `name:` without a value keeps the default
  EXPECT_EQ(t.config->file_read(), file);
}

TEST_F(CommandConfigTest, TheCommandLineWinsOverTheFile) {
  std::string file = Write("run.yaml", "listen: 0.0.0.0:9000\nthreads: 16\n");
  Tool t("/nonexistent/run.yaml");
  ASSERT_EQ(t.Parse({"run", "--config", file, "--threads", "2"}), 0);
  ASSERT_TRUE(t.applied.ok()) << t.applied.message();
  EXPECT_EQ(t.threads, 2);
  EXPECT_EQ(t.listen, "0.0.0.0:9000");
}

TEST_F(CommandConfigTest, AnUnknownKeyFailsNamingFileLineAndKey) {
  std::string file = Write("run.yaml", "listen: 0.0.0.0:9000\n\nthread: 16\n");
  Tool t("/nonexistent/run.yaml");
  ASSERT_EQ(t.Parse({"run", "--config", file}), 0);
  ASSERT_FALSE(t.applied.ok());
  EXPECT_EQ(t.applied.message().rfind(file + ":3: unknown key 'thread'", 0), 0u) << t.applied.message();
}

TEST_F(CommandConfigTest, OptionChecksRunOnFileValues) {
  std::string file = Write("run.yaml", "threads: 500\n");
  Tool t("/nonexistent/run.yaml");
  ASSERT_EQ(t.Parse({"run", "--config", file}), 0);
  ASSERT_FALSE(t.applied.ok());
  EXPECT_EQ(t.applied.message().rfind(file + ":1: threads: ", 0), 0u) << t.applied.message();
}

TEST_F(CommandConfigTest, BadValuesAndShapesAreErrorsWithTheirLine) {
  struct Case {
    std::string text, expected;
  } cases[] = {
      {"no-cache: maybe\n", ":1: no-cache: expected true or false"},
      {"listen:\n  host: a\n", ":1: listen: expected a value, not a map"},
      {"listen: a\nlisten: b\n", ":2: listen: given twice"},
      {"- listen\n", ":1: expected KEY: VALUE lines"},
      {"listen: [a\n", ":2: "},  // a YAML syntax error
      {"config: other.yaml\n", ":1: unknown key 'config'"},
      {"log-level: loud\n", ":1: log-level: unknown level 'loud'"},
  };
  for (const auto& c : cases) {
    std::string file = Write("bad.yaml", c.text);
    Tool t("/nonexistent/run.yaml");
    ASSERT_EQ(t.Parse({"run", "--config", file}), 0);
    ASSERT_FALSE(t.applied.ok()) << c.text;
    EXPECT_EQ(t.applied.message().rfind(file + c.expected, 0), 0u) << c.text << " → " << t.applied.message();
  }
}

TEST_F(CommandConfigTest, OptionsOfTheParentCommandAreKeysToo) {
  std::string file = Write("run.yaml", "log-level: debug\n");
  Tool t("/nonexistent/run.yaml");
  ASSERT_EQ(t.Parse({"run", "--config", file}), 0);
  ASSERT_TRUE(t.applied.ok()) << t.applied.message();
  EXPECT_EQ(t.log_level, "debug");
  Tool u("/nonexistent/run.yaml");
  ASSERT_EQ(u.Parse({"--log-level", "error", "run", "--config", file}), 0);
  ASSERT_TRUE(u.applied.ok()) << u.applied.message();
  EXPECT_EQ(u.log_level, "error");
}

TEST_F(CommandConfigTest, TheDefaultFileIsReadOnlyWhenItExists) {
  Tool absent((dir_ / "absent.yaml").string());
  ASSERT_EQ(absent.Parse({"run"}), 0);
  EXPECT_TRUE(absent.applied.ok());
  EXPECT_EQ(absent.config->file_read(), "");

  std::string file = Write("default.yaml", "threads: 8\n");
  Tool present(file);
  ASSERT_EQ(present.Parse({"run"}), 0);
  ASSERT_TRUE(present.applied.ok()) << present.applied.message();
  EXPECT_EQ(present.threads, 8);

  Tool none(file);  // --config '' reads no file, not even the default
  ASSERT_EQ(none.Parse({"run", "--config", ""}), 0);
  ASSERT_TRUE(none.applied.ok());
  EXPECT_EQ(none.threads, 4);
}

TEST_F(CommandConfigTest, AMissingFileGivenExplicitlyIsAnError) {
  Tool t("/nonexistent/run.yaml");
  ASSERT_EQ(t.Parse({"run", "--config", (dir_ / "missing.yaml").string()}), 0);
  ASSERT_FALSE(t.applied.ok());
  EXPECT_NE(t.applied.message().find("cannot read config file"), std::string::npos);
}

TEST_F(CommandConfigTest, EffectiveSettingsReadBackAsTheSameConfig) {
  std::string file = Write("run.yaml", "listen: 0.0.0.0:9000\nno-cache: true\n");
  Tool t("/nonexistent/run.yaml");
  ASSERT_EQ(t.Parse({"run", "--config", file, "--threads", "2", "--print-config"}), 0);
  ASSERT_TRUE(t.applied.ok());
  EXPECT_TRUE(t.config->print_only());
  std::string effective = t.config->Effective();
  EXPECT_NE(effective.find("\nlisten: 0.0.0.0:9000\n"), std::string::npos) << effective;
  EXPECT_NE(effective.find("\nthreads: 2\n"), std::string::npos) << effective;
  EXPECT_NE(effective.find("\nno-cache: true\n"), std::string::npos) << effective;
  EXPECT_NE(effective.find("\n# name:\n"), std::string::npos) << effective;
  EXPECT_NE(effective.find("\nlog-level: warn\n"), std::string::npos) << effective;
  EXPECT_EQ(effective.find("print-config"), std::string::npos) << effective;

  // What --print-config prints is itself a config file that gives the same settings.
  std::string round = Write("round.yaml", effective);
  Tool u("/nonexistent/run.yaml");
  ASSERT_EQ(u.Parse({"run", "--config", round}), 0);
  ASSERT_TRUE(u.applied.ok()) << u.applied.message();
  EXPECT_EQ(u.listen, "0.0.0.0:9000");
  EXPECT_EQ(u.threads, 2);
  EXPECT_FALSE(u.cache);
}

}  // namespace
}  // namespace abacus::cli
