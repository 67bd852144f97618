#include "agent/loop/secret_files.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace abacus::agent {
namespace {

namespace fs = std::filesystem;

mode_t ModeOf(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 0777;
}

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

TEST(SecretFilesTest, FilesAreOwnerReadOnlyAndReplacedOnRestart) {
  fs::path work = fs::temp_directory_path() / ("secret_files_test_" + std::to_string(::getpid()));
  fs::create_directories(work);
  ASSERT_TRUE(WriteSecretFiles(work, {{"db/password", "s3cret"}, {"db/user", "app"}, {"token", "t"}}).ok());
  const fs::path root(SecretsDir(work));
  EXPECT_EQ(Read(root / "db/password"), "s3cret");
  EXPECT_EQ(ModeOf(root / "db/password"), 0400u);
  EXPECT_EQ(ModeOf(root / "token"), 0400u);
  EXPECT_EQ(ModeOf(root / "db"), 0500u);
  EXPECT_EQ(ModeOf(root), 0500u);
  // The next run of the task gets exactly its new files.
  ASSERT_TRUE(WriteSecretFiles(work, {{"db/password", "rotated"}}).ok());
  EXPECT_EQ(Read(root / "db/password"), "rotated");
  EXPECT_FALSE(fs::exists(root / "token"));
  ASSERT_TRUE(RemoveSecretFiles(work).ok());  // the task is done
  EXPECT_FALSE(fs::exists(root));
  fs::remove_all(work);
}

TEST(SecretFilesTest, UnsafePathsAreRefusedWithoutWritingAnything) {
  fs::path work = fs::temp_directory_path() / ("secret_files_bad_" + std::to_string(::getpid()));
  fs::create_directories(work);
  for (std::string bad : {"../escape", "/etc/x", "a/../../b", "a//b", "", "a/./b"}) {
    Status st = WriteSecretFiles(work, {{"ok", "v"}, {bad, "v"}});
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(st.message().find("v\""), std::string::npos);
    EXPECT_FALSE(fs::exists(fs::path(SecretsDir(work)) / "ok")) << bad;
  }
  fs::remove_all(work);
}

}  // namespace
}  // namespace abacus::agent
