#include "server/placement_hold.h"

#include <gtest/gtest.h>

namespace abacus::server {
namespace {

WorkloadRecord TwoGroups() {
  WorkloadRecord r;
  r.spec.spec.task_groups.resize(2);
  r.spec.spec.task_groups[0].resources.extended = {{"rdma/hca", 2}};
  r.group_flavors = {"gpu/nvidia/A100-80G", "cpu"};
  return r;
}

TEST(PlacementHoldTest, ADevicePlacementHoldsItsGroupsFlavorAndExtendedResources) {
  WorkloadRecord r = TwoGroups();
  PlacementRecord p;
  p.group = 0;
  p.cpu_milli = 8000;
  p.memory_bytes = 64;
  p.devices = {{0, 1000, 80}, {3, 500, 40}};
  PlacementHold h = HoldOf(r, p);
  EXPECT_EQ(h.flavor, "gpu/nvidia/A100-80G");
  EXPECT_EQ(h.device_milli, 1500);
  EXPECT_EQ(h.device_memory_bytes, 120);
  EXPECT_EQ(h.devices, (std::vector<int>{0, 3}));
  std::map<std::string, int64_t> used;
  ForEachQuotaUse(h, [&](const std::string& res, int64_t amount) { used[res] += amount; });
  EXPECT_EQ(used, (std::map<std::string, int64_t>{
                      {"cpu", 8000}, {"memory", 64}, {"rdma/hca", 2}, {"gpu/nvidia/A100-80G", 1500}}));
}

TEST(PlacementHoldTest, APlacementWithoutDevicesCountsAsCpuAndNoFlavor) {
  WorkloadRecord r = TwoGroups();
  PlacementRecord p;
  p.group = 1;
  p.cpu_milli = 500;
  p.memory_bytes = 1;
  PlacementHold h = HoldOf(r, p);
  EXPECT_EQ(h.flavor, "cpu");
  std::map<std::string, int64_t> used;
  ForEachQuotaUse(h, [&](const std::string& res, int64_t amount) { used[res] += amount; });
  EXPECT_EQ(used, (std::map<std::string, int64_t>{{"cpu", 500}, {"memory", 1}}));
  p.group = 7;  // a group the spec does not have: nothing extended, still cpu
  EXPECT_TRUE(HoldOf(r, p).extended->empty());
  EXPECT_EQ(HoldOf(r, p).flavor, "cpu");
}

}  // namespace
}  // namespace abacus::server
