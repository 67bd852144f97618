// Network classes in the runtime: container --network flags, ABACUS_NETWORK_CLASS for
// containers and plain processes, unknown classes refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <thread>

#include "agent/runtime/container.h"
#include "agent/runtime/network.h"
#include "agent/runtime/process_runtime.h"

namespace abacus::agent {
namespace {

namespace fs = std::filesystem;

bool Has(const std::vector<std::string>& argv, const std::string& s) {
  return std::find(argv.begin(), argv.end(), s) != argv.end();
}

bool HasPrefix(const std::vector<std::string>& argv, const std::string& prefix) {
  return std::any_of(argv.begin(), argv.end(), [&](const std::string& a) { return a.rfind(prefix, 0) == 0; });
}

ContainerSpec Spec(const std::string& network_class) {
  ContainerSpec spec;
  spec.task_id = "t-0";
  spec.image = "registry.local/app:1";
  spec.command = {"serve"};
  spec.network_class = network_class;
  return spec;
}

TEST(NetworkClassTest, ContainerFlagsPerClass) {
  for (ContainerEngine engine : {ContainerEngine::kDocker, ContainerEngine::kPodman}) {
    auto isolated = BuildContainerRunCommand(engine, Spec("isolated"));
    ASSERT_TRUE(isolated.ok()) << isolated.status().ToString();
    EXPECT_TRUE(Has(*isolated, "--network=none"));
    EXPECT_TRUE(Has(*isolated, "ABACUS_NETWORK_CLASS=isolated"));

    auto internal = BuildContainerRunCommand(engine, Spec("internal"));
    ASSERT_TRUE(internal.ok());
    EXPECT_TRUE(Has(*internal, std::string("--network=") + kInternalNetworkName));
    EXPECT_TRUE(Has(*internal, "ABACUS_NETWORK_CLASS=internal"));

    auto internet = BuildContainerRunCommand(engine, Spec("internet"));
    ASSERT_TRUE(internet.ok());
    EXPECT_FALSE(HasPrefix(*internet, "--network"));  // the engine's default network
    EXPECT_TRUE(Has(*internet, "ABACUS_NETWORK_CLASS=internet"));

    auto none = BuildContainerRunCommand(engine, Spec(""));
    ASSERT_TRUE(none.ok());
    EXPECT_FALSE(HasPrefix(*none, "--network"));
    EXPECT_FALSE(HasPrefix(*none, "ABACUS_NETWORK_CLASS="));
  }
  // The flag comes before the image: everything after the image is the container's command.
  auto argv = *BuildContainerRunCommand(ContainerEngine::kDocker, Spec("isolated"));
  auto flag = std::find(argv.begin(), argv.end(), "--network=none");
  auto image = std::find(argv.begin(), argv.end(), "registry.local/app:1");
  EXPECT_LT(flag, image);
}

TEST(NetworkClassTest, UnknownClassIsRefused) {
  auto argv = BuildContainerRunCommand(ContainerEngine::kDocker, Spec("bridge"));
  ASSERT_FALSE(argv.ok());
  EXPECT_EQ(argv.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(argv.status().message().find("network class 'bridge' is unknown"), std::string::npos);
  EXPECT_TRUE(ValidateNetworkClass("").ok());
  EXPECT_FALSE(ValidateNetworkClass("Isolated").ok());
}

// A plain process is told its class in its environment (the agent adds it with AddNetworkClass).
TEST(NetworkClassTest, ProcessSeesItsClass) {
  std::map<std::string, std::string> env = {{"K", "V"}};
  ASSERT_TRUE(AddNetworkClass("", env).ok());
  EXPECT_EQ(env.count(kNetworkClassVariable), 0u);
  EXPECT_EQ(AddNetworkClass("everything", env).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(env.count(kNetworkClassVariable), 0u);
  ASSERT_TRUE(AddNetworkClass("isolated", env).ok());
  EXPECT_EQ(env.at(kNetworkClassVariable), "isolated");

  ManualClock clock;
  fs::path dir = fs::temp_directory_path() / ("abacus-net-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  {
    ProcessRuntime rt({dir.string(), nullptr, {}, false}, clock);
    TaskSpec spec;
    spec.task_id = "net-1";
    spec.command = {"/bin/sh", "-c", "echo class=$ABACUS_NETWORK_CLASS"};
    spec.env = env;
    ASSERT_TRUE(rt.Start(spec).ok());
    std::string out;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      rt.Poll();
      out = rt.ReadLog("net-1", LogStream::kStdout).value_or("");
      if (out.find('\n') != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_EQ(out, "class=isolated\n");
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace abacus::agent
