#include "agent/discover/fault_file.h"

#include <gtest/gtest.h>

namespace abacus::agent {
namespace {

TEST(FaultFileTest, LinesNameADeviceAndWhy) {
  auto f = ParseFaultFile("# injected\n1 XID 79: GPU has fallen off the bus\n\n  3\n");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->size(), 2u);
  EXPECT_EQ(f->at(1), "XID 79: GPU has fallen off the bus");
  EXPECT_EQ(f->at(3), "injected fault");
}

TEST(FaultFileTest, ALineWithoutADeviceIndexIsAnErrorNamingTheLine) {
  auto f = ParseFaultFile("1 ok\ngpu1 broken\n");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("line 2"), std::string::npos) << f.status().message();
  EXPECT_FALSE(ParseFaultFile("-1 x").ok());
  EXPECT_FALSE(ParseFaultFile("1x y").ok());
}

TEST(FaultFileTest, AnAbsentFileHoldsNoFault) {
  auto f = ReadFaultFile("/nonexistent/abacus-faults");
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(f->empty());
}

}  // namespace
}  // namespace abacus::agent
