#include "common/duration_parse.h"

#include <gtest/gtest.h>

namespace abacus {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

TEST(DurationParseTest, ParsesUnitsAndCombinations) {
  EXPECT_EQ(*ParseDurationSpec("72h"), hours(72));
  EXPECT_EQ(*ParseDurationSpec("30m"), minutes(30));
  EXPECT_EQ(*ParseDurationSpec("90s"), seconds(90));
  EXPECT_EQ(*ParseDurationSpec("1h30m"), minutes(90));
  EXPECT_EQ(*ParseDurationSpec("2d"), hours(48));
  EXPECT_EQ(*ParseDurationSpec("500ms"), milliseconds(500));
  EXPECT_EQ(*ParseDurationSpec("1m500ms"), milliseconds(60500));
  EXPECT_EQ(*ParseDurationSpec("0"), Duration(0));
}

TEST(DurationParseTest, RejectsMalformed) {
  for (const char* bad : {"", "10", "1.5h", "-5m", "5x", "h", "30m1h", "1h1h", "1h 30m", "99999999999999999d"}) {
    auto d = ParseDurationSpec(bad);
    EXPECT_FALSE(d.ok()) << bad;
  }
  EXPECT_EQ(ParseDurationSpec("3x").status().message(),
            "invalid duration '3x': unknown unit at 'x' (expected e.g. 90s, 30m, 1h30m, 72h, 2d)");
}

TEST(DurationParseTest, FormatsCanonicallyAndRoundTrips) {
  EXPECT_EQ(FormatDurationSpec(hours(72)), "72h");
  EXPECT_EQ(FormatDurationSpec(minutes(90)), "1h30m");
  EXPECT_EQ(FormatDurationSpec(seconds(90)), "1m30s");
  EXPECT_EQ(FormatDurationSpec(milliseconds(1500)), "1s500ms");
  EXPECT_EQ(FormatDurationSpec(Duration(0)), "0s");
  for (Duration d : {Duration(hours(336)), Duration(seconds(1)), Duration(milliseconds(3723004))}) {
    EXPECT_EQ(*ParseDurationSpec(FormatDurationSpec(d)), d);
  }
}

}  // namespace
}  // namespace abacus
