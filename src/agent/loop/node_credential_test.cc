#include "agent/loop/node_credential.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

namespace abacus::agent {
namespace {

TEST(NodeCredentialTest, KeptPerNodeInTheWorkFolderReadableByTheOwnerOnly) {
  std::string dir = std::filesystem::temp_directory_path() / ("abacus-cred-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  EXPECT_EQ(LoadNodeCredential(dir, "n1"), "");
  ASSERT_TRUE(StoreNodeCredential(dir, "n1", "secret-1").ok());
  EXPECT_EQ(LoadNodeCredential(dir, "n1"), "secret-1");
  EXPECT_EQ(LoadNodeCredential(dir, "n2"), "");  // another node's
  ASSERT_TRUE(StoreNodeCredential(dir, "n1", "secret-2").ok());
  EXPECT_EQ(LoadNodeCredential(dir, "n1"), "secret-2");
  struct stat st {};
  ASSERT_EQ(::stat((dir + "/node.credential").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace abacus::agent
