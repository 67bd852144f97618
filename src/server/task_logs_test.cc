#include "server/task_logs.h"

#include <gtest/gtest.h>

namespace abacus::server {
namespace {

TEST(TaskLogsTest, ATaskQueryIsParsedAsAnIdOfTheRoutesWorkload) {
  auto unit = ParseLogTaskQuery("1.2", "wl-abc");
  ASSERT_TRUE(unit.ok());
  EXPECT_TRUE(unit->has_unit);
  EXPECT_EQ(unit->group, 1);
  EXPECT_EQ(unit->replica, 2);
  auto exact = ParseLogTaskQuery("wl-abc.0.1.3.2", "wl-abc");
  ASSERT_TRUE(exact.ok());
  ASSERT_TRUE(exact->exact.has_value());
  EXPECT_EQ(*exact->exact, (TaskRef{"wl-abc", 0, 1, 3, 2}));
  EXPECT_FALSE(ParseLogTaskQuery("", "wl-abc")->has_unit);
  // Another workload's task: not found, never read.
  EXPECT_EQ(ParseLogTaskQuery("wl-other.0.0.1", "wl-abc").status().code(), StatusCode::kNotFound);
  // Paths and junk are not task ids.
  for (const char* bad : {"/etc/passwd.0.0.1", "../../x.0.0.1", "a/b.0.0.1", "..0.0.1", "0.0junk", "1.-2", "x",
                          "wl-abc.0.0.0", "wl-abc.0.0"}) {
    EXPECT_EQ(ParseLogTaskQuery(bad, "wl-abc").status().code(), StatusCode::kInvalidArgument) << bad;
  }
}

TEST(TaskLogsTest, ALogPathIsBuiltFromTheTasksPartsOnly) {
  auto p = TaskLogPath("/data", TaskRef{"wl-abc", 0, 1, 2, 0}, "stdout");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->string(), "/data/logs/wl-abc.0.1.2.stdout");
  EXPECT_FALSE(TaskLogPath("/data", TaskRef{"/etc/x", 0, 0, 1, 0}, "stdout").ok());
  EXPECT_FALSE(TaskLogPath("/data", TaskRef{"..", 0, 0, 1, 0}, "stdout").ok());
  EXPECT_FALSE(TaskLogPath("/data", TaskRef{"wl-abc", 0, 0, 1, 0}, "../x").ok());
}

}  // namespace
}  // namespace abacus::server
