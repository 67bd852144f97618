// The results directory of a task and reading its results file back (results.h).
#include "agent/runtime/results.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace abacus::agent {
namespace {

namespace fs = std::filesystem;

class ResultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("abacus-results-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
  }
  fs::path dir_;
};

TEST_F(ResultsTest, TheDirectoryIsPrivate) {
  ASSERT_TRUE(PrepareResultsDir((dir_ / "results").string()).ok());
  EXPECT_EQ(fs::status(dir_ / "results").permissions() & fs::perms::all, fs::perms::owner_all);
  // An existing directory gets the mode too.
  fs::permissions(dir_ / "results", fs::perms::all);
  ASSERT_TRUE(PrepareResultsDir((dir_ / "results").string()).ok());
  EXPECT_EQ(fs::status(dir_ / "results").permissions() & fs::perms::all, fs::perms::owner_all);
}

TEST_F(ResultsTest, NothingWrittenIsNoResults) {
  EXPECT_TRUE(ReadResults((dir_ / "missing").string()).empty());
  ASSERT_TRUE(PrepareResultsDir(dir_.string()).ok());
  EXPECT_TRUE(ReadResults(dir_.string()).empty());
  EXPECT_TRUE(ReadResults(dir_.string(), "mmlu.json").empty());
}

TEST_F(ResultsTest, ReadsResultsJsonOrThePreferredNameFirst) {
  ASSERT_TRUE(PrepareResultsDir(dir_.string()).ok());
  Write("results.json", R"({"metrics": {"accuracy": 0.81}})");
  TaskResults r = ReadResults(dir_.string());
  ASSERT_TRUE(r.text.has_value());
  EXPECT_EQ(*r.text, R"({"metrics": {"accuracy": 0.81}})");
  EXPECT_EQ(r.error, "");
  // The preferred name when it is there; results.json when it is not.
  EXPECT_EQ(ReadResults(dir_.string(), "mmlu.json").text, r.text);
  Write("mmlu.json", R"({"acc": 0.7})");
  EXPECT_EQ(ReadResults(dir_.string(), "mmlu.json").text, R"({"acc": 0.7})");
  // A name with a path in it is never followed out of the directory.
  EXPECT_EQ(ResultsFileName("../mmlu.json"), "results.json");
  EXPECT_EQ(ResultsFileName(".."), "results.json");
  EXPECT_EQ(ResultsFileName(""), "results.json");
  EXPECT_EQ(ResultsFileName("mmlu.json"), "mmlu.json");
  EXPECT_EQ(ReadResults(dir_.string(), "../x").text, r.text);
  // An empty file is results (empty ones, which the server calls invalid), not missing ones.
  Write("results.json", "");
  EXPECT_EQ(ReadResults(dir_.string()).text, std::string());
}

TEST_F(ResultsTest, TooLargeLinkedOrBinaryFilesAreAnErrorNotContent) {
  ASSERT_TRUE(PrepareResultsDir(dir_.string()).ok());
  Write("results.json", std::string(kMaxResultsBytes + 1, ' '));
  TaskResults big = ReadResults(dir_.string());
  EXPECT_FALSE(big.text.has_value());
  EXPECT_NE(big.error.find("262145 bytes, more than the 262144 allowed"), std::string::npos) << big.error;
  // At the cap exactly: taken.
  Write("results.json", std::string(kMaxResultsBytes, ' '));
  ASSERT_TRUE(ReadResults(dir_.string()).text.has_value());
  EXPECT_EQ(ReadResults(dir_.string()).text->size(), kMaxResultsBytes);
  // A symbolic link is not followed (it could point at any file the agent may read).
  Write("secret", "{\"a\": 1}");
  fs::remove(dir_ / "results.json");
  fs::create_symlink(dir_ / "secret", dir_ / "results.json");
  TaskResults linked = ReadResults(dir_.string());
  EXPECT_FALSE(linked.text.has_value());
  EXPECT_NE(linked.error.find("symbolic link"), std::string::npos) << linked.error;
  // Neither is a FIFO (reading it could block) or a directory.
  fs::remove(dir_ / "results.json");
  ASSERT_EQ(::mkfifo((dir_ / "results.json").c_str(), 0600), 0);
  EXPECT_NE(ReadResults(dir_.string()).error.find("not a regular file"), std::string::npos);
  fs::remove(dir_ / "results.json");
  // Bytes that are not UTF-8 cannot go in the JSON report.
  Write("results.json", std::string("{\"a\": \"\xff\"}"));
  TaskResults binary = ReadResults(dir_.string());
  EXPECT_FALSE(binary.text.has_value());
  EXPECT_NE(binary.error.find("not UTF-8"), std::string::npos) << binary.error;
}

}  // namespace
}  // namespace abacus::agent
