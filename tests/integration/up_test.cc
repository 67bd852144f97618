// `abacus up --demo` as a user runs it: the server, the local agent and two agents of fake
// accelerators in one process; the demo's hello jobs run on them and their logs show the device
// visibility each got; Ctrl-C stops everything.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <filesystem>

#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;

TEST(UpTest, DemoRunsHelloJobsOnItsAgentsAndStopsOnInterrupt) {
  TempDir home;
  std::string data = home.path() + "/.abacus";
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    setenv("HOME", home.path().c_str(), 1);
    setenv("ABACUS_EXAMPLES", SourcePath("examples").c_str(), 1);
    execl(ABACUS_BINARY, ABACUS_BINARY, "up", "--demo", "--data", data.c_str(), "--listen", "127.0.0.1:0",
          static_cast<char*>(nullptr));
    _exit(127);
  }
  ASSERT_TRUE(WaitFor([&] { return std::filesystem::exists(data + "/server.url"); }, std::chrono::seconds(30)));
  std::string url = ReadFile(data + "/server.url");
  url.erase(url.find_last_not_of('\n') + 1);
  std::string token = ReadFile(data + "/admin.token");
  token.erase(token.find_last_not_of('\n') + 1);
  cli::ApiClient api({url, token});
  auto log_of = [&](const std::string& w) {
    auto r = api.Get("/api/v1/workloads/" + w + "/logs");
    return r.ok() ? r.body.value("content", "") : "";
  };
  // The hello jobs run on the agents: GPU visibility for the GPU job, Ascend's for the NPU one.
  EXPECT_TRUE(WaitFor([&] { return log_of("hello-gpu").find("CUDA_VISIBLE_DEVICES=") != std::string::npos; },
                      std::chrono::seconds(30)))
      << log_of("hello-gpu");
  EXPECT_TRUE(WaitFor([&] { return log_of("hello-npu").find("ASCEND_RT_VISIBLE_DEVICES=") != std::string::npos; },
                      std::chrono::seconds(30)));
  EXPECT_TRUE(WaitFor([&] { return log_of("hello-cpu").find("hello from a CPU task") != std::string::npos; },
                      std::chrono::seconds(30)));
  json nodes = api.Get("/api/v1/nodes").body["items"];
  int agent_nodes = 0;
  for (const auto& n : nodes) agent_nodes += n.value("agent", false) ? 1 : 0;
  EXPECT_EQ(agent_nodes, 3);
  EXPECT_EQ(api.Get("/api/v1/workloads/hello-npu").body["placements"][0]["node"], "demo-npu");
  // Ctrl-C: the agents stop their tasks, the server shuts down cleanly.
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace abacus::testing
