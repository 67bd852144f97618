// Fleet verbs (issue 23) as real processes against a real server: cordon, uncordon and drain of
// simulated and agent nodes; hold, release, requeue, set-priority, suspend and resume of
// workloads and queues; bulk cancel; each authorized against the caller's tenant and kept
// across a server restart.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server/server_test_util.h"
#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;
namespace org = server::testing_org;

// t1 (project p1, queue q1) and t2 (p2, q2), room for every job; priority classes spot
// (preemptible) and steady; max a member of t1/p1, tia and oscar tenant-admins of t1 and t2.
const std::string kOrg = org::Org(
    org::TwoTenants("p2"), {{"cpu", "1000"}, {"memory", "4Ti"}},
    {org::Member("max", "t1/p1"), org::TenantAdmin("tia", "t1"),
     org::TenantAdmin("oscar", "t2")},
    "kind: PriorityClass\nname: spot\nvalue: 200\npreemptible: true\n---\n"
    "kind: PriorityClass\nname: steady\nvalue: 600\npreemptible: false\n");

std::string Job(const std::string& name, const std::string& project, const std::string& queue,
                const std::string& priority_class = "training", const std::string& command = "[\"true\"]",
                const std::string& labels = "") {
  return "kind: TrainingJob\nname: " + name + "\nproject: " + project + "\nqueue: " + queue +
         "\npriorityClass: " + priority_class + "\n" + labels + "spec:\n  command: " + command +
         "\n  taskGroups:\n    - name: w\n      resources: {cpu: 1, memory: 1Gi}\n";
}

json SimNode(const std::string& name) {
  return {{"name", name}, {"cpu", "16"}, {"memory", "64Gi"}, {"simulated", true}};
}

class FleetTest : public ::testing::Test {
 protected:
  void SetUp() override { Start(); }
  void Start() {
    server_ = std::make_unique<ServerProcess>(dir_.path());
    env_ = {"ABACUS_SERVER=" + server_->url(), "ABACUS_TOKEN=" + server_->token()};
    if (!tokens_.empty()) return;
    auto admin = server_->Client();
    auto applied = admin.Post("/api/v1/apply?filename=org.yaml", kOrg, "application/yaml");
    ASSERT_EQ(applied.status, 200) << applied.text;
    for (const char* user : {"max", "tia", "oscar"}) {
      auto r = admin.Post("/api/v1/tokens", json{{"user", user}, {"description", "test"}}.dump(), "application/json");
      ASSERT_EQ(r.status, 201) << r.text;
      tokens_[user] = r.body["token"];
    }
  }
  CliResult Run(const std::vector<std::string>& args, const std::string& stdin_text = "") {
    return RunCli(args, env_, stdin_text);
  }
  CliResult RunAs(const std::string& user, const std::vector<std::string>& args) {
    return RunCli(args, {"ABACUS_SERVER=" + server_->url(), "ABACUS_TOKEN=" + tokens_.at(user)});
  }
  void Submit(const std::string& yaml) {
    auto r = server_->Client().Post("/api/v1/workloads", yaml, "application/yaml");
    ASSERT_EQ(r.status, 201) << r.text;
  }
  json Workload(const std::string& name) { return server_->Client().Get("/api/v1/workloads/" + name).body; }
  bool StateIs(const std::string& name, const std::string& state) { return Workload(name).value("state", "") == state; }
  std::string NodeState(const std::string& name) {
    return server_->Client().Get("/api/v1/nodes/" + name).body.value("schedulingState", "");
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::vector<std::string> env_;
  std::map<std::string, std::string> tokens_;
};

// Cordon keeps new work off a simulated node and uncordon lets it on; drain requeues the
// preemptible work at once (typed reason Drained), waits for the rest, and --requeue takes the
// rest too; Drained is shown, audited and kept across a restart; only admins may do it.
TEST_F(FleetTest, CordonAndDrainSimulatedNodeSurviveRestart) {
  ASSERT_EQ(server_->Client().Post("/api/v1/nodes", SimNode("sim-a").dump(), "application/json").status, 201);
  Submit(Job("steady", "t1/p1", "q1", "steady"));
  Submit(Job("spot-1", "t1/p1", "q1", "spot"));
  ASSERT_TRUE(WaitFor([&] { return StateIs("steady", "Admitted") && StateIs("spot-1", "Admitted"); }));

  // Only admins cordon: a tenant admin is refused.
  auto refused = RunAs("tia", {"cordon", "sim-a"});
  EXPECT_EQ(refused.code, 1) << refused.out;
  EXPECT_NE(refused.err.find("may not node-control"), std::string::npos) << refused.err;

  auto cordon = Run({"cordon", "sim-a", "--reason", "fan"});
  ASSERT_EQ(cordon.code, 0) << cordon.err;
  EXPECT_NE(cordon.out.find("node sim-a cordoned; now Cordoned"), std::string::npos) << cordon.out;
  Submit(Job("late", "t1/p1", "q1", "steady"));
  auto explain = Run({"explain", "late"});
  ASSERT_EQ(explain.code, 0) << explain.err;
  ASSERT_TRUE(WaitFor([&] { return Run({"explain", "late"}).out.find("1 by node not ready or cordoned") != std::string::npos; }))
      << Run({"explain", "late"}).out;
  EXPECT_TRUE(StateIs("late", "Pending"));
  EXPECT_TRUE(StateIs("steady", "Admitted"));  // what runs keeps running
  ASSERT_EQ(Run({"uncordon", "sim-a"}).code, 0);
  ASSERT_TRUE(WaitFor([&] { return StateIs("late", "Admitted"); }));

  // Drain: the preemptible one goes at once, the others wait for the grace.
  auto drain = Run({"drain", "sim-a", "--grace", "1h"});
  ASSERT_EQ(drain.code, 0) << drain.err;
  EXPECT_NE(drain.out.find("draining"), std::string::npos) << drain.out;
  EXPECT_NE(drain.out.find(", in 59m"), std::string::npos) << drain.out;  // what is left of the hour
  // A second drain never lengthens the grace, and says what holds (the probe of 2026-12-07: it
  // printed "grace 2h" while the first hour held).
  auto longer = Run({"drain", "sim-a", "--grace", "2h"});
  ASSERT_EQ(longer.code, 0) << longer.err;
  EXPECT_EQ(longer.out.find("grace 2h"), std::string::npos) << longer.out;
  EXPECT_NE(longer.out.find(", in 59m"), std::string::npos) << longer.out;
  ASSERT_TRUE(WaitFor([&] { return StateIs("spot-1", "Requeued"); }));
  EXPECT_EQ(Workload("spot-1").value("requeueReason", ""), "Drained");
  EXPECT_EQ(Workload("spot-1").value("requeues", 0), 1);
  EXPECT_TRUE(StateIs("steady", "Admitted"));
  EXPECT_EQ(NodeState("sim-a"), "Draining");
  auto nodes = Run({"get", "nodes"});
  EXPECT_NE(nodes.out.find("Ready,Draining"), std::string::npos) << nodes.out;
  auto described = Run({"describe", "node", "sim-a"});
  EXPECT_NE(described.out.find("Draining"), std::string::npos) << described.out;

  // --requeue: the rest at once, then Drained; nothing new lands there.
  auto all = Run({"drain", "sim-a", "--requeue"});
  ASSERT_EQ(all.code, 0) << all.err;
  ASSERT_TRUE(WaitFor([&] { return NodeState("sim-a") == "Drained"; })) << NodeState("sim-a");
  for (const char* w : {"steady", "late", "spot-1"}) {
    EXPECT_TRUE(StateIs(w, "Requeued")) << w << ": " << Workload(w).dump();
    EXPECT_EQ(Workload(w).value("requeueReason", ""), "Drained") << w;
    EXPECT_EQ(Workload(w).value("failures", 0), 0) << w;  // no retry used
  }

  // The audit log has each verb; the node stays Drained across a restart.
  auto audit = Run({"audit", "-o", "json"});
  for (const char* action : {"\"cordon\"", "\"uncordon\"", "\"drain\""}) {
    EXPECT_NE(audit.out.find(action), std::string::npos) << action;
  }
  ASSERT_EQ(server_->Terminate(), 0);
  Start();
  EXPECT_EQ(NodeState("sim-a"), "Drained");
  EXPECT_TRUE(StateIs("steady", "Requeued"));
  ASSERT_EQ(Run({"uncordon", "sim-a"}).code, 0);
  ASSERT_TRUE(WaitFor([&] { return StateIs("steady", "Admitted"); }));
}

// hold/release, requeue, set-priority, suspend/resume of a workload and of a queue: each works
// for the project's member (or the tenant admin), each is refused across tenants, and the
// holds survive a restart.
TEST_F(FleetTest, WorkloadAndQueueControlAuthorizedPerTenant) {
  ASSERT_EQ(server_->Client().Post("/api/v1/nodes", SimNode("sim-b").dump(), "application/json").status, 201);
  ASSERT_EQ(Run({"cordon", "sim-b"}).code, 0);  // everything waits until we say so
  Submit(Job("job-a", "t1/p1", "q1"));
  ASSERT_TRUE(WaitFor([&] { return Run({"explain", "job-a"}).out.find("waiting for the next") == std::string::npos; }));

  // Cross-tenant: oscar (tenant admin of t2) sees none of t1's work: 404 for every verb.
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"hold", "job-a"}, {"release", "job-a"}, {"requeue", "job-a"}, {"suspend", "job-a"},
           {"resume", "job-a"}, {"set-priority", "job-a", "800"}, {"suspend", "queue", "q1"},
           {"resume", "queue", "q1"}}) {
    auto r = RunAs("oscar", args);
    EXPECT_EQ(r.code, 1) << args[0];
    EXPECT_TRUE(r.err.find("not found") != std::string::npos || r.err.find("may not") != std::string::npos)
        << args[0] << ": " << r.err;
  }
  // A member may hold its own work but not change its priority or suspend the queue.
  auto held = RunAs("max", {"hold", "job-a"});
  ASSERT_EQ(held.code, 0) << held.err;
  EXPECT_NE(held.out.find("held"), std::string::npos) << held.out;
  EXPECT_EQ(RunAs("max", {"set-priority", "job-a", "800"}).code, 1);
  EXPECT_EQ(RunAs("max", {"suspend", "queue", "q1"}).code, 1);

  auto explain = Run({"explain", "job-a", "-o", "json"});
  ASSERT_EQ(explain.code, 0) << explain.err;
  EXPECT_EQ(json::parse(explain.out)["reason"]["code"], "Held") << explain.out;

  // The hold outlives a restart; a held workload is not admitted when the node opens.
  ASSERT_EQ(server_->Terminate(), 0);
  Start();
  ASSERT_EQ(Run({"uncordon", "sim-b"}).code, 0);
  Submit(Job("job-b", "t1/p1", "q1"));
  ASSERT_TRUE(WaitFor([&] { return StateIs("job-b", "Admitted"); }));
  EXPECT_TRUE(StateIs("job-a", "Pending"));
  EXPECT_EQ(Workload("job-a").value("hold", ""), "Held");
  ASSERT_EQ(RunAs("max", {"release", "job-a"}).code, 0);
  ASSERT_TRUE(WaitFor([&] { return StateIs("job-a", "Admitted"); }));

  // Requeue: back to wait with its own reason, no retry used (the node cordoned meanwhile, so
  // that it stays Requeued to be looked at); it is admitted again.
  ASSERT_EQ(Run({"cordon", "sim-b"}).code, 0);
  auto requeue = RunAs("max", {"requeue", "job-a"});
  ASSERT_EQ(requeue.code, 0) << requeue.err;
  ASSERT_TRUE(WaitFor([&] { return StateIs("job-a", "Requeued"); }));
  EXPECT_EQ(Workload("job-a").value("requeueReason", ""), "Requeued");
  EXPECT_EQ(Workload("job-a").value("requeues", 0), 1);
  EXPECT_EQ(Workload("job-a").value("failures", 0), 0);
  ASSERT_EQ(Run({"uncordon", "sim-b"}).code, 0);
  ASSERT_TRUE(WaitFor([&] { return StateIs("job-a", "Admitted"); }));

  // set-priority: a value and a class name; an unknown class is refused with the known ones.
  auto pri = RunAs("tia", {"set-priority", "job-b", "800"});
  ASSERT_EQ(pri.code, 0) << pri.err;
  EXPECT_EQ(Workload("job-b").value("priority", 0), 800);
  EXPECT_EQ(RunAs("tia", {"set-priority", "job-b", "spot"}).code, 0);
  EXPECT_EQ(Workload("job-b")["spec"].value("priorityClass", ""), "spot");
  auto unknown = RunAs("tia", {"set-priority", "job-b", "nope"});
  EXPECT_EQ(unknown.code, 1);
  EXPECT_NE(unknown.err.find("no priority class 'nope'"), std::string::npos) << unknown.err;

  // suspend a running workload: stopped, requeued as Suspended, kept out until resumed.
  ASSERT_TRUE(WaitFor([&] { return StateIs("job-b", "Admitted"); }));
  ASSERT_EQ(RunAs("max", {"suspend", "job-b"}).code, 0);
  ASSERT_TRUE(WaitFor([&] { return StateIs("job-b", "Requeued"); }));
  EXPECT_EQ(Workload("job-b").value("requeueReason", ""), "Suspended");
  EXPECT_EQ(json::parse(Run({"explain", "job-b", "-o", "json"}).out)["reason"]["code"], "Suspended");
  ASSERT_EQ(RunAs("max", {"resume", "job-b"}).code, 0);
  ASSERT_TRUE(WaitFor([&] { return StateIs("job-b", "Admitted"); }));

  // A suspended queue admits nothing new; what it runs keeps running; resume lets it go.
  auto qs = RunAs("tia", {"suspend", "queue", "q1"});
  ASSERT_EQ(qs.code, 0) << qs.err;
  Submit(Job("job-c", "t1/p1", "q1"));
  ASSERT_TRUE(WaitFor([&] {
    auto r = Run({"explain", "job-c", "-o", "json"});
    return r.code == 0 && json::parse(r.out)["reason"].value("code", "") == "QueueSuspended";
  }));
  EXPECT_TRUE(StateIs("job-b", "Admitted"));
  ASSERT_EQ(server_->Terminate(), 0);  // the suspension is stored
  Start();
  EXPECT_TRUE(server_->Client().Get("/api/v1/queues/q1").body.contains("suspended"));
  ASSERT_EQ(RunAs("tia", {"resume", "queue", "q1"}).code, 0);
  ASSERT_TRUE(WaitFor([&] { return StateIs("job-c", "Admitted"); }));

  // Hold of running work says what to do instead.
  auto wrong = RunAs("max", {"hold", "job-c"});
  EXPECT_EQ(wrong.code, 1);
  EXPECT_NE(wrong.err.find("abacus suspend job-c"), std::string::npos) << wrong.err;
}

// Bulk cancel: by label selector and by state/queue; without --yes and without a terminal it
// refuses with exit 2 and says to pass --yes; it cancels only what the caller may see.
TEST_F(FleetTest, BulkCancelBySelectorAndState) {
  Submit(Job("v-1", "t1/p1", "q1", "training", "[\"true\"]", "labels: {team: vision}\n"));
  Submit(Job("v-2", "t1/p1", "q1", "training", "[\"true\"]", "labels: {team: vision, stage: prod}\n"));
  Submit(Job("n-1", "t1/p1", "q1", "training", "[\"true\"]", "labels: {team: nlp}\n"));
  Submit(Job("other", "t2/p2", "q2", "training", "[\"true\"]", "labels: {team: vision}\n"));

  auto refuse = Run({"cancel", "-l", "team=vision"});
  EXPECT_EQ(refuse.code, 2);
  EXPECT_NE(refuse.err.find("pass --yes"), std::string::npos) << refuse.err;
  EXPECT_TRUE(StateIs("v-1", "Pending"));

  auto bad = Run({"cancel", "--state", "sleeping", "--yes"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("expected one of Pending"), std::string::npos) << bad.err;
  EXPECT_EQ(Run({"cancel"}).code, 2);

  // max (member of t1/p1) cancels team=vision,stage!=prod: v-1 only (other is t2's, unseen).
  auto sel = RunCli({"cancel", "-l", "team=vision,stage!=prod", "--yes"},
                    {"ABACUS_SERVER=" + server_->url(), "ABACUS_TOKEN=" + tokens_.at("max")});
  ASSERT_EQ(sel.code, 0) << sel.err;
  EXPECT_NE(sel.out.find("1 of 1 workloads cancelled"), std::string::npos) << sel.out;
  EXPECT_TRUE(StateIs("v-1", "Cancelled"));
  EXPECT_TRUE(StateIs("v-2", "Pending"));
  EXPECT_TRUE(StateIs("other", "Pending"));

  auto by_state = Run({"cancel", "--state", "PENDING", "--queue", "q1", "--yes"});
  ASSERT_EQ(by_state.code, 0) << by_state.err;
  EXPECT_NE(by_state.out.find("2 of 2 workloads cancelled"), std::string::npos) << by_state.out;
  EXPECT_TRUE(StateIs("n-1", "Cancelled"));
  EXPECT_TRUE(StateIs("other", "Pending"));
}

// Drain of an agent node: the running task gets its stop signal, the workload is requeued as
// Drained, and `drain --wait` returns once the node is Drained.
TEST_F(FleetTest, DrainAgentNodeWaitsUntilDrained) {
  AgentProcess agent(*server_, "agent-a", "");
  Submit(Job("sleeper", "t1/p1", "q1", "training", "[\"sleep\", \"300\"]"));
  ASSERT_TRUE(WaitFor([&] { return StateIs("sleeper", "Running"); })) << Workload("sleeper").dump();

  // POST /api/v1/nodes still refuses to replace an agent node; cordon works on it.
  ASSERT_EQ(Run({"cordon", "agent-a"}).code, 0);
  EXPECT_EQ(NodeState("agent-a"), "Cordoned");
  auto drain = Run({"drain", "agent-a", "--grace", "0", "--wait"});
  ASSERT_EQ(drain.code, 0) << drain.err;
  EXPECT_NE(drain.out.find("node agent-a drained"), std::string::npos) << drain.out;
  EXPECT_EQ(NodeState("agent-a"), "Drained");
  json w = Workload("sleeper");
  EXPECT_EQ(w.value("state", ""), "Requeued") << w.dump();
  EXPECT_EQ(w.value("requeueReason", ""), "Drained") << w.dump();
  // Heartbeats keep the agent Ready but the node stays Drained; uncordon takes the work back.
  ASSERT_EQ(Run({"uncordon", "agent-a"}).code, 0);
  ASSERT_TRUE(WaitFor([&] { return StateIs("sleeper", "Running"); }));
  ASSERT_EQ(Run({"cancel", "sleeper"}).code, 0);
}

// `drain --wait` with a grace: the node drains when the grace ends, and the CLI learns it from
// the nodes watch (a long poll), not by asking for the node every half second (before: one GET
// /api/v1/nodes/{name} per 500 ms, about six over this drain).
TEST_F(FleetTest, DrainWaitFollowsTheWatchInsteadOfPolling) {
  AgentProcess agent(*server_, "agent-w", "");
  Submit(Job("long", "t1/p1", "q1", "training", "[\"sleep\", \"300\"]"));
  ASSERT_TRUE(WaitFor([&] { return StateIs("long", "Running"); })) << Workload("long").dump();
  auto gets = [&](const std::string& route) {
    const std::string text = server_->Client().Get("/metrics").text;
    const std::string prefix = "abacus_http_requests_total{route=\"" + route + "\",code=\"200\"} ";
    size_t at = text.find(prefix);
    return at == std::string::npos ? 0.0 : std::stod(text.substr(at + prefix.size()));
  };
  const double by_name_before = gets("/api/v1/nodes/{name}");
  const double lists_before = gets("/api/v1/nodes");
  auto drain = Run({"drain", "agent-w", "--grace", "3s", "--wait"});
  ASSERT_EQ(drain.code, 0) << drain.err;
  EXPECT_NE(drain.out.find("node agent-w drained"), std::string::npos) << drain.out;
  EXPECT_EQ(NodeState("agent-w"), "Drained");
  EXPECT_EQ(Workload("long").value("requeueReason", ""), "Drained");
  EXPECT_EQ(gets("/api/v1/nodes/{name}") - by_name_before, 1.0);  // NodeState above, nothing from the CLI
  EXPECT_GE(gets("/api/v1/nodes") - lists_before, 1.0);  // the watch: the list, then its changes
  ASSERT_EQ(Run({"uncordon", "agent-w"}).code, 0);
  ASSERT_EQ(Run({"cancel", "long"}).code, 0);
}

}  // namespace
}  // namespace abacus::testing
