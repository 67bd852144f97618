#include "common/cpu_steal.h"

#include <gtest/gtest.h>

namespace abacus {
namespace {

TEST(CpuStealTest, ReadsTheMachineLineOfProcStat) {
  auto t = ParseCpuTimes(
      "cpu  6758044 197132 752966 6879993 27158 0 47792 78925 0 0\n"
      "cpu0 3379022 98566 376483 3439996 13579 0 23896 39462 0 0\n"
      "intr 1 2 3\n");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->steal, 78925);
  EXPECT_EQ(t->total, 6758044 + 197132 + 752966 + 6879993 + 27158 + 0 + 47792 + 78925);
}

TEST(CpuStealTest, FindsTheLineAnywhereAndSkipsThePerCpuLines) {
  auto t = ParseCpuTimes("cpu0 1 1 1 1 1 1 1 50\nintr 9\ncpu  10 0 10 70 0 0 0 10\n");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->steal, 10);
  EXPECT_EQ(t->total, 100);
}

TEST(CpuStealTest, OldKernelsWithoutStealCountNone) {
  auto t = ParseCpuTimes("cpu  10 0 10 80\n");
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->steal, 0);
  EXPECT_EQ(t->total, 100);
}

TEST(CpuStealTest, RejectsWhatIsNotProcStat) {
  EXPECT_FALSE(ParseCpuTimes("").has_value());
  EXPECT_FALSE(ParseCpuTimes("intr 1 2\n").has_value());
  EXPECT_FALSE(ParseCpuTimes("cpu  12 x 3 4\n").has_value());
  EXPECT_FALSE(ParseCpuTimes("cpu  1 2\n").has_value());
}

TEST(CpuStealTest, StolenPercentIsTheShareOfTheTicksBetweenTwoReadings) {
  CpuTimes before{1000, 100};
  CpuTimes after{1400, 200};
  EXPECT_DOUBLE_EQ(StolenPercent(before, after), 25.0);
  EXPECT_DOUBLE_EQ(StolenPercent(before, before), 0.0);
}

TEST(CpuStealTest, ThisMachineHasReadableCounters) {
  auto t = ReadCpuTimes();
  ASSERT_TRUE(t.has_value());
  EXPECT_GT(t->total, 0);
  EXPECT_GE(t->steal, 0);
  EXPECT_LE(t->steal, t->total);
}

}  // namespace
}  // namespace abacus
