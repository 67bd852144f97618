// Who holds a device as a caller sees it: a member of acme/ml sees its project's workloads by id
// and name and another tenant's only as hiddenMilli; an admin (no filter) sees every holder.
#include "server/device_holders.h"

#include <gtest/gtest.h>

#include "govern/authorize.h"
#include "govern/identity.h"

namespace abacus::server {
namespace {

WorkloadRecord Holding(std::string id, std::string name, std::string project, WorkloadState state,
                       std::vector<std::pair<int, int32_t>> devices, std::string node = "gpu-1") {
  WorkloadRecord r;
  r.id = std::move(id);
  r.spec.name = std::move(name);
  r.spec.project = std::move(project);
  r.state = state;
  PlacementRecord p;
  p.node = std::move(node);
  p.cpu_milli = 1500;
  p.memory_bytes = int64_t{1} << 30;
  for (auto [index, milli] : devices) p.devices.push_back({index, milli, 0});
  r.placements.push_back(p);
  return r;
}

std::unordered_map<std::string, WorkloadRecord> Workloads() {
  std::unordered_map<std::string, WorkloadRecord> all;
  for (WorkloadRecord r : {
           Holding("wl-a", "ours", "acme/ml", WorkloadState::kRunning, {{0, 500}, {1, 1000}}),
           Holding("wl-b", "theirs", "other/research", WorkloadState::kRunning, {{0, 250}}),
           Holding("wl-c", "secret", "other/research", WorkloadState::kAdmitted, {{2, 1000}}),
           Holding("wl-d", "done", "acme/ml", WorkloadState::kSucceeded, {{3, 1000}}),  // holds nothing
       }) {
    all.emplace(r.id, r);
  }
  return all;
}

std::function<bool(const Workload&)> SeenBy(govern::Principal who) {
  return [who](const Workload& w) { return govern::MaySee(who, govern::Resource::ForWorkload(w)); };
}

TEST(DeviceHoldersTest, MemberSeesItsOwnHoldersAndOtherTenantsOnlyAsHiddenMilli) {
  RoleBinding member;
  member.role = Role::kMember;
  member.tenant = "acme";
  member.project = "acme/ml";
  DeviceHoldings h = HoldingsAsSeenBy(Workloads(), SeenBy(govern::Principal::User("mia", {member})));

  const auto& dev0 = h["gpu-1"].devices[0];
  ASSERT_EQ(dev0.holders.size(), 1u);
  EXPECT_EQ(dev0.holders[0].workload, "wl-a");
  EXPECT_EQ(dev0.holders[0].name, "ours");
  EXPECT_EQ(dev0.holders[0].milli, 500);
  EXPECT_EQ(dev0.hidden_milli, 250);

  const auto& dev2 = h["gpu-1"].devices[2];
  EXPECT_TRUE(dev2.holders.empty());
  EXPECT_EQ(dev2.hidden_milli, 1000);
  // Nothing names the other tenant's workloads.
  for (const auto& [index, holding] : h["gpu-1"].devices) {
    for (const DeviceHolder& x : holding.holders) {
      EXPECT_NE(x.workload, "wl-b");
      EXPECT_NE(x.workload, "wl-c");
      EXPECT_NE(x.name, "theirs");
      EXPECT_NE(x.name, "secret");
    }
  }
  EXPECT_EQ(h["gpu-1"].devices.count(3), 0u);  // a finished workload holds no device
  EXPECT_EQ(h["gpu-1"].hidden_cpu_milli, 3000);      // theirs and secret, 1.5 cores each
  EXPECT_EQ(h["gpu-1"].hidden_memory_bytes, int64_t{2} << 30);
}

TEST(DeviceHoldersTest, WithoutAFilterEveryHolderIsNamedAndNothingIsHidden) {
  DeviceHoldings h = HoldingsAsSeenBy(Workloads(), nullptr);
  const auto& dev0 = h["gpu-1"].devices[0];
  ASSERT_EQ(dev0.holders.size(), 2u);
  EXPECT_EQ(dev0.holders[0].workload, "wl-a");
  EXPECT_EQ(dev0.holders[1].workload, "wl-b");
  EXPECT_EQ(dev0.holders[1].milli, 250);
  EXPECT_EQ(dev0.hidden_milli, 0);
  EXPECT_EQ(h["gpu-1"].hidden_cpu_milli, 0);
  EXPECT_EQ(h["gpu-1"].devices[2].holders.at(0).name, "secret");
}

TEST(DeviceHoldersTest, TwoTasksOfOneWorkloadOnADeviceAreOneHolder) {
  std::unordered_map<std::string, WorkloadRecord> all;
  WorkloadRecord r = Holding("wl-a", "ours", "acme/ml", WorkloadState::kRunning, {{0, 250}});
  r.placements.push_back(r.placements[0]);
  all.emplace(r.id, r);
  DeviceHoldings h = HoldingsAsSeenBy(all, nullptr);
  ASSERT_EQ(h["gpu-1"].devices[0].holders.size(), 1u);
  EXPECT_EQ(h["gpu-1"].devices[0].holders[0].milli, 500);
}

}  // namespace
}  // namespace abacus::server
