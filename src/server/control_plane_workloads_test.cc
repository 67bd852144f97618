// ControlPlane on a manual clock: the workload kinds' controllers end to end — experiments (TTL,
// idle reclaim, temporary quota), clusters, data mounts, batch arrays, inference scaling and
// restarts, and a node's re-registration with its credential.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "meter/usage_ledger.h"
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

std::string ExperimentYaml(const std::string& name, const std::string& extra) {
  return "kind: Experiment\nname: " + name +
         "\nproject: acme/ml\nqueue: train\nspec:\n  command: [\"jupyter\"]\n" + extra +
         "  taskGroups:\n    - name: nb\n"
         "      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: 1}}\n";
}

TEST_F(ControlPlaneTest, ExperimentPastItsTtlIsStoppedAndCancelled) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  auto r = cp_->Submit(ExperimentYaml("nb", "  ttl: 1h\n"), false, "nb.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  ASSERT_EQ(State(id), "Running");
  clock_.Advance(61min);
  ASSERT_TRUE(cp_->AgentHeartbeat("gpu-a", json::object()).ok());  // the node stays alive
  cp_->WaitForCycle();
  cp_->WaitForCycle();
  json a = AssignmentOf(*cp_, "gpu-a");
  EXPECT_EQ(TaskOf(a, id + ".0.0.1")["action"], "stop") << a.dump();
  Report("gpu-a", id + ".0.0.1", {{"phase", "Exited"}, {"signal", 15}, {"stopped", true}});
  EXPECT_EQ(State(id), "Cancelled");
  auto events = (*WorkloadEventsJson(cp_->Events(id)))["items"];
  bool ttl = false;
  for (const auto& e : events) ttl |= e["type"] == "Cancelled" && e["details"].value("reason", "") == "TTLExpired";
  EXPECT_TRUE(ttl) << events.dump();
}

TEST_F(ControlPlaneTest, IdleExperimentGetsANoticeThenIsReclaimed) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  auto r = cp_->Submit(
      ExperimentYaml("idle-nb", "  idle: {utilizationBelowPercent: 5, windowSeconds: 600, noticeSeconds: 300}\n"),
      false, "idle.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  int device = WorkloadViewJson(*cp_->GetWorkload(id))["placements"][0]["devices"][0]["index"];
  // Its device stays at 1% for the window: a notice, then (still idle) the reclaim.
  for (int minute = 0; minute <= 16; ++minute) {
    ASSERT_TRUE(cp_->AgentHeartbeat("gpu-a", json{{"devices", {{{"index", device}, {"utilization", 0.01}}}}}).ok());
    cp_->WaitForCycle();
    clock_.Advance(1min);
  }
  cp_->WaitForCycle();
  std::vector<std::string> types;
  json events = (*WorkloadEventsJson(cp_->Events(id)))["items"];
  for (const auto& e : events) types.push_back(e["type"]);
  EXPECT_NE(std::find(types.begin(), types.end(), "IdleNotice"), types.end()) << ::testing::PrintToString(types);
  json a = AssignmentOf(*cp_, "gpu-a");
  EXPECT_EQ(TaskOf(a, id + ".0.0.1")["action"], "stop") << a.dump();
}

constexpr char kTemporaryQuota[] = "  temporaryQuota: {resource: gpu/nvidia/A100-80G, amount: 1, expires: 1h}\n";

std::vector<std::string> TypesOf(ControlPlane& cp, const std::string& id) {
  std::vector<std::string> types;
  // Held: a range-for over the temporary Result would dangle.
  json events = *WorkloadEventsJson(cp.Events(id));
  for (const auto& e : events["items"]) types.push_back(e["type"]);
  return types;
}

bool Has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// A task lost with its agent ends at that agent's last call as this server heard it; when both
// the server and the agent restarted, the server never heard the old agent, and its stored
// heartbeat (the registration, hours before) would bill a two-hour run as nothing: such a task
// ends at the registration, as before.
TEST_F(ControlPlaneTest, ATaskLostWhileServerAndAgentBothRestartedIsBilledUntilTheRegistration) {
  auto reg = cp_->RegisterAgent(AgentNode("gpu-a", 1), nullptr);
  ASSERT_TRUE(reg.ok()) << reg.status().ToString();
  const Time admitted = clock_.Now();
  std::string id = Submit("long", 1);
  ASSERT_EQ(State(id), "Admitted");
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  clock_.Advance(2h);  // it runs; then the machine and the server go down together
  cp_.reset();
  Open();
  json again = AgentNode("gpu-a", 1);
  again["credential"] = reg->node_token;
  again["tasks"] = json::array({{{"taskId", id + ".0.0.1"}, {"phase", "Lost"}}});
  ASSERT_TRUE(cp_->RegisterAgent(again, nullptr).ok());
  cp_->WaitForCycle();
  auto usage = meter::ReadUsage(cp_->store(), FromMicros(0), clock_.Now() + 24h);
  ASSERT_TRUE(usage.ok()) << usage.status().ToString();
  bool closed = false;
  for (const auto& iv : *usage) {
    if (iv.task_id != id + ".0.0.1" || iv.open()) continue;
    closed = true;
    EXPECT_EQ(*iv.end - iv.start, clock_.Now() - admitted) << "billed " << (ToMicros(*iv.end) - ToMicros(iv.start)) << " us";
  }
  EXPECT_TRUE(closed);
}

TEST_F(ControlPlaneTest, TemporaryQuotaUnderTheTenantLimitIsGrantedThenReclaimedOnExpiry) {
  ASSERT_NO_FATAL_FAILURE(FillTheQueueWithAutoApproveOfOneGpu());
  auto r = cp_->Submit(ExperimentYaml("nb", kTemporaryQuota), false, "nb.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  clock_.Advance(2s);  // the controller tick decides the request
  cp_->WaitForCycle();
  cp_->WaitForCycle();
  auto types = TypesOf(*cp_, id);
  EXPECT_TRUE(Has(types, "TemporaryQuotaApproved")) << ::testing::PrintToString(types);
  ASSERT_EQ(State(id), "Admitted") << (*ExplainJson(cp_->Explain(id))).dump();
  json rec = WorkloadViewJson(*cp_->GetWorkload(id));
  ASSERT_EQ(rec["quotaGrants"].size(), 1u) << rec.dump();
  EXPECT_EQ(rec["quotaGrants"][0]["amount"], "1");
  // The grant is the experiment's alone: another GPU job of the queue still waits on quota.
  std::string more = Submit("more", 1);
  EXPECT_EQ(State(more), "Pending");
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  // An hour after admission the grant expires: the experiment is stopped and cancelled.
  clock_.Advance(61min);
  ASSERT_TRUE(cp_->AgentHeartbeat("gpu-a", json::object()).ok());
  cp_->WaitForCycle();
  cp_->WaitForCycle();
  json a = AssignmentOf(*cp_, "gpu-a");
  EXPECT_EQ(TaskOf(a, id + ".0.0.1")["action"], "stop") << a.dump();
  Report("gpu-a", id + ".0.0.1", {{"phase", "Exited"}, {"signal", 15}, {"stopped", true}});
  EXPECT_EQ(State(id), "Cancelled");
  types = TypesOf(*cp_, id);
  EXPECT_TRUE(Has(types, "TemporaryQuotaExpired")) << ::testing::PrintToString(types);
  EXPECT_TRUE(WorkloadViewJson(*cp_->GetWorkload(id)).value("quotaGrants", json::array()).empty());
  // The reclaim is one of the evidence report's reclaim actions (the probe of 2026-12-07 found
  // only the scheduler's preemptions there).
  EXPECT_EQ(JournalOf("preemptions", id).value("reason", ""), "TemporaryQuotaExpired");
}

// The probe of 2026-12-07: an experiment that fits its queue with the temporary quota it asks
// was warned NeverFits at submit (and admitted a second later). What its grant would cover is
// not "never"; what it would not cover still is.
TEST_F(ControlPlaneTest, AnExperimentThatFitsWithItsTemporaryQuotaIsNotWarnedNeverFits) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 8), nullptr).ok());
  auto warned = [&](const std::string& name, int gpus, const std::string& quota) {
    std::string yaml = ExperimentYaml(name, quota);
    yaml.replace(yaml.find("count: 1"), 8, "count: " + std::to_string(gpus));
    auto r = cp_->Submit(yaml, false, name + ".yaml", nullptr, {}, false, nullptr);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? !r->answer.submitted[0].warnings.empty() : false;
  };
  const std::string one = "  temporaryQuota: {resource: gpu/nvidia/A100-80G, amount: 1, expires: 1h}\n";
  // The queue's nominal is 2 GPUs (no cohort to borrow from).
  EXPECT_TRUE(warned("three-alone", 3, ""));
  EXPECT_FALSE(warned("three-granted", 3, one));
  EXPECT_TRUE(warned("four-granted", 4, one));
}

// The probe of 2026-12-07: a cancelled experiment kept its approved grant (no quota-revoke in
// the audit log, the record still listing it), and a pending request of a cancelled one could
// still be approved. Ending by a cancel gives the grant back as ending by itself does; an ended
// workload's request takes no decision; a user's cancel is no reclaim.
TEST_F(ControlPlaneTest, ACancelledExperimentGivesItsTemporaryQuotaBackAndItsRequestTakesNoDecision) {
  ASSERT_NO_FATAL_FAILURE(FillTheQueueWithAutoApproveOfOneGpu());
  std::vector<std::string> ids;
  for (const auto& [name, quota] : {std::pair{"granted", kTemporaryQuota},
                                    std::pair{"asking", "  temporaryQuota: {resource: gpu/nvidia/A100-80G, amount: 2, "
                                                        "expires: 1h}\n"}}) {
    auto r = cp_->Submit(ExperimentYaml(name, quota), false, std::string(name) + ".yaml", nullptr, {}, false, nullptr);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ids.push_back(r->answer.submitted[0].id);
  }
  cp_->WaitForCycle();
  clock_.Advance(2s);  // the controller tick decides the requests
  cp_->WaitForCycle();
  cp_->WaitForCycle();
  ASSERT_EQ(State(ids[0]), "Admitted");
  ASSERT_TRUE(Has(TypesOf(*cp_, ids[1]), "TemporaryQuotaRequested"));  // above the limit: waits
  for (const std::string& id : ids) ASSERT_TRUE(cp_->Cancel(id, "not needed", {}, nullptr).ok());
  json rec = WorkloadViewJson(*cp_->GetWorkload(ids[0]));
  EXPECT_TRUE(rec.value("quotaGrants", json::array()).empty()) << rec.dump();
  EXPECT_NE(AuditText().find("quota-revoke"), std::string::npos);
  auto approve = cp_->DecideTemporaryQuota(ids[1], true, "tia", nullptr);
  EXPECT_EQ(approve.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(approve.status().message().find("ended with it"), std::string::npos) << approve.status().message();
  EXPECT_FALSE(WorkloadViewJson(*cp_->GetWorkload(ids[1])).contains("quotaDecision"));
  EXPECT_TRUE(JournalOf("preemptions", ids[0]).empty());  // a user's cancel is no reclaim
}

TEST_F(ControlPlaneTest, TemporaryQuotaAboveTheLimitWaitsForATenantAdmin) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 4), nullptr).ok());
  std::string full = Submit("full", 2);
  ASSERT_EQ(State(full), "Admitted");
  std::vector<std::string> ids;
  for (const char* name : {"nb-no", "nb-yes"}) {
    auto r = cp_->Submit(ExperimentYaml(name, kTemporaryQuota), false, std::string(name) + ".yaml", nullptr, {}, false, nullptr);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ids.push_back(r->answer.submitted[0].id);
  }
  cp_->WaitForCycle();
  // Not yet requested: nothing to decide.
  EXPECT_EQ(cp_->DecideTemporaryQuota(ids[0], true, "tia", nullptr).status().code(), StatusCode::kFailedPrecondition);
  clock_.Advance(2s);
  cp_->WaitForCycle();
  cp_->WaitForCycle();
  for (const auto& id : ids) {
    EXPECT_TRUE(Has(TypesOf(*cp_, id), "TemporaryQuotaRequested"));  // no auto-approve limit
    EXPECT_EQ(State(id), "Pending");
  }
  auto no = cp_->DecideTemporaryQuota(ids[0], false, "tia", nullptr);
  ASSERT_TRUE(no.ok()) << no.status().ToString();
  EXPECT_TRUE(Has(TypesOf(*cp_, ids[0]), "TemporaryQuotaRejected"));
  EXPECT_EQ(cp_->DecideTemporaryQuota(ids[0], true, "tia", nullptr).status().code(), StatusCode::kFailedPrecondition);
  auto yes = cp_->DecideTemporaryQuota(ids[1], true, "tia", nullptr);
  ASSERT_TRUE(yes.ok()) << yes.status().ToString();
  cp_->WaitForCycle();
  EXPECT_TRUE(Has(TypesOf(*cp_, ids[1]), "TemporaryQuotaApproved"));
  EXPECT_EQ(State(ids[1]), "Admitted");
  EXPECT_EQ(State(ids[0]), "Pending");  // rejected: waits on the queue's own quota
  EXPECT_EQ(WorkloadViewJson(*cp_->GetWorkload(ids[1]))["quotaDecision"]["by"], "tia");
  // A workload that asks no temporary quota has nothing to decide.
  EXPECT_EQ(cp_->DecideTemporaryQuota(full, true, "tia", nullptr).status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(ControlPlaneTest, ClustersAreLedgerObjectsAndQueuesLimitOrPreferThem) {
  ASSERT_TRUE(cp_->Apply("kind: Cluster\nname: east\nlocation: cn-hangzhou\nnetworkDomain: idc-a\n"
                         "labels: {data.abacus.io/imagenet: \"true\"}\n---\n"
                         "kind: Queue\nname: east-train\ntenant: acme\nclusters: [east]\n"
                         "quotas:\n  - {resource: gpu/nvidia/A100-80G, nominal: 16}\n  - {resource: cpu, nominal: 64}\n"
                         "  - {resource: memory, nominal: 512Gi}\n",
                         false, "clusters.yaml", nullptr, {}, false, nullptr)
                  .ok());
  // Agents register into clusters; "west" is not declared: it is listed from its nodes.
  json east = AgentNode("gpu-east", 4), west = AgentNode("gpu-west", 8);
  east["cluster"] = "east";
  west["cluster"] = "west";
  ASSERT_TRUE(cp_->RegisterAgent(east, nullptr).ok());
  ASSERT_TRUE(cp_->RegisterAgent(west, nullptr).ok());
  json clusters = ClustersJson(cp_->ListClusters())["items"];
  ASSERT_EQ(clusters.size(), 2u) << clusters.dump();
  EXPECT_EQ(clusters[0]["name"], "east");
  EXPECT_EQ(clusters[0]["location"], "cn-hangzhou");
  EXPECT_EQ(clusters[0]["nodes"], 1);
  EXPECT_EQ(clusters[0]["devices"]["gpu/nvidia/A100-80G"]["total"], 4);
  EXPECT_EQ(clusters[1]["name"], "west");
  EXPECT_EQ(clusters[1]["declared"], false);
  // The queue limited to east places there, though west has more room.
  std::string job = Job("limited", 2);
  job.replace(job.find("queue: train"), 12, "queue: east-train");
  auto r = cp_->Submit(job, false, "limited.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string limited = r->answer.submitted[0].id;
  // A job reading imagenet goes where the data is; a plain one where the room is.
  std::string data = Job("data", 1);
  data.replace(data.find("queue: train"), 12, "labels: {data.abacus.io/imagenet: \"true\"}\nqueue: train");
  r = cp_->Submit(data, false, "data.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string reads = r->answer.submitted[0].id;
  std::string plain = Submit("plain", 1);
  cp_->WaitForCycle();
  auto node_of = [&](const std::string& id) {
    json w = WorkloadViewJson(*cp_->GetWorkload(id));
    if (w["placements"].empty()) return "not placed: " + (*ExplainJson(cp_->Explain(id))).dump();
    return w["placements"][0].value("node", "");
  };
  EXPECT_EQ(node_of(limited), "gpu-east");
  EXPECT_EQ(node_of(reads), "gpu-east");
  EXPECT_EQ(node_of(plain), "gpu-west");
  // (A gang that fits only across clusters waits: SchedulerTest.AGangNeverSpansClusters.)
}

TEST_F(ControlPlaneTest, AssignmentsCarryTheDataMounts) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  auto r = cp_->Submit(GangJob("mounted", "  mounts: [{path: /data/corpus, mountPath: /corpus}]\n"), false, "m.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  json t = TaskOf(AssignmentOf(*cp_, "gpu-a"), id + ".0.0.1");
  ASSERT_FALSE(t.is_null());
  EXPECT_EQ(t["mounts"], json::parse(R"([{"path":"/data/corpus","mountPath":"/corpus","readOnly":true}])"));
}

// The tasks the agent of `node` is told to run, by task id.
std::map<std::string, json> Assigned(ControlPlane& cp, const std::string& node) {
  std::map<std::string, json> out;
  auto answer = cp.WaitAssignments(node, 0, 0ms);
  if (!answer.ok()) return out;
  const json assignment = AssignmentJson(*answer, node, nullptr);
  for (const auto& t : assignment["tasks"]) {
    if (t.value("action", "") == "run") out[t["taskId"].get<std::string>()] = t;
  }
  return out;
}

std::vector<std::string> EventTypes(ControlPlane& cp, const std::string& id) {
  std::vector<std::string> types;
  auto events = WorkloadEventsJson(cp.Events(id));
  if (!events.ok()) return types;
  for (const auto& e : (*events)["items"]) types.push_back(e["type"]);
  return types;
}

bool HasEvent(ControlPlane& cp, const std::string& id, const std::string& type) {
  auto types = EventTypes(cp, id);
  return std::find(types.begin(), types.end(), type) != types.end();
}

TEST_F(ControlPlaneTest, BatchArrayRunsIndexesInSlotsReusesThemAndReleasesTheLast) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  auto r = cp_->Submit(R"(kind: BatchJob
name: sweep
project: acme/ml
queue: train
spec:
  command: ["true"]
  tasks: 3
  parallelism: 2
  taskGroups:
    - name: main
      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: 1}}
)",
                       false, "sweep.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  // Two slots, array tasks 0 and 1, at admission.
  auto tasks = Assigned(*cp_, "gpu-a");
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[id + ".0.0.1"]["env"]["ABACUS_TASK_INDEX"], "0");
  EXPECT_EQ(tasks[id + ".0.1.1"]["env"]["ABACUS_TASK_INDEX"], "1");
  EXPECT_EQ(tasks[id + ".0.1.1"]["env"]["ABACUS_TASK_COUNT"], "3");
  // Index 0 is done: its slot runs index 2 as the slot's next run (a new task id).
  Report("gpu-a", id + ".0.0.1", {{"phase", "Exited"}, {"exitCode", 0}});
  tasks = Assigned(*cp_, "gpu-a");
  ASSERT_TRUE(tasks.count(id + ".0.0.1.1")) << ::testing::PrintToString(tasks);
  EXPECT_EQ(tasks[id + ".0.0.1.1"]["env"]["ABACUS_TASK_INDEX"], "2");
  json w = WorkloadViewJson(*cp_->GetWorkload(id));
  EXPECT_EQ(w["status"]["progress"]["done"], 1) << w.dump();
  EXPECT_EQ(w["status"]["progress"]["running"], 2) << w.dump();
  // Index 1 is done and nothing is left to start: its slot is released (its GPU freed).
  Report("gpu-a", id + ".0.1.1", {{"phase", "Exited"}, {"exitCode", 0}});
  w = WorkloadViewJson(*cp_->GetWorkload(id));
  EXPECT_EQ(w["placements"].size(), 1u) << w.dump();
  EXPECT_TRUE(HasEvent(*cp_, id, "SlotsReleased"));
  Report("gpu-a", id + ".0.0.1.1", {{"phase", "Exited"}, {"exitCode", 0}});
  EXPECT_EQ(State(id), "Succeeded");
  EXPECT_EQ(WorkloadViewJson(*cp_->GetWorkload(id))["status"]["progress"]["done"], 3);
}

TEST_F(ControlPlaneTest, BatchSlotLostWithItsNodeIsPlacedAgainElsewhere) {
  cp_.reset();
  Open(30s);
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 1), nullptr).ok());
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-b", 1), nullptr).ok());
  auto r = cp_->Submit(R"(kind: BatchJob
name: one
project: acme/ml
queue: train
spec:
  command: ["true"]
  tasks: 1
  parallelism: 1
  taskGroups:
    - name: main
      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: 1}}
)",
                       false, "one.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok());
  std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  std::string first = WorkloadViewJson(*cp_->GetWorkload(id))["placements"][0]["node"];
  std::string other = first == "gpu-a" ? "gpu-b" : "gpu-a";
  Report(first, id + ".0.0.1", {{"phase", "Running"}});
  // Only the other node keeps its heartbeat; the first one is lost.
  clock_.Advance(20s);
  ASSERT_TRUE(cp_->AgentHeartbeat(other, json{{"devices", json::array()}}).ok());
  clock_.Advance(11s);
  for (int i = 0; i < 4; ++i) cp_->WaitForCycle();
  // The lost node's slot moves once its agent has fenced it (BatchJob: 10 s after NotReady).
  ASSERT_TRUE(cp_->AgentHeartbeat(other, json{{"devices", json::array()}}).ok());
  clock_.Advance(11s);
  for (int i = 0; i < 4; ++i) cp_->WaitForCycle();
  json w = WorkloadViewJson(*cp_->GetWorkload(id));
  ASSERT_EQ(w["placements"].size(), 1u) << w.dump();
  EXPECT_EQ(w["placements"][0]["node"], other) << w.dump();
  EXPECT_EQ(w["requeues"], 0);  // the array went on; no whole-workload requeue
  EXPECT_TRUE(HasEvent(*cp_, id, "SlotPlaced")) << ::testing::PrintToString(EventTypes(*cp_, id));
  auto tasks = Assigned(*cp_, other);
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks.begin()->second["env"]["ABACUS_TASK_INDEX"], "0");
}

constexpr char kService[] = R"(kind: InferenceService
name: chat
project: acme/ml
queue: train
labels: {version: "1.0"}
spec:
  command: ["serve"]
  replicas: 1
  minReplicas: 1
  maxReplicas: 2
  autoscaling: {metric: rps, target: 10, stabilizationSeconds: 0, cooldownSeconds: 0}
  taskGroups:
    - name: server
      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: 1}}
)";

// The fourth probe: `explain` of a running service said where its placed replicas run and
// nothing of the one that had no place. It now lists each missing replica with the scheduler's
// reason, the same list as the workload's status (here the queue's quota of 2 A100s, not
// capacity: the node has 4).
TEST_F(ControlPlaneTest, ExplainOfARunningServiceNamesEachUnplacedReplicaAndWhy) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 4), nullptr).ok());
  std::string yaml = kService;
  yaml.replace(yaml.find("replicas: 1\n"), 12, "replicas: 2\n");
  yaml.replace(yaml.find("maxReplicas: 2"), 14, "maxReplicas: 3");
  yaml.erase(yaml.find("  autoscaling:"), yaml.find("  taskGroups:") - yaml.find("  autoscaling:"));
  auto r = cp_->Submit(yaml, false, "chat.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  Report("gpu-a", id + ".0.1.1", {{"phase", "Running"}});
  ASSERT_EQ(State(id), "Running");
  ASSERT_TRUE(cp_->Scale(id, 3, {}, nullptr).ok());
  for (int i = 0; i < 3; ++i) cp_->WaitForCycle();
  json status = WorkloadViewJson(*cp_->GetWorkload(id))["status"];
  ASSERT_EQ(status.value("placedUnits", 0), 2) << status.dump();
  json explained = *ExplainJson(cp_->Explain(id));
  ASSERT_TRUE(explained.contains("unplaced")) << explained.dump();
  ASSERT_EQ(explained["unplaced"].size(), 1u) << explained.dump();
  EXPECT_EQ(explained["unplaced"][0]["unit"], 2);
  EXPECT_EQ(explained["unplaced"], status["unplaced"]);
  const std::string why = explained["unplaced"][0].value("reason", "");
  EXPECT_NE(why.find("queue train uses 2 of nominal 2"), std::string::npos) << why;
  const std::string text = explained.value("text", "");
  EXPECT_NE(text.find("1 of 3 replica(s) not placed"), std::string::npos) << text;
  EXPECT_NE(text.find("replica 2: " + why), std::string::npos) << text;
}

TEST_F(ControlPlaneTest, InferenceScalesUpOnMetricsInPlaceAndBackDown) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  auto r = cp_->Submit(kService, false, "chat.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok());
  std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  auto tasks = Assigned(*cp_, "gpu-a");
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[id + ".0.0.1"]["env"]["ABACUS_VERSION"], "1.0");
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  // Bad metric reports are refused with the field named.
  EXPECT_EQ(cp_->ReportMetrics(id, json{{"metric", "qps"}, {"value", 1}, {"replica", 0}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(cp_->ReportMetrics(id, json{{"value", 1}}).status().code(), StatusCode::kInvalidArgument);
  // 25 rps on one replica with a target of 10: 2 replicas (the maximum), the new one placed in
  // place — the first keeps running, nothing is requeued.
  ASSERT_TRUE(cp_->ReportMetrics(id, json{{"metric", "rps"}, {"value", 25}, {"replica", 0}}).ok());
  clock_.Advance(1s);
  for (int i = 0; i < 3; ++i) cp_->WaitForCycle();
  json w = WorkloadViewJson(*cp_->GetWorkload(id));
  ASSERT_EQ(w["placements"].size(), 2u) << w.dump();
  EXPECT_EQ(w["state"], "Running");
  EXPECT_EQ(w["requeues"], 0);
  EXPECT_TRUE(HasEvent(*cp_, id, "Scaled"));
  EXPECT_TRUE(HasEvent(*cp_, id, "ReplicaPlaced"));
  tasks = Assigned(*cp_, "gpu-a");
  ASSERT_TRUE(tasks.count(id + ".0.1.1")) << ::testing::PrintToString(tasks);
  EXPECT_EQ(tasks[id + ".0.1.1"]["env"]["ABACUS_VERSION"], "1.0");
  Report("gpu-a", id + ".0.1.1", {{"phase", "Running"}});
  // Traffic drops to 3 rps per replica: back to 1; replica 1 is stopped, then removed.
  clock_.Advance(1s);
  ASSERT_TRUE(cp_->ReportMetrics(id, json{{"samples", {{{"value", 3}, {"replica", 0}}, {{"value", 3}, {"replica", 1}}}}}).ok());
  clock_.Advance(1s);
  for (int i = 0; i < 3; ++i) cp_->WaitForCycle();
  json stop = TaskOf(AssignmentOf(*cp_, "gpu-a"), id + ".0.1.1");
  ASSERT_FALSE(stop.is_null());
  EXPECT_EQ(stop["action"], "stop");
  Report("gpu-a", id + ".0.1.1", {{"phase", "Exited"}, {"signal", 15}, {"stopped", true}});
  w = WorkloadViewJson(*cp_->GetWorkload(id));
  EXPECT_EQ(w["placements"].size(), 1u) << w.dump();
  EXPECT_TRUE(HasEvent(*cp_, id, "ReplicasRemoved"));
  EXPECT_EQ(State(id), "Running");
}

TEST_F(ControlPlaneTest, ExitedReplicaRestartsInPlaceAsANewRun) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  auto r = cp_->Submit(kService, false, "chat.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok());
  std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  Report("gpu-a", id + ".0.0.1", {{"phase", "Exited"}, {"exitCode", 1}, {"message", "exited 1"}});
  clock_.Advance(1s);
  for (int i = 0; i < 2; ++i) cp_->WaitForCycle();
  EXPECT_TRUE(HasEvent(*cp_, id, "ReplicaExited")) << ::testing::PrintToString(EventTypes(*cp_, id));
  auto tasks = Assigned(*cp_, "gpu-a");
  ASSERT_TRUE(tasks.count(id + ".0.0.1.1")) << ::testing::PrintToString(tasks);
  EXPECT_EQ(tasks[id + ".0.0.1.1"]["run"], 1);
  EXPECT_EQ(State(id), "Running");
  EXPECT_EQ(WorkloadViewJson(*cp_->GetWorkload(id))["requeues"], 0);
}

// Issue 20 point 4: the join token alone cannot take over a registered agent node; its
// credential can; an admin's reset lets another machine register under the name.
TEST_F(ControlPlaneTest, ARegisteredNodeRegistersAgainOnlyWithItsCredential) {
  auto first = cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr);
  ASSERT_TRUE(first.ok());
  auto stolen = cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr);
  EXPECT_EQ(stolen.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(stolen.status().message().find("abacus node reset gpu-a"), std::string::npos) << stolen.status().message();
  json wrong = AgentNode("gpu-a", 2);
  wrong["credential"] = "not-it";
  EXPECT_EQ(cp_->RegisterAgent(wrong, nullptr).status().code(), StatusCode::kFailedPrecondition);
  json own = AgentNode("gpu-a", 2);
  own["credential"] = first->node_token;
  auto again = cp_->RegisterAgent(own, nullptr);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(NodeJson(*cp_->GetNode("gpu-a")).contains("credential"));
  EXPECT_EQ(cp_->ResetNode("nowhere", nullptr).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(cp_->ResetNode("gpu-a", nullptr).ok());
  EXPECT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
}

}  // namespace
}  // namespace abacus::server
