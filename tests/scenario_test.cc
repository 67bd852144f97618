// The scenario driver: every tests/scenarios/*.scn file is one test. A file with a
// "# known-bug: …" line is run too: while it fails it is skipped with that text, and once it
// passes the test fails so that the marker is removed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/scenario.h"

namespace abacus::sim {
namespace {

std::filesystem::path ScenarioDir() { return std::filesystem::path(ABACUS_SOURCE_DIR) / "tests" / "scenarios"; }

std::vector<std::string> ScenarioFiles() {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(ScenarioDir(), ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".scn") files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

class ScenarioTest : public testing::TestWithParam<std::string> {};

TEST_P(ScenarioTest, Runs) {
  std::string path = (ScenarioDir() / GetParam()).string();
  auto scenario = LoadScenario(path);
  ASSERT_TRUE(scenario.ok()) << scenario.status().message();
  // ABACUS_SCENARIO_TRACE=1 prints every cycle's decisions (for writing scenarios).
  const char* trace = std::getenv("ABACUS_SCENARIO_TRACE");
  ScenarioOutcome outcome = RunScenario(*scenario, trace != nullptr && *trace != '\0' && *trace != '0');
  for (const auto& t : outcome.trace) std::cout << t;
  if (!scenario->known_bug.empty()) {
    // A known bug still fails: skip, showing how. Once it passes, the marker must go.
    if (!outcome.ok()) GTEST_SKIP() << "known bug: " << scenario->known_bug << "\n" << outcome.failures.front();
    ADD_FAILURE() << path << " is marked known-bug but passes now: remove its '# known-bug:' line";
    return;
  }
  for (const auto& f : outcome.failures) ADD_FAILURE() << f;
  EXPECT_GT(outcome.expectations, 0) << path << ": a scenario must expect something";
}

std::string TestName(const testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(0, info.param.rfind('.'));
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, ScenarioTest, testing::ValuesIn(ScenarioFiles()), TestName);

}  // namespace
}  // namespace abacus::sim
