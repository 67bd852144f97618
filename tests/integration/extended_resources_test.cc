// Extended resources end to end (issue 24): a real agent declares `--resources license/matlab=2`,
// three jobs each asking for one licence: two run, the third waits and `explain` names the
// licence; `get nodes -o wide` shows both held; when one job is cancelled the third starts.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server/server_test_util.h"
#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;

const std::string kOrg = server::testing_org::TeamOrg("t1", "p1", "q1", {{"cpu", "16"}, {"memory", "16Gi"}});

std::string Job(const std::string& name, const std::string& seconds) {
  return "kind: TrainingJob\nname: " + name + "\nproject: t1/p1\nqueue: q1\nspec:\n  command: [\"sleep\", \"" + seconds +
         "\"]\n  taskGroups:\n    - name: w\n      resources: {cpu: 1, memory: 64Mi, extended: {license/matlab: 1}}\n";
}

TEST(ExtendedResourcesTest, AnAgentsDeclaredLicencesLimitWhatRunsAtOnce) {
  TempDir dir;
  ServerProcess server(dir.path(), {"--heartbeat", "1"});
  auto admin = server.Client();
  ASSERT_EQ(admin.Post("/api/v1/apply?filename=org.yaml", kOrg, "application/yaml").status, 200);
  AgentProcess agent(server, "cpu-1", "", {"--cpus", "8", "--memory", "8Gi", "--resources", "license/matlab=2"});
  const std::vector<std::string> env = {"ABACUS_SERVER=" + server.url(), "ABACUS_TOKEN=" + server.token()};
  auto state = [&](const std::string& name) {
    const json w = admin.Get("/api/v1/workloads").body;
    for (const json& i : w.value("items", json::array())) {
      if (i.value("name", "") == name) return i.value("state", "");
    }
    return std::string();
  };
  CliResult first = RunCli({"submit", "-f", "-"}, env, Job("first", "60"));
  ASSERT_EQ(first.code, 0) << first.out << first.err;
  ASSERT_EQ(RunCli({"submit", "-f", "-"}, env, Job("long", "60")).code, 0);
  ASSERT_TRUE(WaitFor([&] { return state("first") == "Running" && state("long") == "Running"; }))
      << state("first") << " " << state("long");
  ASSERT_EQ(RunCli({"submit", "-f", "-"}, env, Job("third", "60")).code, 0);
  // Both licences held: the third waits, and says why.
  CliResult wide = RunCli({"get", "nodes", "-o", "wide"}, env);
  EXPECT_NE(wide.out.find("license/matlab"), std::string::npos) << wide.out;
  CliResult explained;
  EXPECT_TRUE(WaitFor([&] {
    explained = RunCli({"explain", "third"}, env);
    return explained.out.find("license/matlab") != std::string::npos;
  })) << explained.out << explained.err;
  EXPECT_EQ(state("third"), "Pending");
  // The first job is cancelled and gives its licence back: the third runs.
  CliResult cancelled = RunCli({"cancel", "first"}, env);
  ASSERT_EQ(cancelled.code, 0) << cancelled.out << cancelled.err;
  ASSERT_TRUE(WaitFor([&] { return state("third") == "Running"; }, std::chrono::seconds(30)))
      << state("third") << "\n" << RunCli({"explain", "third"}, env).out;
  EXPECT_EQ(state("long"), "Running");
  EXPECT_EQ(state("first"), "Cancelled");
}

}  // namespace
}  // namespace abacus::testing
