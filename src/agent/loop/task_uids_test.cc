#include "agent/loop/task_uids.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <set>

namespace abacus::agent {
namespace {

namespace fs = std::filesystem;

std::set<uint32_t> NoneInUse(uint32_t, uint32_t) { return {}; }

TEST(TaskUidsTest, ParsesARangeOrNone) {
  auto r = ParseTaskUids("1900000000-1900065535");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(**r, kDefaultTaskUids);
  auto none = ParseTaskUids("none");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  for (const char* bad : {"", "5", "0-10", "10-5", "1-4294967295", "a-b", "1-2-3", "-1-5"}) {
    auto b = ParseTaskUids(bad);
    EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument) << bad;
  }
  EXPECT_EQ(FormatUidRange({7, 9}), "7-9");
}

TEST(TaskUidsTest, EachTaskGetsAUidOfItsOwnAndKeepsItUntilRelease) {
  TaskUidPool pool({5000, 5002}, NoneInUse, 5000);
  auto a = pool.Acquire("a"), b = pool.Acquire("b");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->uid, 5000u);
  EXPECT_EQ(a->gid, 5000u);
  EXPECT_EQ(b->uid, 5001u);
  EXPECT_EQ(pool.Acquire("a")->uid, 5000u) << "a task asking again keeps its uid";
  EXPECT_EQ(pool.Held("b")->uid, 5001u);
  EXPECT_FALSE(pool.Held("c").has_value());
  EXPECT_EQ(pool.held(), 2u);
  pool.Release("a");
  EXPECT_FALSE(pool.Held("a").has_value());
  // Round the range: the uid just given back is the last to be reused.
  EXPECT_EQ(pool.Acquire("c")->uid, 5002u);
  EXPECT_EQ(pool.Acquire("d")->uid, 5000u);
  pool.Release("nobody");  // nothing held: nothing happens
  EXPECT_EQ(pool.held(), 3u);
}

TEST(TaskUidsTest, NoTwoTasksEverHoldTheSameUid) {
  TaskUidPool pool({7000, 7099}, NoneInUse);
  std::set<uint32_t> seen;
  for (int i = 0; i < 100; ++i) {
    auto u = pool.Acquire("t" + std::to_string(i));
    ASSERT_TRUE(u.ok()) << i;
    EXPECT_TRUE(seen.insert(u->uid).second) << "uid " << u->uid << " handed out twice";
    EXPECT_GE(u->uid, 7000u);
    EXPECT_LE(u->uid, 7099u);
  }
}

TEST(TaskUidsTest, AFullRangeIsAClearError) {
  TaskUidPool pool({5000, 5001}, [](uint32_t, uint32_t) { return std::set<uint32_t>{5001}; }, 5000);
  ASSERT_TRUE(pool.Acquire("a").ok());
  auto none = pool.Acquire("b");
  ASSERT_EQ(none.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(none.status().message().find("5000-5001"), std::string::npos) << none.status().message();
  EXPECT_NE(none.status().message().find("--task-uids"), std::string::npos) << none.status().message();
  pool.Release("a");
  EXPECT_EQ(pool.Acquire("b")->uid, 5000u);
}

// A task start does not scan /proc each time (a scan reads every process's status: about a
// millisecond here, which cost `bench e2e` a third of its starts): one scan finds the next
// kReadyUids free uids, each still skipped if some process ran as it.
TEST(TaskUidsTest, OneScanServesManyTaskStarts) {
  int scans = 0;
  TaskUidPool pool(
      {5000, 5999},
      [&](uint32_t, uint32_t) {
        ++scans;
        return std::set<uint32_t>{5003};
      },
      5000);
  for (size_t i = 0; i < TaskUidPool::kReadyUids; ++i) {
    auto u = pool.Acquire("t" + std::to_string(i));
    ASSERT_TRUE(u.ok()) << i;
    EXPECT_NE(u->uid, 5003u);
  }
  EXPECT_EQ(scans, 1);
  ASSERT_TRUE(pool.Acquire("one-more").ok());
  EXPECT_EQ(scans, 2);
}

TEST(TaskUidsTest, AUidSomeProcessRunsAsIsSkipped) {
  TaskUidPool pool({5000, 5002}, [](uint32_t, uint32_t) { return std::set<uint32_t>{5000}; }, 5000);
  EXPECT_EQ(pool.Acquire("a")->uid, 5001u);
}

TEST(TaskUidsTest, AdoptedUidsOfAPreviousLifeAreNotHandedOutAgain) {
  TaskUidPool pool({5000, 5002}, NoneInUse, 5000);
  ASSERT_TRUE(pool.Adopt("old", 5000).ok());
  EXPECT_TRUE(pool.Adopt("old", 5000).ok()) << "adopting twice is fine";
  EXPECT_EQ(pool.Adopt("other", 5000).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(pool.Adopt("old", 5001).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(pool.Adopt("far", 9).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(pool.Acquire("new")->uid, 5001u);
  EXPECT_EQ(pool.Acquire("old")->uid, 5000u) << "started again, the task keeps its uid";
}

// What a restarted agent recovers: the owner of each task's work directory, when in the range.
TEST(TaskUidsTest, RecoversTheUidsOfTasksOnDiskAfterARestart) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give directories to other uids";
  const fs::path tasks = fs::temp_directory_path() / ("abacus-uids-" + std::to_string(::getpid()));
  fs::create_directories(tasks / "a" / "work");
  fs::create_directories(tasks / "b" / "work");
  fs::create_directories(tasks / "root-owned" / "work");
  fs::create_directories(tasks / "no-work");
  ASSERT_EQ(::chown((tasks / "a" / "work").c_str(), 5001, 5001), 0);
  ASSERT_EQ(::chown((tasks / "b" / "work").c_str(), 4000, 4000), 0);  // outside the range
  auto found = RecoverTaskUids(tasks.string(), {5000, 5002});
  EXPECT_EQ(found, (std::map<std::string, uint32_t>{{"a", 5001}}));

  TaskUidPool pool({5000, 5002}, NoneInUse, 5001);
  for (const auto& [id, uid] : found) ASSERT_TRUE(pool.Adopt(id, uid).ok());
  EXPECT_EQ(pool.Acquire("a")->uid, 5001u);
  EXPECT_EQ(pool.Acquire("c")->uid, 5002u) << "5001 is a's";
  std::error_code ec;
  fs::remove_all(tasks, ec);
}

TEST(TaskUidsTest, TaskUsersMustBeAbleToPassEveryDirectoryAbove) {
  const fs::path base = fs::temp_directory_path() / ("abacus-pass-" + std::to_string(::getpid()));
  fs::create_directories(base / "private" / "agent");
  ::chmod(base.c_str(), 0755);
  ::chmod((base / "private").c_str(), 0700);
  Status closed = CheckTraversable((base / "private" / "agent").string());
  EXPECT_EQ(closed.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(closed.message().find((base / "private").string()), std::string::npos) << closed.message();
  EXPECT_NE(closed.message().find("--task-uids none"), std::string::npos) << closed.message();
  ::chmod((base / "private").c_str(), 0711);
  EXPECT_TRUE(CheckTraversable((base / "private" / "agent" / "not-yet").string()).ok());
  std::error_code ec;
  fs::remove_all(base, ec);
}

}  // namespace
}  // namespace abacus::agent
