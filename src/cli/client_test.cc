#include "cli/client.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace abacus::cli {
namespace {

namespace fs = std::filesystem;

// A client config file in a fresh folder, named by ABACUS_CONFIG; ABACUS_SERVER/TOKEN unset.
class ClientConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("abacus-client-config-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    ::setenv("ABACUS_CONFIG", (dir_ / "config.yaml").c_str(), 1);
    ::unsetenv("ABACUS_SERVER");
    ::unsetenv("ABACUS_TOKEN");
    ::unsetenv("ABACUS_CA_CERT");
  }
  void TearDown() override {
    ::unsetenv("ABACUS_CONFIG");
    fs::remove_all(dir_);
  }
  void Write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  fs::path dir_;
};

TEST_F(ClientConfigTest, TheFileGivesServerAndTokenFileFlagsAndEnvOverride) {
  Write("token", "secret-1\n");
  Write("config.yaml", "server: http://127.0.0.1:9001/\ntokenFile: " + (dir_ / "token").string() + "\n");
  ClientConfig c = ResolveClientConfig("", "", "");
  EXPECT_EQ(c.server, "http://127.0.0.1:9001");
  EXPECT_EQ(c.token, "secret-1");
  ::setenv("ABACUS_SERVER", "127.0.0.1:9002", 1);
  EXPECT_EQ(ResolveClientConfig("", "", "").server, "http://127.0.0.1:9002");
  EXPECT_EQ(ResolveClientConfig("http://127.0.0.1:9003", "t", "").server, "http://127.0.0.1:9003");
  EXPECT_EQ(ResolveClientConfig("http://127.0.0.1:9003", "t", "").token, "t");
}

// The file is parsed once per version of it; a rewritten file (or token file) is read again.
TEST_F(ClientConfigTest, ARewrittenFileIsReadAgainInTheSameProcess) {
  Write("token", "secret-1\n");
  Write("config.yaml", "server: http://127.0.0.1:9001\ntokenFile: " + (dir_ / "token").string() + "\n");
  EXPECT_EQ(ResolveClientConfig("", "", "").server, "http://127.0.0.1:9001");
  EXPECT_EQ(ResolveClientConfig("", "", "").server, "http://127.0.0.1:9001");
  Write("config.yaml", "server: http://127.0.0.1:19001\ntokenFile: " + (dir_ / "token").string() + "\n");
  EXPECT_EQ(ResolveClientConfig("", "", "").server, "http://127.0.0.1:19001");
  Write("token", "secret-2\n");
  EXPECT_EQ(ResolveClientConfig("", "", "").token, "secret-2");
  Write("config.yaml", "server: [unterminated\n");
  EXPECT_EQ(ResolveClientConfig("", "", "").server, "http://127.0.0.1:8420") << "an unreadable file counts as absent";
  fs::remove(dir_ / "config.yaml");
  EXPECT_EQ(ResolveClientConfig("", "", "").token, "");
}

}  // namespace
}  // namespace abacus::cli
