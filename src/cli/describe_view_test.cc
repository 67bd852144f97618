#include "cli/describe_view.h"

#include <gtest/gtest.h>

namespace abacus::cli {
namespace {

TEST(DescribeViewTest, DurationsReadAsPeopleSayThem) {
  EXPECT_EQ(HumanDuration(0), "0s");
  EXPECT_EQ(HumanDuration(59'900'000), "59s");
  EXPECT_EQ(HumanDuration(192'000'000), "3m12s");
  EXPECT_EQ(HumanDuration(int64_t{2} * 3600 * 1'000'000 + 5 * 60 * 1'000'000), "2h05m");
  EXPECT_EQ(HumanDuration(int64_t{28} * 3600 * 1'000'000), "1d04h");
  EXPECT_EQ(HumanDuration(-1), "-");
}

TEST(DescribeViewTest, MemoryInGiB) {
  EXPECT_EQ(HumanBytes(0), "0 GiB");
  EXPECT_EQ(HumanBytes(int64_t{80} << 30), "80 GiB");
  EXPECT_EQ(HumanBytes(int64_t{3} << 29), "1.5 GiB");
  EXPECT_EQ(HumanBytes(int64_t{512} << 20), "512 MiB");
  EXPECT_EQ(HumanBytes(int64_t{1} << 40), "1024 GiB");
}

}  // namespace
}  // namespace abacus::cli
