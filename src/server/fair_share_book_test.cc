// Fair share over time in the server: usage comes from the usage ledger, survives a restart,
// orders queues competing for borrowed capacity and is named in explain (docs/scheduler.md).
#include "server/fair_share_book.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/ids.h"
#include "server/control_plane.h"

namespace abacus::server {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// Three queues of one cohort with one A100 each: team-a and team-b compete for spare's.
const char* kOrg = R"(kind: Tenant
name: acme
---
kind: Project
name: ml
tenant: acme
---
kind: Cohort
name: research
---
kind: Queue
name: team-a
tenant: acme
cohort: research
quotas:
  - {resource: gpu/nvidia/A100-80G, nominal: 1}
  - {resource: cpu, nominal: 64}
  - {resource: memory, nominal: 512Gi}
---
kind: Queue
name: team-b
tenant: acme
cohort: research
quotas:
  - {resource: gpu/nvidia/A100-80G, nominal: 1}
  - {resource: cpu, nominal: 64}
  - {resource: memory, nominal: 512Gi}
---
kind: Queue
name: spare
tenant: acme
cohort: research
quotas:
  - {resource: gpu/nvidia/A100-80G, nominal: 1}
  - {resource: cpu, nominal: 64}
  - {resource: memory, nominal: 512Gi}
)";

std::string Job(const std::string& name, const std::string& queue, int gpus) {
  return "kind: TrainingJob\nname: " + name + "\nproject: acme/ml\nqueue: " + queue +
         "\nspec:\n  command: [\"true\"]\n  taskGroups:\n    - name: w\n"
         "      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: " +
         std::to_string(gpus) + "}}\n";
}

json AgentNode(const std::string& name, int gpus) {
  json devices = json::array();
  for (int i = 0; i < gpus; ++i) {
    devices.push_back({{"index", i}, {"flavor", "gpu/nvidia/A100-80G"}, {"memoryBytes", int64_t{80} << 30}});
  }
  return {{"name", name}, {"cpuMilli", 64000}, {"memoryBytes", int64_t{256} << 30}, {"devices", devices}};
}

class FairShareServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("abacus-fs-" + std::to_string(::getpid()) + "-" +
                                                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    Open();
    auto applied = cp_->Apply(kOrg, false, "org.yaml");
    ASSERT_TRUE(applied.ok()) << applied.status().ToString();
    auto registered = cp_->RegisterAgent(AgentNode("gpu-a", 3));
    ASSERT_TRUE(registered.ok()) << registered.status().ToString();
    node_token_ = (*registered)["nodeToken"];
  }
  void TearDown() override {
    cp_.reset();
    std::filesystem::remove_all(dir_);
  }
  void Open(Duration half_life = 7 * 24h) {
    ControlPlaneOptions o;
    o.data_dir = dir_.string();
    o.clock = &clock_;
    o.ids = &ids_;
    o.node_timeout = 1000h;
    o.scheduler.fair_share_half_life = half_life;
    auto cp = ControlPlane::Open(o);
    ASSERT_TRUE(cp.ok()) << cp.status().ToString();
    cp_ = std::move(*cp);
  }
  std::string Submit(const std::string& name, const std::string& queue, int gpus) {
    auto r = cp_->Submit(Job(name, queue, gpus), false, name + ".yaml");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    cp_->WaitForCycle();
    return r.ok() ? (*r)[0]["id"].get<std::string>() : "";
  }
  std::string State(const std::string& id) { return (*cp_->GetWorkload(id))["state"]; }
  void Exit(const std::string& id) {
    auto r = cp_->AgentStatus("gpu-a", json{{"tasks", {{{"taskId", id + ".0.0.1"}, {"phase", "Exited"}, {"exitCode", 0}}}}});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    cp_->WaitForCycle();
  }
  json Share(const std::string& queue) {
    const json all = cp_->ListShares();
    for (const auto& q : all["items"]) {
      if (q["name"] == queue) return q;
    }
    return json();
  }

  std::filesystem::path dir_;
  ManualClock clock_;  // 2026-01-01T00:00:00Z
  SequentialIdGenerator ids_;
  std::unique_ptr<ControlPlane> cp_;
  std::string node_token_;
};

TEST_F(FairShareServerTest, SharesComeFromTheUsageLedgerAndSurviveARestart) {
  std::string burst = Submit("burst", "team-a", 2);  // 1 nominal + 1 borrowed
  ASSERT_EQ(State(burst), "Admitted");
  clock_.Advance(24h);
  Exit(burst);
  std::string open = Submit("open", "team-b", 1);  // still running across the restart
  ASSERT_EQ(State(open), "Admitted");
  clock_.Advance(6h);
  json a = Share("team-a"), b = Share("team-b");
  // team-a: 2 devices × 24 h = 48 raw; decayed with a 7-day half-life (H = 168 h):
  // 2 · H/ln2 · (1 − 2^(−24/H)) = 45.70 at the end, · 2^(−6/H) over the 6 h since = 44.58.
  EXPECT_DOUBLE_EQ(a["rawUsage"].get<double>(), 48.0);
  EXPECT_NEAR(a["decayedUsage"].get<double>(), 44.58, 0.01) << a.dump();
  EXPECT_DOUBLE_EQ(b["rawUsage"].get<double>(), 6.0);
  EXPECT_EQ(a["cohort"], "research");
  EXPECT_NEAR(a["share"].get<double>(), 1.0 / 3, 1e-6);
  EXPECT_LT(a["fairShare"].get<double>(), b["fairShare"].get<double>());
  const json before = cp_->ListShares();

  cp_.reset();  // restart: the shares are rebuilt from the stored usage intervals
  Open();
  EXPECT_EQ(cp_->ListShares(), before);
  ASSERT_EQ(State(open), "Admitted");
}

TEST_F(FairShareServerTest, AfterABurstTheOtherQueueGoesFirstForBorrowedCapacityAndExplainSaysWhy) {
  std::string burst = Submit("burst", "team-a", 2);
  ASSERT_EQ(State(burst), "Admitted");
  clock_.Advance(24h);
  Exit(burst);
  // Both teams at their nominal quota; spare's device is held by its own work.
  Submit("a-base", "team-a", 1);
  Submit("b-base", "team-b", 1);
  std::string blocker = Submit("blocker", "spare", 1);
  ASSERT_EQ(State(blocker), "Admitted");
  std::string a_more = Submit("a-more", "team-a", 1);  // older
  clock_.Advance(1min);
  std::string b_more = Submit("b-more", "team-b", 1);
  ASSERT_EQ(State(a_more), "Pending");
  ASSERT_EQ(State(b_more), "Pending");
  // spare's device frees: one borrower fits, and team-b (less decayed usage) goes first.
  Exit(blocker);
  cp_->WaitForCycle();
  EXPECT_EQ(State(b_more), "Admitted");
  EXPECT_EQ(State(a_more), "Pending");
  json explained = *cp_->Explain(a_more);
  EXPECT_NE(explained.dump().find("queue team-a decayed usage 45.7 GPU-h vs team-b 0 GPU-h: team-b first"),
            std::string::npos)
      << explained.dump(2);
}

TEST_F(FairShareServerTest, HalfLifeZeroTurnsItOffAndTheOlderRequestGoesFirst) {
  cp_.reset();
  Open(Duration(0));
  std::string burst = Submit("burst", "team-a", 2);
  clock_.Advance(24h);
  Exit(burst);
  Submit("a-base", "team-a", 1);
  Submit("b-base", "team-b", 1);
  std::string blocker = Submit("blocker", "spare", 1);
  std::string a_more = Submit("a-more", "team-a", 1);
  clock_.Advance(1min);
  std::string b_more = Submit("b-more", "team-b", 1);
  Exit(blocker);
  cp_->WaitForCycle();
  EXPECT_EQ(State(a_more), "Admitted");
  EXPECT_EQ(State(b_more), "Pending");
  EXPECT_EQ(Share("team-a")["decayedUsage"], 0.0);
  EXPECT_NEAR(Share("team-a")["rawUsage"].get<double>(), 48.0, 0.05);  // and a-base's minute
}

}  // namespace
}  // namespace abacus::server
