// A leader's ControlPlane under a lease fence (ControlPlaneOptions::fence), on SQLite and a manual
// clock: once another server holds the lease, every write of the deposed leader is refused (503,
// to be retried on the leader) —
// submissions, configuration, and the loop's own decisions — and the next leader loads exactly
// what was acknowledged.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/ids.h"
#include "server/control_plane.h"
#include "server/server_test_util.h"
#include "server/read_views_json.h"

namespace abacus::server {
namespace {

using namespace std::chrono_literals;

const std::string kOrg = testing_org::AcmeOrg("q", 0);

std::string Job(const std::string& name) {
  return "kind: BatchJob\nname: " + name +
         "\nproject: acme/ml\nqueue: q\nspec:\n  command: [\"true\"]\n  taskGroups:\n"
         "    - name: main\n      resources: {cpu: 1, memory: 1Gi}\n  tasks: 1\n  parallelism: 1\n";
}

class HaControlPlaneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("abacus-ha-cp-" + std::to_string(::getpid()) + "-" +
                                                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    url_ = "sqlite://" + (dir_ / "abacus.db").string();
    auto store = OpenStore(url_, StoreOptions{&clock_});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    lease_ = std::move(*store);  // what the lease keepers of both servers talk to
  }
  void TearDown() override {
    lease_.reset();
    std::filesystem::remove_all(dir_);
  }
  int64_t Take(const std::string& holder) {
    auto state = lease_->TryAcquireLease("scheduler", holder, "http://" + holder, 5s);
    EXPECT_TRUE(state.ok() && state->held) << holder;
    return state.ok() ? state->token : 0;
  }
  std::unique_ptr<ControlPlane> OpenLeader(int64_t token) {
    ControlPlaneOptions o;
    o.data_dir = dir_.string();
    o.store_url = url_;
    o.clock = &clock_;
    o.ids = &ids_;
    o.fence = LeaseFence{"scheduler", token};
    auto cp = ControlPlane::Open(o);
    EXPECT_TRUE(cp.ok()) << cp.status().ToString();
    return cp.ok() ? std::move(*cp) : nullptr;
  }

  std::filesystem::path dir_;
  std::string url_;
  ManualClock clock_;
  SequentialIdGenerator ids_;
  std::unique_ptr<Store> lease_;
};

TEST_F(HaControlPlaneTest, ADeposedLeadersWritesAreRefusedAndTheNextLeaderLoadsWhatWasAcknowledged) {
  auto a = OpenLeader(Take("a"));
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(a->Apply(kOrg, false, "org.yaml", nullptr, {}, false, nullptr).ok());
  ASSERT_TRUE(a->PutNode({{"name", "n1"}, {"cpu", "16"}, {"memory", "64Gi"}, {"simulated", true}}, nullptr).ok());
  auto first = a->Submit(Job("first"), false, "first.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  a->WaitForCycle();
  // a's loop decided, under its token
  EXPECT_EQ(WorkloadViewJson(*a->GetWorkload("first"))["state"], "Admitted");

  clock_.Advance(6s);  // a stopped renewing; b takes over
  const int64_t b_token = Take("b");
  EXPECT_EQ(b_token, 2);
  auto late = a->Submit(Job("late"), false, "late.yaml", nullptr, {}, false, nullptr);
  ASSERT_FALSE(late.ok());
  // Refused as a write to retry on the leader (HTTP 503), naming the fence.
  EXPECT_EQ(late.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(late.status().message().find("fenced"), std::string::npos) << late.status().message();
  EXPECT_EQ(a->Cancel("first", "test", {}, nullptr).status().code(), StatusCode::kUnavailable);
  auto config = a->Apply("kind: Tenant\nname: other\n", false, "other.yaml", nullptr, {}, false, nullptr);
  EXPECT_EQ(config.status().code(), StatusCode::kUnavailable);
  a->StopLoop();
  a->Shutdown();

  auto b = OpenLeader(b_token);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(WorkloadViewJson(*b->GetWorkload("first"))["state"], "Admitted");
  EXPECT_FALSE(b->GetWorkload("late").ok());
  EXPECT_FALSE(b->GetConfig("tenant", "other").ok());
  auto next = b->Submit(Job("next"), false, "next.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  b->WaitForCycle();
  EXPECT_EQ(WorkloadViewJson(*b->GetWorkload("next"))["state"], "Admitted");  // b schedules
}

}  // namespace
}  // namespace abacus::server
