#include "store/data_folder_lock.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "store/store_test_util.h"

namespace abacus {
namespace {

TEST(DataFolderLockTest, ASecondHolderIsRefusedNamingTheFirstsPid) {
  testing_util::ScratchDir dir;
  auto first = DataFolderLock::Acquire(dir.path(), "server");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = DataFolderLock::Acquire(dir.path(), "server");
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("data folder " + dir.path() + " is in use by abacus pid " +
                                           std::to_string(getpid()) + " (server)"),
            std::string::npos)
      << second.status().message();
  first->reset();  // released: the next holder gets it
  EXPECT_TRUE(DataFolderLock::Acquire(dir.path(), "server").ok());
}

TEST(DataFolderLockTest, AnotherProcessIsRefusedAndALockDiesWithItsProcess) {
  testing_util::ScratchDir dir;
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto held = DataFolderLock::Acquire(dir.path(), "server");
    char c = held.ok() ? 'y' : 'n';
    (void)!write(ready[1], &c, 1);
    pause();
    _exit(0);
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  auto refused = DataFolderLock::Acquire(dir.path(), "admin migrate");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("pid " + std::to_string(child)), std::string::npos)
      << refused.status().message();
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_TRUE(DataFolderLock::Acquire(dir.path(), "server").ok());  // the stale file does not block
  close(ready[0]);
  close(ready[1]);
}

TEST(DataFolderLockTest, SqliteDataFolderOfAUrl) {
  EXPECT_EQ(SqliteDataFolder("sqlite:///var/lib/abacus/abacus.db?synchronous=normal"), "/var/lib/abacus");
  EXPECT_EQ(SqliteDataFolder("sqlite://:memory:"), "");
  EXPECT_EQ(SqliteDataFolder("postgres://db/abacus"), "");
  EXPECT_EQ(SqliteDataFolder("memory://"), "");
}

}  // namespace
}  // namespace abacus
