// `abacus server --config FILE` and `abacus agent --config FILE` as real processes: a key in the
// file takes effect in the running server, an option on the command line wins, and an unknown key
// stops the command naming FILE:LINE (src/cli/command_config.h, docs/operations.md).
#include <gtest/gtest.h>

#include <fstream>

#include "server_process.h"

namespace abacus::testing {
namespace {

std::string WriteFile(const TempDir& dir, const std::string& name, const std::string& text) {
  std::string path = dir.path() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(ConfigFileTest, AServerKeyTakesEffectAndAnOptionOverridesIt) {
  TempDir dir;
  std::string config = WriteFile(dir, "server.yaml", "max-body: 1000\nrate-limit: \"0\"\n");
  std::string body(2000, '#');
  {
    ServerProcess server(dir.path() + "/a", {"--config", config});
    EXPECT_EQ(server.Client().Post("/api/v1/workloads", body, "application/yaml").status, 413);
  }
  {
    ServerProcess server(dir.path() + "/b", {"--config", config, "--max-body", "100000"});
    // Past the size check: the body is read and rejected as YAML that is no workload.
    EXPECT_EQ(server.Client().Post("/api/v1/workloads", body, "application/yaml").status, 400);
  }
}

TEST(ConfigFileTest, AnUnknownKeyStopsTheServerNamingFileAndLine) {
  TempDir dir;
  std::string config = WriteFile(dir, "server.yaml", "# settings\ndata: " + dir.path() + "\nlisen: 127.0.0.1:0\n");
  CliResult r = RunCli({"server", "--config", config});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(config + ":3: unknown key 'lisen'"), std::string::npos) << r.err;
}

TEST(ConfigFileTest, AgentSettingsPrintWithTheirSource) {
  TempDir dir;
  std::string config = WriteFile(dir, "agent.yaml",
                                 "server: http://10.0.0.1:8420\nname: gpu-a01\nlabels: zone=a\nno-cgroups: true\n");
  CliResult r = RunCli({"agent", "--config", config, "--name", "gpu-b02", "--print-config"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("config file " + config), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nserver: http://10.0.0.1:8420\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nname: gpu-b02\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nlabels: zone=a\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nno-cgroups: true\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\ncluster: default\n"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace abacus::testing
