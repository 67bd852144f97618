// Fair share over time in the server: usage comes from the usage ledger, survives a restart,
// orders queues competing for borrowed capacity and is named in explain (docs/scheduler.md).
#include "server/fair_share_book.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/ids.h"
#include "server/control_plane.h"
#include "server/control_plane_fixture.h"
#include "server/read_views_json.h"

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

class FairShareServerTest : public testing_cp::ControlPlaneFixture {
 protected:
  void SetUp() override {
    ControlPlaneFixture::SetUp();
    Open();
    ApplyOrg(kOrg);
    auto registered = cp_->RegisterAgent(testing_cp::A100Node("gpu-a", 3), nullptr);
    ASSERT_TRUE(registered.ok()) << registered.status().ToString();
    node_token_ = registered->node_token;
  }
  // Opens with usage decaying at `half_life` (0: no decay) and nodes Ready for 1000 h.
  void Open(Duration half_life = 7 * 24h) {
    ControlPlaneFixture::Open([&](ControlPlaneOptions& o) {
      o.node_timeout = 1000h;
      o.scheduler.fair_share_half_life = half_life;
    });
  }
  std::string Submit(const std::string& name, const std::string& queue, int gpus) {
    return SubmitYaml(testing_cp::A100Job(name, gpus, "acme/ml", queue), name + ".yaml");
  }
  void Exit(const std::string& id) {
    auto r = cp_->AgentStatus("gpu-a", json{{"tasks", {{{"taskId", id + ".0.0.1"}, {"phase", "Exited"}, {"exitCode", 0}}}}});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    cp_->WaitForCycle();
  }
  json Share(const std::string& queue) {
    const json all = SharesJson(cp_->ListShares());
    for (const auto& q : all["items"]) {
      if (q["name"] == queue) return q;
    }
    return json();
  }

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
  const json before = SharesJson(cp_->ListShares());

  cp_.reset();  // restart: the shares are rebuilt from the stored usage intervals
  Open();
  EXPECT_EQ(SharesJson(cp_->ListShares()), before);
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
  json explained = *ExplainJson(cp_->Explain(a_more));
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
