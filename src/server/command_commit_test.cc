// A command's write path on the loop (issue 22.3: no synchronous fsync on the loop). Cancel,
// scale, apply, node and queue changes, updates and temporary quota decisions make a working copy, hand its batch to the committer and
// let the loop go on; the caller is answered once the commit settled. So two commands queued
// together reach the disk together, no reader sees a command's change before it is durable, and a
// commit that fails changes nothing and still answers its caller.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "common/test_eventually.h"
#include "server/control_plane_fixture.h"
#include "server/idempotency.h"
#include "server/server_test_util.h"
#include "store/store.h"
#include "store/store_test_util.h"

namespace abacus::server {
namespace {

using nlohmann::json;

// The events of type `type` in `batches` (the committer merges a group's batches into one).
int WithEvent(std::span<const WriteBatch* const> batches, const std::string& type) {
  int n = 0;
  for (const WriteBatch* b : batches) {
    for (const WriteOp& op : b->ops()) {
      if (const auto* ev = std::get_if<EventOp>(&op); ev != nullptr && ev->type == type) ++n;
    }
  }
  return n;
}

// The registrations in `batches` of agent nodes named "late-…" (registered by a test, not by
// the fixture's set-up).
int LateRegistrations(std::span<const WriteBatch* const> batches) {
  int n = 0;
  for (const WriteBatch* b : batches) {
    for (const WriteOp& op : b->ops()) {
      if (const auto* ev = std::get_if<EventOp>(&op);
          ev != nullptr && ev->type == "Registered" && ev->object_key.rfind("late-", 0) == 0) {
        ++n;
      }
    }
  }
  return n;
}

// Two gates on the store: the outer one holds drains (a command that waits for its commit on
// the loop, so the test can keep the loop busy while it queues commands), the inner one holds
// cancels, cordons, updates, temporary quota grants, late registrations, NotReady marks,
// heartbeats' node changes and requeues, and counts each that reached it.
class CommandCommitTest : public testing_cp::ControlPlaneFixture {
 protected:
  void SetUp() override {
    ControlPlaneFixture::SetUp();
    Open([this](ControlPlaneOptions& o) {
      o.wrap_store = [this](std::unique_ptr<Store> inner) {
        auto gate = std::make_unique<testing_util::GatedStore>(
            std::move(inner), [this](std::span<const WriteBatch* const> batches) {
              const int cancels = WithEvent(batches, "Cancelled");
              cancels_at_disk_.fetch_add(cancels);
              updates_at_disk_.fetch_add(WithEvent(batches, "Updated"));
              registrations_at_disk_.fetch_add(LateRegistrations(batches));
              const int lost = WithEvent(batches, "NotReady");
              lost_at_disk_.fetch_add(lost);
              const int back = WithEvent(batches, "DevicesChanged");
              back_at_disk_.fetch_add(back);
              const int requeued = WithEvent(batches, "Requeued");
              requeued_at_disk_.fetch_add(requeued);
              return cancels > 0 || WithEvent(batches, "Cordoned") > 0 || WithEvent(batches, "Updated") > 0 ||
                     WithEvent(batches, "TemporaryQuotaApproved") > 0 || LateRegistrations(batches) > 0 ||
                     lost > 0 || back > 0 || requeued > 0;
            });
        gate_ = gate.get();
        auto drains = std::make_unique<testing_util::GatedStore>(
            std::move(gate), [](std::span<const WriteBatch* const> batches) {
              return WithEvent(batches, "DrainStarted") > 0;
            });
        drain_gate_ = drains.get();
        return std::unique_ptr<Store>(std::move(drains));
      };
    });
    ApplyOrg(testing_org::AcmeOrg("train", 4));
    ASSERT_TRUE(cp_->RegisterAgent(testing_cp::A100Node("gpu-a", 4), nullptr).ok());
    ASSERT_TRUE(cp_->RegisterAgent(testing_cp::A100Node("spare", 0), nullptr).ok());  // no GPU: runs none of them
  }
  // Submits a one-GPU job and returns its id once a cycle admitted it (later cycles write
  // nothing of it: only the commands of a test do).
  std::string Admitted(const std::string& name) {
    auto r = cp_->Submit(testing_cp::A100Job(name, 1), false, "job.yaml", nullptr, {}, false, nullptr);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return "";
    cp_->WaitForCycle();
    const std::string id = r->answer.submitted[0].id;
    EXPECT_EQ(State(id), "Admitted");
    return id;
  }
  // Keeps the loop busy in a drain of the spare node whose commit the drain gate holds; returns
  // the drain's answer, once the gate opens.
  std::future<Status> BusyLoop() {
    drain_gate_->Close();
    auto drain = std::async(std::launch::async, [this] {
      DrainOrder order;
      order.by = "test";
      order.grace = std::chrono::seconds(60);
      return cp_->DrainNode("spare", order, nullptr).status();
    });
    drain_gate_->WaitForArrivals(1);
    return drain;
  }
  // Commands waiting for the loop (abacus_loop_inbox_commands).
  int64_t CommandsWaiting() { return Metric("abacus_loop_inbox_commands"); }
  int64_t Metric(const std::string& name) {
    const std::string metrics = cp_->RenderMetrics();
    const size_t at = metrics.find("\n" + name + " ");
    return at == std::string::npos ? -1 : std::stoll(metrics.substr(at + name.size() + 2));
  }
  std::future<Result<Keyed<WorkloadView>>> CancelLater(const std::string& id, const IdempotentRequest& request = {}) {
    return std::async(std::launch::async, [this, id, request] { return cp_->Cancel(id, "test", request, nullptr); });
  }

  testing_util::GatedStore* gate_ = nullptr;        // the commands' and checks' commits above
  testing_util::GatedStore* drain_gate_ = nullptr;  // holds drains
  std::atomic<int> cancels_at_disk_{0};              // cancels that reached the inner gate
  std::atomic<int> updates_at_disk_{0};              // updates that reached it
  std::atomic<int> registrations_at_disk_{0};        // late registrations that reached it
  std::atomic<int> lost_at_disk_{0};                 // NotReady marks that reached it
  std::atomic<int> back_at_disk_{0};                 // heartbeats' node changes that reached it
  std::atomic<int> requeued_at_disk_{0};             // requeues that reached it
};

// Three cancels the loop takes in one turn are all handed to the committer before the first is
// on disk: the loop does not sit in a command's commit. Before the change it ran the first
// cancel's commit itself and the other two reached the committer only after the disk answered
// (one cancel at the disk, none queued, while the gate is closed).
TEST_F(CommandCommitTest, CommandsTakenTogetherReachTheDiskTogether) {
  const std::string a = Admitted("a"), b = Admitted("b"), c = Admitted("c");
  std::future<Status> drain = BusyLoop();
  gate_->Close();
  auto cancel_a = CancelLater(a);
  auto cancel_b = CancelLater(b);
  auto cancel_c = CancelLater(c);
  ASSERT_TRUE(Eventually([&] { return CommandsWaiting() == 3; })) << CommandsWaiting();
  drain_gate_->Open();  // the loop takes the three cancels in its next turn
  ASSERT_TRUE(drain.get().ok());
  Committer& committer = cp_->governance().committer();
  EXPECT_TRUE(Eventually([&] { return cancels_at_disk_.load() + static_cast<int>(committer.queued()) >= 3; }))
      << "cancels at the disk: " << cancels_at_disk_.load() << ", queued: " << committer.queued()
      << ", commands waiting: " << CommandsWaiting() << ", loop commits: " << Metric("abacus_loop_commits_total")
      << ", waited: " << Metric("abacus_loop_commit_waits_total") << ", states: " << State(a) << " " << State(b)
      << " " << State(c);
  // None of them is visible before it is durable, and no caller is answered.
  for (const std::string& id : {a, b, c}) {
    json during = WorkloadJson(id);
    EXPECT_NE(during["state"], "Cancelled") << during.dump();
    EXPECT_EQ(during.value("message", ""), "") << during.dump();
  }
  EXPECT_EQ(cancel_a.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  gate_->Open();
  for (auto* f : {&cancel_a, &cancel_b, &cancel_c}) {
    auto answer = f->get();
    EXPECT_TRUE(answer.ok()) << answer.status().ToString();
  }
  for (const std::string& id : {a, b, c}) EXPECT_EQ(State(id), "Cancelled");
  EXPECT_EQ(WorkloadJson(a)["message"], "cancelled: test");
}

// A repeat of a keyed cancel taken in the same turn as its first request, while that request's
// commit is still on its way to the disk, waits for it and answers with the first answer.
// Without settling the key's commit first it looked the key up before it was stored, ran the
// cancel again and answered 409 (the workload was already Cancelled).
TEST_F(CommandCommitTest, ARepeatBehindItsFirstRequestInFlightGetsTheFirstAnswer) {
  const std::string id = Admitted("keyed");
  const IdempotentRequest request =
      DescribeRequest("alice", "cancel-1", "POST", "/api/v1/workloads/" + id + "/cancel", {}, "");
  std::future<Status> drain = BusyLoop();
  gate_->Close();
  auto first = CancelLater(id, request);
  ASSERT_TRUE(Eventually([&] { return CommandsWaiting() == 1; }));
  auto repeat = CancelLater(id, request);
  ASSERT_TRUE(Eventually([&] { return CommandsWaiting() == 2; }));
  drain_gate_->Open();
  ASSERT_TRUE(drain.get().ok());
  gate_->WaitForArrivals(1);  // the first request's commit is at the disk
  gate_->Open();
  auto a = first.get();
  auto b = repeat.get();
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_TRUE(a->encoded.has_value());
  ASSERT_TRUE(b->encoded.has_value());
  EXPECT_EQ(*a->encoded, *b->encoded);
  EXPECT_EQ(State(id), "Cancelled");
}

// A command whose commit fails answers its caller with the error and leaves the record as it was
// committed; the loop goes on, and the same command succeeds once the store takes writes again.
TEST_F(CommandCommitTest, AFailedCancelAnswersAndChangesNothing) {
  const std::string id = Admitted("refused");
  gate_->Fail(true);
  Status refused = cp_->Cancel(id, "test", {}, nullptr).status();
  EXPECT_FALSE(refused.ok());
  json after = WorkloadJson(id);
  EXPECT_EQ(after["state"], "Admitted") << after.dump();
  EXPECT_EQ(after.value("message", ""), "") << after.dump();
  gate_->Fail(false);
  cp_->WaitForCycle();  // the loop still turns
  auto cancelled = cp_->Cancel(id, "test", {}, nullptr);
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
  EXPECT_EQ(State(id), "Cancelled");
}

// A node change answers once committed, with the node as committed: a cordon held at the disk is
// not visible, and its answer (read after the commit settled) shows the node cordoned.
TEST_F(CommandCommitTest, ACordonAnswersOnceCommitted) {
  gate_->Close();
  auto cordon = std::async(std::launch::async, [this] { return cp_->CordonNode("gpu-a", true, "ops", "test", nullptr); });
  gate_->WaitForArrivals(1);
  auto during = cp_->GetNode("gpu-a");
  ASSERT_TRUE(during.ok());
  EXPECT_EQ(cordon.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  gate_->Open();
  auto answered = cordon.get();
  ASSERT_TRUE(answered.ok()) << answered.status().ToString();
  auto after = cp_->GetNode("gpu-a");
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(during->record.cordon.state, NodeState::kReady);
  EXPECT_EQ(after->record.cordon.state, NodeState::kCordoned);
}

// An update (PATCH) starts its commit and lets the loop go on: with a cancel taken in the same
// turn, both reach the committer before the update is on disk, and neither change is visible
// before it is durable. Before, the loop sat in the update's commit and took the cancel only
// once the disk answered (the update at the disk, the cancel not even queued).
TEST_F(CommandCommitTest, AnUpdateLetsTheLoopGoOnWhileItCommits) {
  const std::string a = Admitted("a"), b = Admitted("b");
  std::future<Status> drain = BusyLoop();
  gate_->Close();
  auto update = std::async(std::launch::async, [this, a] {
    return cp_->UpdateWorkload(a, R"({"labels": {"team": "blue"}})", /*json_body=*/true, /*merge_patch=*/true, -1,
                               nullptr, nullptr, false, nullptr);
  });
  ASSERT_TRUE(Eventually([&] { return CommandsWaiting() == 1; })) << CommandsWaiting();
  auto cancel_b = CancelLater(b);
  ASSERT_TRUE(Eventually([&] { return CommandsWaiting() == 2; })) << CommandsWaiting();
  drain_gate_->Open();  // the loop takes the update and the cancel in its next turn
  ASSERT_TRUE(drain.get().ok());
  Committer& committer = cp_->governance().committer();
  EXPECT_TRUE(Eventually([&] {
    return updates_at_disk_.load() + cancels_at_disk_.load() + static_cast<int>(committer.queued()) >= 2;
  })) << "updates at the disk: " << updates_at_disk_.load() << ", cancels: " << cancels_at_disk_.load()
      << ", queued: " << committer.queued() << ", commands waiting: " << CommandsWaiting();
  EXPECT_EQ(cp_->GetWorkload(a)->record.spec.labels.count("team"), 0u);
  EXPECT_NE(State(b), "Cancelled");
  EXPECT_EQ(update.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  gate_->Open();
  auto updated = update.get();
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ(cp_->GetWorkload(a)->record.spec.labels["team"], "blue");
  auto cancelled = cancel_b.get();
  ASSERT_TRUE(cancelled.ok()) << cancelled.status().ToString();
  EXPECT_EQ(State(b), "Cancelled");
}

// An admin's answer to a temporary quota request and the grant the experiment's controller makes
// of it commit together: when that commit fails, the admin gets the error and nothing changed,
// so the same answer can be given again. Before, the answer committed alone and the grant in a
// second commit: the admin was told OK, the answer stayed stored without its grant, and a second
// answer was refused as "already approved".
TEST_F(CommandCommitTest, ATemporaryQuotaAnswerCommitsWithItsGrantOrNotAtAll) {
  ASSERT_TRUE(cp_->RegisterAgent(testing_cp::A100Node("gpu-b", 1), nullptr).ok());  // room for the experiment
  ASSERT_FALSE(Admitted("full").empty());
  auto full = cp_->Submit(testing_cp::A100Job("full3", 3), false, "job.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(full.ok()) << full.status().ToString();  // the queue's 4 GPUs are taken
  auto r = cp_->Submit("kind: Experiment\nname: nb\nproject: acme/ml\nqueue: train\nspec:\n"
                       "  command: [\"jupyter\"]\n"
                       "  temporaryQuota: {resource: gpu/nvidia/A100-80G, amount: 1, expires: 1h}\n"
                       "  taskGroups:\n    - name: nb\n"
                       "      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: 1}}\n",
                       false, "nb.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  clock_.Advance(std::chrono::seconds(2));  // the controller's tick asks for the quota
  cp_->WaitForCycle();
  cp_->WaitForCycle();
  ASSERT_EQ(State(id), "Pending");
  gate_->Fail(true);
  Status refused = cp_->DecideTemporaryQuota(id, true, "tia", nullptr).status();
  EXPECT_FALSE(refused.ok());
  EXPECT_FALSE(WorkloadJson(id).contains("quotaDecision")) << WorkloadJson(id).dump();
  gate_->Fail(false);
  auto approved = cp_->DecideTemporaryQuota(id, true, "tia", nullptr);
  ASSERT_TRUE(approved.ok()) << approved.status().ToString();
  EXPECT_EQ(WorkloadJson(id)["quotaDecision"]["by"], "tia") << WorkloadJson(id).dump();
  json events = *WorkloadEventsJson(cp_->Events(id));
  int grants = 0;
  for (const auto& e : events["items"]) grants += e["type"] == "TemporaryQuotaApproved" ? 1 : 0;
  EXPECT_EQ(grants, 1) << events.dump();
  cp_->WaitForCycle();
  EXPECT_EQ(State(id), "Admitted");
  EXPECT_EQ(WorkloadJson(id)["quotaGrants"].size(), 1u) << WorkloadJson(id).dump();
}

// Agents registering together reach the disk together: registrations the loop takes in one turn
// are all handed to the committer before the first is on disk, and neither node is visible, nor
// its credential answered, before it is durable. Before, the loop sat in each registration's
// commit (a fleet's restart registered its agents one fsync after another): one at the disk,
// the other not yet taken.
TEST_F(CommandCommitTest, AgentsRegisteringTogetherReachTheDiskTogether) {
  std::future<Status> drain = BusyLoop();
  gate_->Close();
  auto first = std::async(std::launch::async, [this] {
    return cp_->RegisterAgent(testing_cp::A100Node("late-1", 2), nullptr);
  });
  ASSERT_TRUE(Eventually([&] { return CommandsWaiting() == 1; })) << CommandsWaiting();
  auto second = std::async(std::launch::async, [this] {
    return cp_->RegisterAgent(testing_cp::A100Node("late-2", 2), nullptr);
  });
  ASSERT_TRUE(Eventually([&] { return CommandsWaiting() == 2; })) << CommandsWaiting();
  drain_gate_->Open();  // the loop takes both registrations in its next turn
  ASSERT_TRUE(drain.get().ok());
  Committer& committer = cp_->governance().committer();
  EXPECT_TRUE(Eventually([&] { return registrations_at_disk_.load() + static_cast<int>(committer.queued()) >= 2; }))
      << "registrations at the disk: " << registrations_at_disk_.load() << ", queued: " << committer.queued()
      << ", commands waiting: " << CommandsWaiting();
  EXPECT_FALSE(cp_->GetNode("late-1").ok());
  EXPECT_FALSE(cp_->GetNode("late-2").ok());
  EXPECT_EQ(first.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout);
  gate_->Open();
  auto a = first.get();
  auto b = second.get();
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_NE(a->node_token, b->node_token);
  EXPECT_TRUE(cp_->GetNode("late-1").ok());
  EXPECT_TRUE(cp_->GetNode("late-2").ok());
  // The first credential is the node's: registering again without it is refused.
  EXPECT_EQ(cp_->RegisterAgent(testing_cp::A100Node("late-1", 2), nullptr).status().code(),
            StatusCode::kFailedPrecondition);
}

// Nodes lost together (a partition) are marked NotReady together: the liveness check starts every
// silent node's commit before it waits, so all of them reach the committer while the first is
// held at the disk. Before, it committed them one after another: one at the disk, none queued.
TEST_F(CommandCommitTest, NodesLostTogetherAreMarkedNotReadyTogether) {
  for (const char* name : {"late-1", "late-2", "late-3"}) {
    ASSERT_TRUE(cp_->RegisterAgent(testing_cp::A100Node(name, 1), nullptr).ok());
  }
  gate_->Close();
  clock_.Advance(std::chrono::hours(25));  // past the fixture's node timeout: every agent is silent
  Committer& committer = cp_->governance().committer();
  EXPECT_TRUE(Eventually([&] { return lost_at_disk_.load() + static_cast<int>(committer.queued()) >= 5; }))
      << "NotReady at the disk: " << lost_at_disk_.load() << ", queued: " << committer.queued();
  for (const char* name : {"gpu-a", "spare", "late-1", "late-2", "late-3"}) {
    EXPECT_EQ(cp_->GetNode(name)->record.node.state, NodeState::kReady) << name;  // not durable yet
  }
  gate_->Open();
  for (const char* name : {"gpu-a", "spare", "late-1", "late-2", "late-3"}) {
    EXPECT_TRUE(Eventually([&] { return cp_->GetNode(name)->record.node.state == NodeState::kNotReady; })) << name;
  }
}

// Agents heard again together (a partition heals) come back together: heartbeats the loop takes
// in one turn each start their node's commit (NotReady → Ready) before the first is on disk, and
// no node reads Ready before it is durable. Before, the loop sat in each heartbeat's commit: one
// at the disk, the others not yet taken.
TEST_F(CommandCommitTest, NodesHeardAgainTogetherComeBackTogether) {
  const std::vector<std::string> late = {"late-1", "late-2", "late-3"};
  for (const std::string& name : late) {
    ASSERT_TRUE(cp_->RegisterAgent(testing_cp::A100Node(name, 1), nullptr).ok());
  }
  clock_.Advance(std::chrono::hours(25));  // every agent silent past the timeout: NotReady
  for (const std::string& name : late) {
    ASSERT_TRUE(Eventually([&] { return cp_->GetNode(name)->record.node.state == NodeState::kNotReady; })) << name;
  }
  std::future<Status> drain = BusyLoop();
  gate_->Close();
  std::vector<std::future<Status>> beats;
  for (const std::string& name : late) {
    beats.push_back(std::async(std::launch::async, [this, name] { return cp_->AgentHeartbeat(name, json::object()); }));
  }
  ASSERT_TRUE(Eventually([&] { return CommandsWaiting() == 3; })) << CommandsWaiting();
  drain_gate_->Open();  // the loop takes the three heartbeats in its next turn
  ASSERT_TRUE(drain.get().ok());
  Committer& committer = cp_->governance().committer();
  EXPECT_TRUE(Eventually([&] { return back_at_disk_.load() + static_cast<int>(committer.queued()) >= 3; }))
      << "node changes at the disk: " << back_at_disk_.load() << ", queued: " << committer.queued()
      << ", commands waiting: " << CommandsWaiting();
  for (const std::string& name : late) {
    EXPECT_EQ(cp_->GetNode(name)->record.node.state, NodeState::kNotReady) << name;  // not durable yet
  }
  gate_->Open();
  for (auto& beat : beats) EXPECT_TRUE(beat.get().ok());
  for (const std::string& name : late) EXPECT_EQ(cp_->GetNode(name)->record.node.state, NodeState::kReady) << name;
}

// Work preempted together on a simulated node (a drain stops training at once; nothing runs
// there, so each has stopped when its checkpoint grace is over) is requeued together: the loop
// starts every requeue's commit before the first is on disk, and none reads Requeued before it
// is durable. Before, the loop sat in each requeue's commit: one at the disk, none queued.
TEST_F(CommandCommitTest, WorkPreemptedTogetherIsRequeuedTogether) {
  json sim = testing_cp::A100Node("sim-a", 3);
  sim["simulated"] = true;
  ASSERT_TRUE(cp_->PutNode(sim, nullptr).ok());
  ASSERT_TRUE(cp_->CordonNode("gpu-a", true, "test", "", nullptr).ok());  // the jobs land on sim-a
  std::vector<std::string> ids;
  for (const char* name : {"p-1", "p-2", "p-3"}) ids.push_back(Admitted(name));
  gate_->Close();
  DrainOrder order;
  order.by = "test";
  ASSERT_TRUE(cp_->DrainNode("sim-a", order, nullptr).ok());
  Committer& committer = cp_->governance().committer();
  EXPECT_TRUE(Eventually([&] { return requeued_at_disk_.load() + static_cast<int>(committer.queued()) >= 3; }))
      << "requeues at the disk: " << requeued_at_disk_.load() << ", queued: " << committer.queued();
  for (const std::string& id : ids) EXPECT_EQ(State(id), "Preempting") << id;  // not durable yet
  gate_->Open();
  for (const std::string& id : ids) {
    EXPECT_TRUE(Eventually([&] { return State(id) == "Requeued"; })) << id << " is " << State(id);
  }
}

}  // namespace
}  // namespace abacus::server
