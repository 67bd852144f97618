#include "model/flavor.h"

#include <gtest/gtest.h>

namespace abacus {
namespace {

Flavor F(const char* s) {
  auto f = Flavor::Parse(s);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? *f : Flavor::Cpu();
}

TEST(FlavorTest, ParsesKindVendorModel) {
  Flavor a = F("gpu/nvidia/A100-80G");
  EXPECT_EQ(a.kind(), DeviceKind::kGpu);
  EXPECT_EQ(a.vendor(), "nvidia");
  EXPECT_EQ(a.model(), "A100-80G");
  EXPECT_EQ(F("npu/huawei/Ascend910B").kind(), DeviceKind::kNpu);
  EXPECT_FALSE(F("cpu").is_accelerator());
}

TEST(FlavorTest, RejectsMalformedNames) {
  for (const char* bad : {"gpu", "gpu/nvidia", "tpu/google/v5", "gpu/NVIDIA/A100", "gpu/nvidia/A 100",
                          "gpu/nvidia/A100/x", "cpu/intel/x", ""}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(Flavor::Parse(bad).ok());
  }
}

TEST(FlavorTest, InterningIsStableAndCpuIsZero) {
  EXPECT_EQ(Flavor::Cpu().Intern(), kCpuFlavorId);
  FlavorId a = F("gpu/nvidia/H100-80G").Intern();
  EXPECT_EQ(F("gpu/nvidia/H100-80G").Intern(), a);
  EXPECT_NE(F("gpu/nvidia/T4").Intern(), a);
  EXPECT_EQ(Flavor::FromId(a).name(), "gpu/nvidia/H100-80G");
}

TEST(FlavorPatternTest, MatchesWildcardsBySegment) {
  struct Case {
    const char* pattern;
    const char* flavor;
    bool match;
  };
  const Case cases[] = {
      {"*", "gpu/nvidia/A100-80G", true},
      {"*", "cpu", true},
      {"gpu/*", "gpu/nvidia/A100-80G", true},
      {"gpu/*", "npu/huawei/Ascend910B", false},
      {"gpu/*", "cpu", false},
      {"gpu/nvidia/*", "gpu/nvidia/T4", true},
      {"gpu/nvidia/*", "gpu/hygon/DCU-Z100", false},
      {"gpu/nvidia/A100*", "gpu/nvidia/A100-80G", true},
      {"gpu/nvidia/A100*", "gpu/nvidia/H100-80G", false},
      {"gpu/*/A100-80G", "gpu/nvidia/A100-80G", true},
      {"npu/huawei/Ascend910B", "npu/huawei/Ascend910B", true},
      {"npu/huawei/Ascend910B", "npu/huawei/Ascend910A", false},
      {"cpu", "cpu", true},
      {"cpu", "gpu/nvidia/T4", false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.pattern) + " vs " + c.flavor);
    auto p = FlavorPattern::Parse(c.pattern);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ(p->Matches(F(c.flavor)), c.match);
  }
}

TEST(FlavorPatternTest, RejectsBadSyntax) {
  for (const char* bad : {"", "gpu/nv*dia/x", "gpu//A100", "gpu/nvidia", "a/b/c/d", "xpu/*", "cpu/*"}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(FlavorPattern::Parse(bad).ok());
  }
  EXPECT_TRUE(FlavorPattern::Parse("gpu/nvidia/A100-80G")->IsExact());
  EXPECT_FALSE(FlavorPattern::Parse("gpu/*")->IsExact());
}

}  // namespace
}  // namespace abacus
