#include "common/time_spec.h"

#include <gtest/gtest.h>

namespace abacus {
namespace {

// 2026-12-04T15:30:00Z
const Time kNow = *ParseTime("2026-12-04T15:30:00Z");

TEST(TimeSpecTest, TakesTimesDatesDurationsAndWords) {
  EXPECT_EQ(*ParseTimeSpec("2026-12-01T08:00:00Z", kNow), *ParseTime("2026-12-01T08:00:00Z"));
  EXPECT_EQ(*ParseTimeSpec("2026-11-01", kNow), *ParseTime("2026-11-01T00:00:00Z"));
  EXPECT_EQ(*ParseTimeSpec("7d", kNow), *ParseTime("2026-11-27T15:30:00Z"));
  EXPECT_EQ(*ParseTimeSpec("24h", kNow), *ParseTime("2026-12-03T15:30:00Z"));
  EXPECT_EQ(*ParseTimeSpec("1h30m", kNow), *ParseTime("2026-12-04T14:00:00Z"));
  EXPECT_EQ(*ParseTimeSpec("now", kNow), kNow);
  EXPECT_EQ(*ParseTimeSpec("today", kNow), *ParseTime("2026-12-04"));
  EXPECT_EQ(*ParseTimeSpec("Yesterday", kNow), *ParseTime("2026-12-03"));
}

TEST(TimeSpecTest, RefusesAnythingElseNamingTheForms) {
  for (const char* bad : {"", "last week", "-7d", "7", "2026-13-01", "tomorrow"}) {
    auto t = ParseTimeSpec(bad, kNow);
    ASSERT_FALSE(t.ok()) << bad;
    EXPECT_NE(t.status().message().find("a duration ago like 7d"), std::string::npos) << t.status().message();
  }
}

}  // namespace
}  // namespace abacus
