#include "model/resources.h"

#include <gtest/gtest.h>

#include "model/device.h"
#include "model/node.h"

namespace abacus {
namespace {

FlavorId A100() { return Flavor::Parse("gpu/nvidia/A100-80G")->Intern(); }
constexpr int64_t kGi = 1024LL * 1024 * 1024;

ResourceVector Vec(int64_t cpu, int64_t mem, int64_t gpu_milli) {
  ResourceVector v;
  v.Set(ResourceKey::Cpu(), cpu);
  v.Set(ResourceKey::Memory(), mem);
  v.Set(ResourceKey::Devices(A100()), gpu_milli);
  return v;
}

TEST(ResourceVectorTest, AddsSubtractsAndDropsZeros) {
  ResourceVector a = Vec(16'000, 64 * kGi, 8'000);
  ResourceVector b = Vec(4'000, 16 * kGi, 8'000);
  ResourceVector d = a - b;
  EXPECT_EQ(d.cpu_milli(), 12'000);
  EXPECT_EQ(d.device_milli(A100()), 0);
  EXPECT_EQ(d.size(), 2u) << "zero entries are not stored";
  EXPECT_EQ(d + b, a);
}

TEST(ResourceVectorTest, FitsInIsPerDimension) {
  ResourceVector cap = Vec(16'000, 64 * kGi, 8'000);
  EXPECT_TRUE(Vec(16'000, 64 * kGi, 8'000).FitsIn(cap));
  EXPECT_FALSE(Vec(1'000, kGi, 8'250).FitsIn(cap));
  ResourceVector excess = Vec(20'000, kGi, 9'000).ExcessOver(cap);
  EXPECT_EQ(excess.cpu_milli(), 4'000);
  EXPECT_EQ(excess.device_milli(A100()), 1'000);
  EXPECT_EQ(excess.memory_bytes(), 0);
  EXPECT_TRUE(ResourceVector().FitsIn(cap));
}

TEST(ResourceVectorTest, TimesDetectsOverflow) {
  ResourceVector v = Vec(2'000, 8 * kGi, 250);
  auto x3 = v.Times(3);
  ASSERT_TRUE(x3.ok());
  EXPECT_EQ(x3->device_milli(A100()), 750);
  EXPECT_EQ(v.Times(INT64_MAX / 2).status().code(), StatusCode::kOutOfRange);
}

TEST(ResourceVectorTest, MinMaxAndSaturatingSub) {
  ResourceVector a = Vec(4'000, 8 * kGi, 0), b = Vec(2'000, 16 * kGi, 1'000);
  EXPECT_EQ(ResourceVector::Min(a, b), Vec(2'000, 8 * kGi, 0));
  EXPECT_EQ(ResourceVector::Max(a, b), Vec(4'000, 16 * kGi, 1'000));
  EXPECT_EQ(a.SaturatingSub(b), Vec(2'000, 0, 0));
  EXPECT_FALSE(a.AnyNegative());
  EXPECT_TRUE((b - a).AnyNegative());
}

TEST(ResourceVectorTest, PrintsWithUnits) {
  ResourceVector v = Vec(16'000, 64 * kGi, 8'250);
  v.Set(ResourceKey::DeviceMemory(A100()), 320 * kGi);
  EXPECT_EQ(v.ToString(),
            "cpu=16, memory=64Gi, gpu/nvidia/A100-80G=8250m, gpu/nvidia/A100-80G.memory=320Gi");
  EXPECT_EQ(ResourceVector().ToString(), "{}");
}

TEST(DeviceTest, SharesAddUpAndDoubleAllocationIsRefused) {
  Device d;
  d.flavor = *Flavor::Parse("gpu/nvidia/A100-80G");
  d.memory_bytes = 80 * kGi;
  ASSERT_TRUE(d.Allocate("t1", 250, 10 * kGi).ok());
  ASSERT_TRUE(d.Allocate("t2", 500, 20 * kGi).ok());
  EXPECT_EQ(d.FreeMilli(), 250);
  EXPECT_EQ(d.FreeMemory(), 50 * kGi);
  EXPECT_EQ(d.Allocate("t1", 100, 0).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(d.Allocate("t3", 300, 0).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(d.Allocate("t3", 200, 60 * kGi).code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(d.Release("t1").ok());
  EXPECT_EQ(d.Release("t1").code(), StatusCode::kNotFound);
  d.health = DeviceHealth::kUnhealthy;
  EXPECT_EQ(d.Allocate("t4", 100, 0).code(), StatusCode::kFailedPrecondition);
}

TEST(DeviceSpecTest, ParsesFakeDeviceSpecs) {
  auto specs = ParseDeviceSpecs("gpu:nvidia:A100-80G:8:80Gi,npu:huawei:Ascend910B:8");
  ASSERT_TRUE(specs.ok()) << specs.status().ToString();
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ((*specs)[0].flavor.name(), "gpu/nvidia/A100-80G");
  EXPECT_EQ((*specs)[0].count, 8);
  EXPECT_EQ((*specs)[0].memory_bytes, 80 * kGi);
  EXPECT_EQ((*specs)[1].memory_bytes, 0);
  for (const char* bad : {"gpu:nvidia:A100:0", "gpu:nvidia:8", "gpu:nvidia:A100:x", "xpu:a:b:1", ""}) {
    SCOPED_TRACE(bad);
    EXPECT_FALSE(ParseDeviceSpecs(bad).ok());
  }
}

TEST(NodeTest, CapacityCountsHealthyDevicesAndFreeSubtractsHolders) {
  Node n;
  n.name = "a1";
  n.cpu_milli = 64'000;
  n.memory_bytes = 512 * kGi;
  for (int i = 0; i < 4; ++i) {
    Device d;
    d.index = i;
    d.flavor = *Flavor::Parse("gpu/nvidia/A100-80G");
    d.memory_bytes = 80 * kGi;
    n.devices.push_back(d);
  }
  n.devices[3].health = DeviceHealth::kUnhealthy;
  ASSERT_TRUE(n.FindDevice(0)->Allocate("t1", 1000, 80 * kGi).ok());
  n.cpu_memory_allocations["t1"] = {8'000, 64 * kGi};
  EXPECT_EQ(n.Capacity().device_milli(A100()), 3'000);
  EXPECT_EQ(n.Free().device_milli(A100()), 2'000);
  EXPECT_EQ(n.Free().cpu_milli(), 56'000);
  EXPECT_EQ(n.Free().memory_bytes(), 448 * kGi);
}

TEST(TaintTest, TolerationsCoverTaints) {
  std::vector<Taint> taints = {{"dedicated", "inference", TaintEffect::kNoSchedule},
                               {"soft", "x", TaintEffect::kPreferNoSchedule}};
  EXPECT_FALSE(ToleratesAll(taints, {}));
  Toleration eq{"dedicated", Toleration::Op::kEqual, "inference", std::nullopt};
  EXPECT_TRUE(ToleratesAll(taints, {eq}));
  Toleration wrong{"dedicated", Toleration::Op::kEqual, "training", std::nullopt};
  EXPECT_FALSE(ToleratesAll(taints, {wrong}));
  Toleration exists{"dedicated", Toleration::Op::kExists, "", TaintEffect::kNoSchedule};
  EXPECT_TRUE(ToleratesAll(taints, {exists}));
  Toleration all{"", Toleration::Op::kExists, "", std::nullopt};
  EXPECT_TRUE(ToleratesAll(taints, {all}));
}

}  // namespace
}  // namespace abacus
