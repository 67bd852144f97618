// ControlPlane on a manual clock, without HTTP: incremental scheduling, agent task reports,
// metering (usage intervals committed with the transitions, prices, restart) and node liveness.
// (Metrics and the audit chain: control_plane_metrics_test.cc; the workload kinds' controllers:
// control_plane_workloads_test.cc.)
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <string>
#include <thread>

#include "server/control_plane_test.h"
#include "server/read_views_json.h"

namespace abacus::server {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using testing_cp::AssignmentOf;
using testing_cp::ControlPlaneTest;
using testing_cp::GangJob;
using testing_cp::TaskOf;

std::string Job(const std::string& name, int gpus) { return testing_cp::A100Job(name, gpus); }
json AgentNode(const std::string& name, int gpus) { return testing_cp::A100Node(name, gpus); }

TEST_F(ControlPlaneTest, ParkedWorkloadWaitsUntilCapacityFreesThenIsAdmitted) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  std::string big = Submit("big", 2);
  EXPECT_EQ(State(big), "Admitted");
  std::string next = Submit("next", 1);
  EXPECT_EQ(State(next), "Pending");
  // Later submissions run incremental cycles; the parked one keeps its reason.
  Submit("another", 1);
  EXPECT_EQ(WorkloadViewJson(*cp_->GetWorkload(next))["pendingReason"]["code"], "Quota");
  // The big one finishes: capacity frees and the parked workload is retried at once.
  Report("gpu-a", big + ".0.0.1", {{"phase", "Exited"}, {"exitCode", 0}});
  EXPECT_EQ(State(big), "Succeeded");
  cp_->WaitForCycle();
  EXPECT_EQ(State(next), "Admitted");
}

// A submission's answer means the workload can be read: by id, by name and in the list, at
// every moment after, while the loop moves it from its inbox into the ledger (the loop takes it
// from the inbox inside the state lock readers take, so no read falls in between).
TEST_F(ControlPlaneTest, ASubmittedWorkloadIsReadableFromItsAnswerOn) {
  std::atomic<bool> done{false};
  std::thread hammer([&] {  // shared holders of the state lock, to hold the loop's writer back
    while (!done) {
      WorkloadFilter all;
      cp_->ListWorkloads(all, [](const WorkloadListView&) { std::this_thread::sleep_for(50us); });
    }
  });
  int missing = 0;
  for (int i = 0; i < 300 && missing == 0; ++i) {
    const std::string name = "read-" + std::to_string(i);
    auto r = cp_->Submit(Job(name, 1), false, name + ".yaml", nullptr, {}, false, nullptr);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const std::string id = r->answer.submitted[0].id;
    for (int k = 0; k < 20; ++k) {
      if (!cp_->GetWorkload(id).ok()) ++missing;
      auto resolved = cp_->ResolveWorkload(name, nullptr);
      if (!resolved.ok() || *resolved != id) ++missing;
      WorkloadFilter named;
      named.name = name;
      size_t found = 0;
      cp_->ListWorkloads(named, [&](const WorkloadListView& v) { found = v.items.size(); });
      if (found != 1) ++missing;
    }
  }
  done = true;
  hammer.join();
  EXPECT_EQ(missing, 0);
}

// Incremental cycles read the workloads holding quota from an index (Ledger::NoteHolder, loads,
// full scans) rather than scanning the ledger: one admitted in an earlier cycle, or loaded at a
// restart, still counts against the quota of the fresh ones.
TEST_F(ControlPlaneTest, IncrementalCyclesCountEveryHolderAcrossCyclesAndRestarts) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  std::string first = Submit("first", 1);
  ASSERT_EQ(State(first), "Admitted");
  std::string second = Submit("second", 1);
  ASSERT_EQ(State(second), "Admitted");
  std::string third = Submit("third", 1);  // the queue's 2 GPUs are held by the two above
  EXPECT_EQ(State(third), "Pending");
  cp_.reset();
  Open();
  cp_->WaitForCycle();
  std::string fourth = Submit("fourth", 1);
  EXPECT_EQ(State(fourth), "Pending");
  EXPECT_EQ(State(third), "Pending");
  EXPECT_EQ(State(first), "Admitted");
  EXPECT_EQ(State(second), "Admitted");
  // One finishes: exactly one of the waiting ones takes its place.
  Report("gpu-a", first + ".0.0.1", {{"phase", "Exited"}, {"exitCode", 0}});
  cp_->WaitForCycle();
  EXPECT_EQ(State(first), "Succeeded");
  EXPECT_EQ(State(third), "Admitted");
  Submit("fifth", 1);
  EXPECT_EQ(State(fourth), "Pending");
}

TEST_F(ControlPlaneTest, UsageIsMeteredFromAdmissionToReleaseAndPricedOverTime) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  std::string id = Submit("ft", 2);
  ASSERT_EQ(State(id), "Admitted");
  clock_.Advance(1h);
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  EXPECT_EQ(State(id), "Running");
  clock_.Advance(2h);  // 03:00
  Report("gpu-a", id + ".0.0.1", {{"phase", "Exited"}, {"exitCode", 0}});
  EXPECT_EQ(State(id), "Succeeded");
  json usage = Usage("tenant");
  ASSERT_EQ(usage["rows"].size(), 1u) << usage.dump();
  json row = usage["rows"][0];
  EXPECT_EQ(row["tenant"], "acme");
  EXPECT_DOUBLE_EQ(row["deviceHours"].get<double>(), 6.0) << row.dump();
  // 00:00-02:00 at 2/h and 02:00-03:00 at 3/h, for 2 GPUs.
  EXPECT_DOUBLE_EQ(row["cost"].get<double>(), 2 * (2 * 2.0 + 1 * 3.0)) << row.dump();
  EXPECT_EQ(usage["currency"], "USD");  // of the price list the report used
  // By hour: 2 device-hours in each of the three hours, the third at the later price.
  json hours = Usage("flavor,hour");
  ASSERT_EQ(hours["rows"].size(), 3u) << hours.dump();
  EXPECT_EQ(hours["rows"][0]["period"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(hours["rows"][2]["period"], "2026-01-01T02:00:00Z");
  for (const auto& r : hours["rows"]) EXPECT_DOUBLE_EQ(r["deviceHours"].get<double>(), 2.0) << r.dump();
  EXPECT_DOUBLE_EQ(hours["rows"][2]["cost"].get<double>(), 6.0);
}

TEST_F(ControlPlaneTest, RestartKeepsOneOpenIntervalPerHeldAllocation) {
  auto registered = cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr);
  ASSERT_TRUE(registered.ok());
  std::string id = Submit("long", 1);
  ASSERT_EQ(State(id), "Admitted");
  clock_.Advance(1h);
  cp_.reset();  // a stop at any point: usage was committed with the admission
  Open();
  EXPECT_EQ(State(id), "Admitted");
  clock_.Advance(1h);
  json again = AgentNode("gpu-a", 2);
  again["credential"] = registered->node_token;  // the agent proves it is the node
  ASSERT_TRUE(cp_->RegisterAgent(again, nullptr).ok());
  Report("gpu-a", id + ".0.0.1", {{"phase", "Exited"}, {"exitCode", 0}});
  json usage = Usage("workload");
  ASSERT_EQ(usage["rows"].size(), 1u) << usage.dump();
  EXPECT_DOUBLE_EQ(usage["rows"][0]["deviceHours"].get<double>(), 2.0) << usage.dump();  // counted once
}

TEST_F(ControlPlaneTest, SilentAgentNodeIsLostOnTheClockAndItsWorkRequeued) {
  cp_.reset();
  Open(30s);
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  std::string id = Submit("job", 1);
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  clock_.Advance(31s);
  cp_->WaitForCycle();
  cp_->WaitForCycle();
  json node = NodeJson(*cp_->GetNode("gpu-a"));
  EXPECT_EQ(node["state"], "NotReady");
  EXPECT_EQ(node["notReadySinceUs"], ToMicros(clock_.Now()));
  // Issue 20.9: its agent, cut off as long, is fencing the task (TrainingJob: 30 s by default);
  // the work stays where it is until then.
  EXPECT_EQ(State(id), "Running");
  clock_.Advance(29s);
  cp_->WaitForCycle();
  cp_->WaitForCycle();
  EXPECT_EQ(State(id), "Running");
  clock_.Advance(2s);  // NotReady + 30 s has passed
  cp_->WaitForCycle();
  cp_->WaitForCycle();
  EXPECT_EQ(State(id), "Requeued");
  auto events = (*WorkloadEventsJson(cp_->Events(id)))["items"];
  EXPECT_EQ(events.back()["details"]["reason"], "NodeLost") << events.dump();
  // Its usage ended with the loss: 31 s silent + 31 s of fencing.
  json usage = Usage("workload");
  EXPECT_NEAR(usage["rows"][0]["deviceHours"].get<double>(), 62.0 / 3600, 0.0005) << usage.dump();
}

// Issue 22.2: metering ends a requeued workload's usage by the Requeue decision's typed reason,
// not by words in its message. A task lost with its node ("NodeLost") whose message says nothing
// of a loss was metered as "Preempted" (the message did not contain " lost: ").
TEST_F(ControlPlaneTest, UsageEndsByTheRequeuesReasonNotItsMessage) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  std::string id = Submit("lost", 1);
  ASSERT_EQ(State(id), "Admitted");
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  clock_.Advance(60s);
  Report("gpu-a", id + ".0.0.1", {{"phase", "Lost"}, {"lostReason", "NodeLost"}, {"message", "connection reset"}});
  // Requeued without using a retry, and admitted again at once (the node is still Ready).
  const json events = *WorkloadEventsJson(cp_->Events(id));
  bool requeued = false;
  for (const auto& e : events["items"]) requeued |= e["type"] == "Requeued";
  ASSERT_TRUE(requeued) << events.dump();
  json usage = Usage("reason");
  std::set<std::string> reasons;
  for (const auto& row : usage["rows"]) reasons.insert(row.value("reason", ""));
  EXPECT_TRUE(reasons.count("NodeLost")) << usage.dump();
  EXPECT_FALSE(reasons.count("Preempted")) << usage.dump();
}

TEST_F(ControlPlaneTest, GangFailureStopsTheOthersThenRetriesAfterBackoffWithResume) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  auto r = cp_->Submit(GangJob("gang", "  checkpoint: {signal: SIGUSR1, graceSeconds: 60}\n"
                                       "  restartPolicy: {maxRetries: 1, backoffSeconds: 10}\n"),
                       false, "gang.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  Report("gpu-a", id + ".0.1.1", {{"phase", "Running"}});
  // One task fails: the controller stops its gang mate with the checkpoint signal and grace.
  Report("gpu-a", id + ".0.0.1", {{"phase", "Exited"}, {"exitCode", 3}, {"message", "exited 3"}});
  json mate = TaskOf(AssignmentOf(*cp_, "gpu-a"), id + ".0.1.1");
  ASSERT_FALSE(mate.is_null());
  EXPECT_EQ(mate["action"], "stop");
  EXPECT_EQ(mate["stopSignal"], "SIGUSR1");
  EXPECT_EQ(mate["graceSeconds"], 60);
  EXPECT_EQ(State(id), "Running");
  // The mate stops: the attempt is requeued with a retry used, not before the 10 s backoff.
  Report("gpu-a", id + ".0.1.1", {{"phase", "Exited"}, {"signal", 10}, {"stopped", true}});
  EXPECT_EQ(State(id), "Requeued");
  cp_->WaitForCycle();
  EXPECT_EQ(State(id), "Requeued");
  json reason = WorkloadViewJson(*cp_->GetWorkload(id))["pendingReason"];
  EXPECT_NE(reason["message"].get<std::string>().find("backoff"), std::string::npos);
  clock_.Advance(11s);
  cp_->WaitForCycle();
  cp_->WaitForCycle();
  json w = WorkloadViewJson(*cp_->GetWorkload(id));
  EXPECT_EQ(w["state"], "Admitted") << w.dump();
  EXPECT_EQ(w["failures"], 1);
  json next = TaskOf(AssignmentOf(*cp_, "gpu-a"), id + ".0.0.2");
  ASSERT_FALSE(next.is_null());
  EXPECT_EQ(next["env"]["ABACUS_RESUME"], "1");
  EXPECT_EQ(next["env"]["ABACUS_ATTEMPT"], "2");
}

TEST_F(ControlPlaneTest, MaxRuntimeStopsTheJobAndFailsIt) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  auto r = cp_->Submit(GangJob("capped", "  maxRuntime: 1h\n"), false, "capped.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  Report("gpu-a", id + ".0.1.1", {{"phase", "Running"}});
  clock_.Advance(61min);
  cp_->WaitForCycle();  // the controller tick
  cp_->WaitForCycle();
  json a = AssignmentOf(*cp_, "gpu-a");
  EXPECT_EQ(TaskOf(a, id + ".0.0.1")["action"], "stop") << a.dump();
  Report("gpu-a", id + ".0.0.1", {{"phase", "Exited"}, {"signal", 15}, {"stopped", true}});
  Report("gpu-a", id + ".0.1.1", {{"phase", "Exited"}, {"signal", 15}, {"stopped", true}});
  json w = WorkloadViewJson(*cp_->GetWorkload(id));
  EXPECT_EQ(w["state"], "Failed") << w.dump();
  EXPECT_EQ(w["failureReason"], "MaxRuntimeExceeded");
}

// Issue 20.12: a parked gang's node holds persist across the incremental cycles that later
// submissions run (before, those cycles left the gang out, so nothing was held: a 1-GPU job of
// equal priority took a held node while explain still said the nodes were held).
TEST_F(ControlPlaneTest, AParkedGangKeepsItsNodeHoldsAcrossIncrementalCycles) {
  ASSERT_TRUE(cp_->Apply(testing_org::AcmeOrg("wide", 16), false, "wide.yaml", nullptr, {}, false, nullptr).ok());
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 4), nullptr).ok());
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-b", 4), nullptr).ok());
  cp_->WaitForCycle();
  auto submit = [&](const std::string& name, int replicas, int gpus) {
    std::string yaml = "kind: TrainingJob\nname: " + name +
                       "\nproject: acme/ml\nqueue: wide\nspec:\n  command: [\"true\"]\n  taskGroups:\n    - name: w\n"
                       "      replicas: " + std::to_string(replicas) +
                       "\n      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: " +
                       std::to_string(gpus) + "}}\n";
    auto r = cp_->Submit(yaml, false, name + ".yaml", nullptr, {}, false, nullptr);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    cp_->WaitForCycle();
    return r.ok() ? r->answer.submitted[0].id : "";
  };
  std::string filler = submit("filler", 1, 1);
  ASSERT_EQ(State(filler), "Admitted");
  const std::string filler_node = WorkloadViewJson(*cp_->GetWorkload(filler))["placements"][0]["node"];
  // 2 × 4 GPUs: 7 of 8 free, so the gang waits and holds both nodes.
  std::string gang = submit("gang", 2, 4);
  ASSERT_EQ(State(gang), "Pending");
  json reason = WorkloadViewJson(*cp_->GetWorkload(gang))["pendingReason"];
  EXPECT_NE(reason.value("message", "").find("holding 2 node(s)"), std::string::npos) << reason.dump();
  // A later 1-GPU job of equal priority, in an incremental cycle: the held nodes stay held.
  std::string small = submit("small", 1, 1);
  EXPECT_EQ(State(small), "Pending") << WorkloadViewJson(*cp_->GetWorkload(small)).dump();
  EXPECT_EQ(WorkloadViewJson(*cp_->GetWorkload(small))["pendingReason"].value("code", ""), "ReservedForGang")
      << WorkloadViewJson(*cp_->GetWorkload(small)).dump();
  json gang_reason = WorkloadViewJson(*cp_->GetWorkload(gang))["pendingReason"];
  EXPECT_NE(gang_reason.value("message", "").find("holding 2 node(s)"), std::string::npos);
  // The filler ends: the gang starts on what it held.
  Report(filler_node, filler + ".0.0.1", {{"phase", "Exited"}, {"exitCode", 0}});
  cp_->WaitForCycle();
  EXPECT_EQ(State(gang), "Admitted");
  EXPECT_EQ(State(small), "Pending");
}

}  // namespace
}  // namespace abacus::server
