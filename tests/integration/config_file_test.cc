// `abacus server --config FILE` and `abacus agent --config FILE` as real processes: a key in the
// file takes effect in the running server, an option on the command line wins, and an unknown key
// stops the command naming FILE:LINE (src/cli/command_config.h, docs/operations.md).
#include <gtest/gtest.h>

#include <filesystem>
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

// operations.md: a value an option rejects stops the command with `FILE:LINE: key: message`.
// The commands' own checks (after the file was read) named only `--key` (the probe of
// 2026-12-07); and an agent with a node name or server URL the server must refuse retried
// forever instead of stopping.
TEST(ConfigFileTest, AValueACommandRejectsNamesFileAndLine) {
  TempDir dir;
  std::string server = WriteFile(dir, "server.yaml", "data: " + dir.path() + "/d\nlisten: 127.0.0.1:0\nrate-limit: \"-5:abc\"\n");
  CliResult r = RunCli({"server", "--config", server});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(server + ":3: rate-limit: expected RATE[:BURST]"), std::string::npos) << r.err;
  std::string fence = WriteFile(dir, "fence.yaml", "data: " + dir.path() + "/d\nfencing-grace: TrainingJob=abc\n");
  r = RunCli({"server", "--config", fence});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(fence + ":2: fencing-grace: "), std::string::npos) << r.err;

  for (const auto& [text, expected] : std::vector<std::pair<std::string, std::string>>{
           {"task-uids: 5-1\n", ":2: task-uids: "},
           {"port-range: 99999-100000\n", ":2: port-range: "},
           {"name: \"../../etc\"\n", ":2: name: invalid node name '../../etc'"},
           {"server: ftp://127.0.0.1:1\n", ":2: server: expected an http:// or https:// URL"}}) {
    std::string agent = WriteFile(dir, "agent.yaml", "token: x\n" + text);
    CliResult a = RunCli({"agent", "--config", agent, "--work-dir", dir.path() + "/w"});
    EXPECT_EQ(a.code, 2) << text << a.err;
    EXPECT_NE(a.err.find(agent + expected), std::string::npos) << text << a.err;
  }
}

// The fifth probe: `listen: 127.0.0.1:99999` and `health-window: -5m` stopped the server naming
// `--listen`, `--health-window`, not the file's line; `--http-threads 0` (or -4) started one
// worker, which one watch held while /healthz waited.
TEST(ConfigFileTest, ListenHealthWindowAndHttpThreadsAreRefusedNamingFileAndLine) {
  TempDir dir;
  const std::string data = "data: " + dir.path() + "/d\n";
  for (const auto& [text, expected] : std::vector<std::pair<std::string, std::string>>{
           {"listen: 127.0.0.1:99999\n", ":2: listen: bad port in '127.0.0.1:99999'"},
           {"listen: 127.0.0.1:0\nhealth-window: -5m\n", ":3: health-window: "},
           {"listen: 127.0.0.1:0\nhttp-threads: 0\n", ":3: http-threads: Value 0 not in range 1 to 4096"},
           {"listen: 127.0.0.1:0\nhttp-threads: -4\n", ":3: http-threads: "},
           {"listen: 127.0.0.1:0\nmax-body: 0\n", ":3: max-body: must be at least 1"}}) {
    std::string config = WriteFile(dir, "server.yaml", data + text);
    CliResult r = RunCli({"server", "--config", config});
    EXPECT_EQ(r.code, 2) << text << r.err;
    EXPECT_NE(r.err.find(config + expected), std::string::npos) << text << r.err;
  }
  CliResult flag = RunCli({"server", "--data", dir.path() + "/d", "--listen", "127.0.0.1:0", "--http-threads", "0"});
  EXPECT_EQ(flag.code, 2) << flag.err;
  EXPECT_NE(flag.err.find("--http-threads"), std::string::npos) << flag.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/d/abacus.db"));  // refused before the data folder is used
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
