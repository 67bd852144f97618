#include "model/quantity.h"
#include "model/quantity_limit.h"

#include <gtest/gtest.h>

namespace abacus {
namespace {

struct ParseCase {
  const char* text;
  int64_t milli;
  const char* printed;
};

TEST(QuantityTest, ParsesAndPrintsExactly) {
  const ParseCase cases[] = {
      {"500m", 500, "500m"},
      {"16", 16'000, "16"},
      {"0", 0, "0"},
      {"1.5", 1'500, "1500m"},
      {"64Gi", 64LL * 1024 * 1024 * 1024 * 1000, "64Gi"},
      {"80G", 80'000'000'000'000LL, "80G"},
      {"1.5Gi", 1536LL * 1024 * 1024 * 1000, "1536Mi"},
      {"1024Mi", 1024LL * 1024 * 1024 * 1000, "1Gi"},
      {"2k", 2'000'000, "2k"},
      {"1e3", 1'000'000, "1k"},
      {"1.5e3", 1'500'000, "1500"},
      {"-2", -2'000, "-2"},
      {"+3", 3'000, "3"},
      {"100Ki", 102'400'000, "100Ki"},
      {"0.5Ki", 512'000, "512"},
      {"250m", 250, "250m"},
      {"2Ti", 2LL * 1024 * 1024 * 1024 * 1024 * 1000, "2Ti"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    auto q = Quantity::Parse(c.text);
    ASSERT_TRUE(q.ok()) << q.status().ToString();
    EXPECT_EQ(q->milli(), c.milli);
    EXPECT_EQ(q->ToString(), c.printed);
    auto again = Quantity::Parse(q->ToString());
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, *q) << "round trip";
  }
}

TEST(QuantityTest, RejectsMalformedInputWithAReason) {
  struct Bad {
    const char* text;
    const char* message_part;
  };
  const Bad cases[] = {
      {"", "empty"},
      {"abc", "no digits"},
      {"1.2.3", "two decimal points"},
      {"10Xi", "unknown suffix 'Xi'"},
      {"1.0001", "more precise than 1m"},
      {"0.5m", "more precise than 1m"},
      {"5 Gi", "unknown suffix ' Gi'"},
      {"1e", "bad exponent"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    auto q = Quantity::Parse(c.text);
    ASSERT_FALSE(q.ok());
    EXPECT_EQ(q.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(q.status().message().find(c.message_part), std::string::npos) << q.status().message();
  }
}

TEST(QuantityTest, DetectsOverflowInsteadOfWrapping) {
  EXPECT_EQ(Quantity::Parse("9999999999999999999999").status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(Quantity::Parse("16Ei").status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(Quantity::Parse("1e19").status().code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(Quantity::Parse("8Pi").ok());
  // Found by fuzzing: the product of mantissa and suffix must not overflow 128 bits.
  EXPECT_EQ(Quantity::Parse("9223372036854775807Ei").status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ(Quantity::Parse("0.0000000000000000000000000000000000000001").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Quantity::Parse("1e-99").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Quantity::FromUnits(INT64_MAX / 10).status().code(), StatusCode::kOutOfRange);
}

TEST(QuantityTest, CeilUnitsRoundsUp) {
  EXPECT_EQ(Quantity::Parse("1500m")->CeilUnits(), 2);
  EXPECT_EQ(Quantity::Parse("2")->CeilUnits(), 2);
  EXPECT_TRUE(Quantity::Parse("2")->IsWhole());
  EXPECT_FALSE(Quantity::Parse("2500m")->IsWhole());
}

TEST(QuantityTest, ComparesByValueNotSpelling) {
  EXPECT_EQ(*Quantity::Parse("1Gi"), *Quantity::Parse("1024Mi"));
  EXPECT_LT(*Quantity::Parse("1G"), *Quantity::Parse("1Gi"));
  EXPECT_GT(*Quantity::Parse("1"), *Quantity::Parse("999m"));
}

TEST(QuantityTest, LimitsPerUnit) {
  auto check = [](const char* text, QuantityUnit unit) { return CheckQuantityLimit(*Quantity::Parse(text), unit); };
  EXPECT_TRUE(check("10M", QuantityUnit::kCpu).ok());
  EXPECT_TRUE(check("1Pi", QuantityUnit::kMemory).ok());
  EXPECT_TRUE(check("1M", QuantityUnit::kDevices).ok());
  Status cpu = check("9223372036854775807m", QuantityUnit::kCpu);
  EXPECT_EQ(cpu.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(cpu.message(), "must be at most 10M (the limit for cpu), got 9223372036854775807m");
  EXPECT_EQ(check("1025Ti", QuantityUnit::kMemory).message(),
            "must be at most 1Pi (the limit for memory), got 1025Ti");
  EXPECT_FALSE(check("1000001", QuantityUnit::kDevices).ok());
  EXPECT_FALSE(check("-2G", QuantityUnit::kCount).ok());
  // Sums of many values at their limits stay inside int64 milli-units.
  EXPECT_LT(QuantityLimit(QuantityUnit::kMemory).milli(), INT64_MAX / 8);
  EXPECT_LT(QuantityLimit(QuantityUnit::kCpu).milli(), INT64_MAX / 100'000'000);
}

}  // namespace
}  // namespace abacus
