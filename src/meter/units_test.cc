#include <gtest/gtest.h>

#include "meter/meter_test_util.h"
#include "meter/time_bucket.h"
#include "meter/units.h"

namespace abacus::meter {
namespace {

using scenario::T;

TEST(UnitsTest, MoneyParsesAndFormatsExactly) {
  EXPECT_EQ(ParseMoney("2.5").value(), 2'500'000);
  EXPECT_EQ(ParseMoney("3").value(), 3'000'000);
  EXPECT_EQ(ParseMoney("0.000125").value(), 125);
  EXPECT_EQ(ParseMoney(".5").value(), 500'000);
  for (const char* bad : {"", ".", "-1", "1e3", "1.2.3", "0.0000001", "abc"}) {
    EXPECT_FALSE(ParseMoney(bad).ok()) << bad;
  }
  EXPECT_EQ(FormatMoney(2'500'000), "2.50");
  EXPECT_EQ(FormatMoney(125), "0.000125");
  EXPECT_EQ(FormatMoney(0), "0.00");
  EXPECT_EQ(FormatMoney(-1'230'000), "-1.23");
}

TEST(UnitsTest, HoursRoundHalfAwayFromZeroToThousandths) {
  constexpr ResourceTime kHour = 3'600'000'000;
  EXPECT_EQ(FormatMilliHours(1000 * kHour * 40), "40.000");
  EXPECT_EQ(FormatMilliHours(500 * kHour / 3), "0.167");  // 1/6 device-hour
  EXPECT_EQ(FormatGiBHours((ResourceTime{64} << 30) * kHour * 10), "640.000");
  EXPECT_EQ(FormatThousandths(-1250), "-1.250");
  EXPECT_EQ(RoundDiv(-5, 2), -3);
  EXPECT_EQ(RoundDiv(5, 2), 3);
}

TEST(TimeBucketTest, ParsesRfc3339AndDates) {
  EXPECT_EQ(ParseTimestamp("2026-03-01T08:00:00Z").value(), T(1, 8));
  EXPECT_EQ(ParseTimestamp("2026-03-01").value(), T(1, 0));
  EXPECT_EQ(ParseTimestamp("2026-03-01T10:30:00+02:30").value(), T(1, 8));
  EXPECT_EQ(ParseTimestamp("2026-03-01T08:00:00.25Z").value(), T(1, 8) + std::chrono::milliseconds(250));
  for (const char* bad : {"2026-02-30", "2026-03-01T08:00:00", "2026-03-01 08:00:00Z", "yesterday",
                          "2026-03-01T24:00:00Z", "2026-03-01T08:00:00Zjunk"}) {
    EXPECT_FALSE(ParseTimestamp(bad).ok()) << bad;
  }
}

TEST(TimeBucketTest, DaysWeeksFromMondayAndMonths) {
  // 2026-03-01 is a Sunday: its week began on Monday 2026-02-23.
  EXPECT_EQ(BucketStart(T(1, 8), TimeBucket::kDay), T(1, 0));
  EXPECT_EQ(BucketLabel(BucketStart(T(1, 8), TimeBucket::kWeek), TimeBucket::kWeek), "2026-02-23");
  EXPECT_EQ(BucketStart(T(2, 8), TimeBucket::kWeek), T(2, 0));
  EXPECT_EQ(NextBucket(T(2, 0), TimeBucket::kWeek), T(9, 0));
  EXPECT_EQ(BucketLabel(BucketStart(T(31, 23), TimeBucket::kMonth), TimeBucket::kMonth), "2026-03");
  EXPECT_EQ(NextBucket(T(1, 0), TimeBucket::kMonth), T(32, 0));  // April 1st
  EXPECT_EQ(BucketLabel(T(1, 0), TimeBucket::kDay), "2026-03-01");
}

TEST(TimeBucketTest, HoursStartOnTheHourAndAreLabelledAsTimes) {
  EXPECT_EQ(BucketStart(T(1, 8, 59) + std::chrono::seconds(30), TimeBucket::kHour), T(1, 8));
  EXPECT_EQ(NextBucket(T(1, 8), TimeBucket::kHour), T(1, 9));
  EXPECT_EQ(NextBucket(T(1, 23), TimeBucket::kHour), T(2, 0));  // across midnight
  EXPECT_EQ(BucketLabel(T(1, 8), TimeBucket::kHour), "2026-03-01T08:00:00Z");
  EXPECT_EQ(BucketLabel(T(1, 0), TimeBucket::kHour), "2026-03-01T00:00:00Z");
  EXPECT_EQ(TimeBucketName(TimeBucket::kHour), "hour");
}

}  // namespace
}  // namespace abacus::meter
