// Services as a buyer's POC runs them (issue 19 points 3-6), end to end with a real server and
// real agents on fake A100 nodes: a reservation pool that holds while a service scales, overflow
// outside it only when the spec allows it; a running service rolled forward and back through the
// CLI (apply, rollout, status, history, undo) with the server's diff; readiness that follows what
// the agents report at the default thresholds; a failing canary rolled back at the default
// failureThreshold; who borrows from whom in `get queues`, and each pool's tenants.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;

// Tenant a serves from pool `infer` (one node of 2 A100s) and may use the default pool (one node
// with 1 A100, which binpack prefers: it is the fuller one).
constexpr char kOrg[] = R"(kind: Tenant
name: a
---
kind: Project
name: serve
tenant: a
---
kind: Pool
name: infer
purpose: inference
tenants: [a]
---
kind: Pool
name: default
---
kind: Queue
name: qa
tenant: a
quotas:
  - {resource: gpu/nvidia/A100-80G, nominal: 8}
  - {resource: cpu, nominal: 32}
  - {resource: memory, nominal: 128Gi}
)";

class ServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(dir_.path(), std::vector<std::string>{"--heartbeat", "1"});
    auto applied = server_->Client().Post("/api/v1/apply", kOrg, "application/yaml");
    ASSERT_EQ(applied.status, 200) << applied.text;
  }
  void StartAgents() {
    const std::vector<std::string> size = {"--cpus", "16", "--memory", "64Gi"};
    std::vector<std::string> in_pool = size;
    in_pool.insert(in_pool.end(), {"--pool", "infer"});
    agents_.push_back(std::make_unique<AgentProcess>(*server_, "infer-1", "gpu:nvidia:A100-80G:2:80Gi", in_pool));
    agents_.push_back(std::make_unique<AgentProcess>(*server_, "other-1", "gpu:nvidia:A100-80G:1:80Gi", size));
  }
  std::string Submit(const std::string& yaml) {
    auto r = server_->Client().Post("/api/v1/workloads", yaml, "application/yaml");
    EXPECT_EQ(r.status, 201) << r.text;
    return r.ok() ? r.body["items"][0]["id"].get<std::string>() : "";
  }
  json Get(const std::string& id) { return server_->Client().Get("/api/v1/workloads/" + id).body; }
  std::vector<json> Events(const std::string& id, const std::string& type) {
    std::vector<json> out;
    json body = server_->Client().Get("/api/v1/workloads/" + id + "/events").body;
    for (const auto& e : body.value("items", json::array())) {
      if (e.value("type", "") == type) out.push_back(e);
    }
    return out;
  }
  std::string EventTypes(const std::string& id) {
    std::string out;
    json body = server_->Client().Get("/api/v1/workloads/" + id + "/events").body;
    for (const auto& e : body.value("items", json::array())) out += e.value("type", "") + " ";
    return out;
  }
  // The nodes of `id`'s placements.
  std::vector<std::string> Nodes(const std::string& id) {
    std::vector<std::string> out;
    for (const auto& p : Get(id).value("placements", json::array())) out.push_back(p.value("node", ""));
    return out;
  }
  void Report(const std::string& id, double value) {
    auto r = server_->Client().Post("/api/v1/workloads/" + id + "/metrics",
                                    json{{"metric", "rps"}, {"value", value}, {"replica", 0}}.dump(),
                                    "application/json");
    EXPECT_EQ(r.status, 200) << r.text;
  }
  // A 1-GPU service scaled on rps (target 10) from 1 up to `max` replicas.
  static std::string ScaledService(const std::string& name, int max, const std::string& reservation) {
    return "kind: InferenceService\nname: " + name +
           "\nproject: a/serve\nqueue: qa\npriorityClass: production\nspec:\n"
           "  command: [\"sleep\", \"600\"]\n"
           "  taskGroups:\n    - name: server\n      resources: {cpu: 1, memory: 1Gi, accelerators: "
           "{flavor: gpu/nvidia/A100-80G, count: 1}}\n"
           "  replicas: 1\n  minReplicas: 1\n  maxReplicas: " + std::to_string(max) +
           "\n  reservation: " + reservation +
           "\n  autoscaling: {metric: rps, target: 10, stabilizationSeconds: 0, cooldownSeconds: 0}\n";
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::vector<std::unique_ptr<AgentProcess>> agents_;
};

// Issue 19.3: with reservation {pool: infer} (overflow Deny, the default) every replica runs in
// the pool, also the ones added by a metric spike; a replica the pool cannot take waits with a
// reason naming the pool, and nothing is placed on the node outside it.
TEST_F(ServiceTest, ReservedPoolHoldsEveryReplicaAndTheOverflowWaits) {
  StartAgents();
  std::string svc = Submit(ScaledService("chat", 3, "{pool: infer}"));
  ASSERT_TRUE(WaitFor([&] { return Get(svc).value("state", "") == "Running"; }, std::chrono::seconds(30)))
      << Get(svc).dump();
  EXPECT_EQ(Nodes(svc), std::vector<std::string>{"infer-1"}) << Get(svc).dump();
  // A spike: 30 rps on one replica, target 10 → 3 replicas; the pool holds 2.
  ASSERT_TRUE(WaitFor([&] {
    Report(svc, 30);
    json s = Get(svc).value("status", json::object());
    return s.value("wantedUnits", 0) == 3 && s.value("placedUnits", 0) == 2 && s.contains("unplaced");
  }, std::chrono::seconds(30))) << Get(svc).dump();
  for (const std::string& n : Nodes(svc)) EXPECT_EQ(n, "infer-1") << Get(svc).dump();
  json unplaced = Get(svc)["status"]["unplaced"][0];
  EXPECT_NE(unplaced.value("reason", "").find("outside the reservation pool"), std::string::npos) << unplaced.dump();
  EXPECT_TRUE(Events(svc, "ReplicaOutsidePool").empty()) << EventTypes(svc);
  EXPECT_FALSE(Get(svc)["status"].contains("outsidePool"));
}

// With overflow: Allow the pool is still filled first; only the replica it cannot take runs
// outside, with an event and a status line that count the replicas outside the pool.
TEST_F(ServiceTest, OverflowAllowRunsOnlyWhatThePoolCannotTakeOutsideAndSaysSo) {
  StartAgents();
  std::string svc = Submit(ScaledService("chat", 3, "{pool: infer, overflow: Allow}"));
  ASSERT_TRUE(WaitFor([&] { return Get(svc).value("state", "") == "Running"; }, std::chrono::seconds(30)))
      << Get(svc).dump();
  EXPECT_EQ(Nodes(svc), std::vector<std::string>{"infer-1"}) << Get(svc).dump();
  ASSERT_TRUE(WaitFor([&] {
    Report(svc, 30);
    return Get(svc).value("status", json::object()).value("placedUnits", 0) == 3;
  }, std::chrono::seconds(30))) << Get(svc).dump();
  std::vector<std::string> nodes = Nodes(svc);
  EXPECT_EQ(std::count(nodes.begin(), nodes.end(), "infer-1"), 2) << Get(svc).dump();
  EXPECT_EQ(std::count(nodes.begin(), nodes.end(), "other-1"), 1) << Get(svc).dump();
  // The event is committed with the placement; the status above is read from the ledger the
  // loop swaps in, which a loaded machine can show a moment before the store's event stream.
  std::vector<json> outside;
  ASSERT_TRUE(WaitFor([&] {
    outside = Events(svc, "ReplicaOutsidePool");
    return !outside.empty();
  })) << EventTypes(svc);
  ASSERT_EQ(outside.size(), 1u) << EventTypes(svc);
  EXPECT_EQ(outside[0]["details"].value("pool", ""), "infer");
  EXPECT_EQ(outside[0]["details"].value("outside", 0), 1);
  json status = Get(svc)["status"];
  EXPECT_EQ(status["outsidePool"].value("message", ""),
            "1 of 3 replica(s) run outside reservation pool infer (overflow: Allow)") << status.dump();
  json explain = server_->Client().Get("/api/v1/workloads/" + svc + "/explain").body;
  EXPECT_NE(explain.value("text", "").find("outside reservation pool infer"), std::string::npos) << explain.dump();
}

// Issue 19.4: `abacus apply -f` of a changed document updates the running service (no second
// service of that name) and prints the server's diff; the canary runs v2's env while the stable
// replica keeps v1's; an immutable change is refused naming the field (422 over REST); status,
// history and undo work as kubectl users expect, and every update is audited with its diff.
TEST_F(ServiceTest, RunningServiceRollsForwardAndBackThroughTheCli) {
  StartAgents();
  const std::vector<std::string> env = {"ABACUS_SERVER=" + server_->url(), "ABACUS_TOKEN=" + server_->token()};
  auto doc = [](const std::string& version, const std::string& priority) {
    return "kind: InferenceService\nname: chat\nproject: a/serve\nqueue: qa\npriorityClass: " + priority +
           "\nlabels: {version: v1}\nspec:\n"
           "  command: [\"sh\", \"-c\", \"echo greeting=$GREETING version=$ABACUS_VERSION; sleep 600\"]\n"
           "  env: {GREETING: hello-" + version + "}\n"
           "  taskGroups:\n    - name: server\n      resources: {cpu: 1, memory: 1Gi}\n"
           "  replicas: 2\n  minReplicas: 1\n  maxReplicas: 4\n"
           "  rollout: {version: " + version + ", canaryReplicas: 1, promoteAfterSeconds: 600}\n";
  };
  CliResult created = RunCli({"apply", "-f", "-"}, env, doc("v1", "production"));
  ASSERT_EQ(created.code, 0) << created.err;
  EXPECT_NE(created.out.find("created"), std::string::npos) << created.out;
  ASSERT_TRUE(WaitFor([&] {
    json w = Get("chat");
    return w.value("state", "") == "Running" && w.value("status", json::object()).value("readyReplicas", 0) == 2;
  }, std::chrono::seconds(30))) << Get("chat").dump();
  std::string id = Get("chat").value("id", "");

  // Roll forward: the same document with v2 (and v2's env).
  CliResult updated = RunCli({"apply", "-f", "-"}, env, doc("v2", "production"));
  ASSERT_EQ(updated.code, 0) << updated.err;
  EXPECT_NE(updated.out.find("updated (revision 2)"), std::string::npos) << updated.out;
  EXPECT_NE(updated.out.find("spec.rollout.version: v1 -> v2"), std::string::npos) << updated.out;
  EXPECT_NE(updated.out.find("spec.env.GREETING: hello-v1 -> hello-v2"), std::string::npos) << updated.out;
  json listed = server_->Client().Get("/api/v1/workloads?name=chat").body;
  EXPECT_EQ(listed.value("total", 0), 1) << listed.dump();  // updated, not a second service
  ASSERT_TRUE(WaitFor([&] { return !Events(id, "CanaryStarted").empty(); }, std::chrono::seconds(20))) << EventTypes(id);
  // The canary (replica 0) runs v2's template; replica 1 keeps v1's.
  auto log_of = [&](int replica) {
    for (const auto& p : Get(id).value("placements", json::array())) {
      if (p.value("replica", -1) != replica || p.value("phase", "") != "Running") continue;
      std::string task = id + ".0." + std::to_string(replica) + ".1" +
                         (p.value("run", 0) > 0 ? "." + std::to_string(p.value("run", 0)) : "");
      auto r = server_->Client().Get("/api/v1/workloads/" + id + "/logs?task=" + task);
      return r.ok() ? r.body.value("content", "") : "";
    }
    return std::string();
  };
  ASSERT_TRUE(WaitFor([&] { return log_of(0).find("greeting=hello-v2 version=v2") != std::string::npos; },
                      std::chrono::seconds(30))) << log_of(0) << Get(id).dump();
  EXPECT_NE(log_of(1).find("greeting=hello-v1 version=v1"), std::string::npos) << log_of(1);
  CliResult status = RunCli({"rollout", "status", "chat"}, env);
  EXPECT_EQ(status.code, 0) << status.err;
  EXPECT_NE(status.out.find("Canary; stable version v1, canary v2 on 1 replica(s)"), std::string::npos) << status.out;

  // Applying the same document again changes nothing.
  CliResult again = RunCli({"apply", "-f", "-"}, env, doc("v2", "production"));
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_NE(again.out.find("unchanged"), std::string::npos) << again.out;

  // An immutable field: refused, naming it; 422 over REST.
  CliResult moved = RunCli({"apply", "-f", "-"}, env, doc("v2", "high"));
  EXPECT_EQ(moved.code, 1);
  EXPECT_NE(moved.err.find("immutable field(s) changed: priorityClass"), std::string::npos) << moved.err;

  // History, then undo: back to v1 (the canary is aborted), audited with the diff.
  CliResult history = RunCli({"rollout", "history", "chat"}, env);
  EXPECT_EQ(history.code, 0) << history.err;
  EXPECT_NE(history.out.find("(submitted)"), std::string::npos) << history.out;
  EXPECT_NE(history.out.find("spec.rollout.version=v2"), std::string::npos) << history.out;
  CliResult undo = RunCli({"rollout", "undo", "chat"}, env);
  ASSERT_EQ(undo.code, 0) << undo.err;
  EXPECT_NE(undo.out.find("spec.rollout.version: v2 -> v1"), std::string::npos) << undo.out;
  ASSERT_TRUE(WaitFor([&] { return !Events(id, "RolloutAborted").empty(); }, std::chrono::seconds(20)))
      << EventTypes(id);
  ASSERT_TRUE(WaitFor([&] {
    json w = Get(id);
    int v1 = 0;
    for (const auto& p : w.value("placements", json::array())) v1 += p.value("version", "") == "v1";
    return v1 == 2;
  }, std::chrono::seconds(30))) << Get(id).dump();
  EXPECT_EQ(Events(id, "Updated").size(), 2u) << EventTypes(id);
  std::string audit = server_->Client().Get("/api/v1/audit?limit=100000").text;
  EXPECT_NE(audit.find("spec.rollout.version"), std::string::npos) << audit.substr(0, 2000);
}

// Issue 19.4 over REST: PUT of a document that changes the queue is 422 naming it; PATCH with a
// merge patch updates; `set image` names a version for the new image.
TEST_F(ServiceTest, UpdatesOverRestAreDiffedAndImmutableFieldsAre422) {
  std::string svc = Submit(ScaledService("api", 3, "{pool: infer}"));
  std::string doc = "kind: InferenceService\nname: api\nproject: a/serve\nqueue: qa\npriorityClass: high\n"
                    "spec:\n  command: [\"sleep\", \"600\"]\n  taskGroups:\n    - name: server\n"
                    "      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: 2}}\n";
  auto put = server_->Client().Put("/api/v1/workloads/" + svc, doc, "application/yaml");
  EXPECT_EQ(put.status, 422) << put.text;
  std::string message = put.body["error"].value("message", "");
  EXPECT_NE(message.find("priorityClass"), std::string::npos) << message;
  EXPECT_NE(message.find("spec.taskGroups"), std::string::npos) << message;
  auto patch = server_->Client().Patch("/api/v1/workloads/" + svc,
                                       R"({"spec": {"maxReplicas": 5, "image": "registry.local/api:2"}})",
                                       "application/json");
  ASSERT_EQ(patch.status, 200) << patch.text;
  EXPECT_EQ(patch.body.value("revision", 0), 2) << patch.body.dump();
  std::string diff = patch.body["diff"].dump();
  EXPECT_NE(diff.find("spec.maxReplicas"), std::string::npos) << diff;
  EXPECT_NE(diff.find("\"r2\""), std::string::npos) << diff;  // the image's version, named by the server
  auto revisions = server_->Client().Get("/api/v1/workloads/" + svc + "/revisions");
  ASSERT_EQ(revisions.status, 200) << revisions.text;
  EXPECT_EQ(revisions.body["items"].size(), 2u) << revisions.text;
  EXPECT_EQ(revisions.body["items"][1].value("image", ""), "registry.local/api:2");
}

// Issue 19.6: who borrows from whom, per queue and resource, in the API and `abacus get
// queues`; each pool's tenants in `abacus get pools`.
TEST_F(ServiceTest, QueuesShowBorrowedFromAndLentToAndPoolsTheirTenants) {
  auto applied = server_->Client().Post("/api/v1/apply", R"(kind: Cohort
name: shared
---
kind: Queue
name: qb
tenant: a
cohort: shared
quotas:
  - {resource: gpu/nvidia/A100-80G, nominal: 1, borrowingLimit: 4}
  - {resource: cpu, nominal: 8}
  - {resource: memory, nominal: 32Gi}
---
kind: Queue
name: qc
tenant: a
cohort: shared
quotas:
  - {resource: gpu/nvidia/A100-80G, nominal: 2}
  - {resource: cpu, nominal: 8}
  - {resource: memory, nominal: 32Gi}
)", "application/yaml");
  ASSERT_EQ(applied.status, 200) << applied.text;
  StartAgents();
  std::string job = Submit("kind: BatchJob\nname: wide\nproject: a/serve\nqueue: qb\nspec:\n"
                           "  command: [\"sleep\", \"600\"]\n  tasks: 1\n  parallelism: 1\n"
                           "  taskGroups:\n    - name: main\n      resources: {cpu: 1, memory: 1Gi, accelerators: "
                           "{flavor: gpu/nvidia/A100-80G, count: 2}}\n");
  ASSERT_TRUE(WaitFor([&] { return Get(job).value("state", "") == "Running"; }, std::chrono::seconds(30)))
      << Get(job).dump();
  auto usage = [&](const std::string& queue) {
    for (const auto& u : server_->Client().Get("/api/v1/queues/" + queue).body.value("usage", json::array())) {
      if (u.value("resource", "") == "gpu/nvidia/A100-80G") return u;
    }
    return json();
  };
  json qb = usage("qb"), qc = usage("qc");
  EXPECT_EQ(qb.value("borrowed", -1), 1000) << qb.dump();
  EXPECT_EQ(qb["borrowedFrom"], json::parse(R"([{"queue": "qc", "amount": 1000}])")) << qb.dump();
  EXPECT_EQ(qc.value("lent", -1), 1000) << qc.dump();
  EXPECT_EQ(qc["lentTo"], json::parse(R"([{"queue": "qb", "amount": 1000}])")) << qc.dump();
  const std::vector<std::string> env = {"ABACUS_SERVER=" + server_->url(), "ABACUS_TOKEN=" + server_->token()};
  CliResult queues = RunCli({"get", "queues"}, env);
  ASSERT_EQ(queues.code, 0) << queues.err;
  EXPECT_NE(queues.out.find("A100-80G 1 from qc"), std::string::npos) << queues.out;
  EXPECT_NE(queues.out.find("A100-80G 1 to qb"), std::string::npos) << queues.out;
  CliResult pools = RunCli({"get", "pools"}, env);
  ASSERT_EQ(pools.code, 0) << pools.err;
  EXPECT_NE(pools.out.find("TENANTS"), std::string::npos) << pools.out;
  json infer = server_->Client().Get("/api/v1/pools/infer").body;
  EXPECT_EQ(infer["tenantsAllowed"], json::parse(R"(["a"])")) << infer.dump();
  EXPECT_EQ(infer.value("nodes", 0), 1) << infer.dump();
}

// A file the tests' exec probes look at: present → the probe fails.
class ProbeSwitch {
 public:
  explicit ProbeSwitch(const TempDir& dir) : path_(dir.path() + "/broken") {}
  const std::string& path() const { return path_; }
  void Break() { std::ofstream(path_) << "x"; }

 private:
  std::string path_;
};

// Issue 19.5: a replica whose agent reports readiness failing (3 failed attempts, the default
// failureThreshold) is no longer ready in the service's status, and a ReplicaNotReady event says so.
TEST_F(ServiceTest, ReplicaIsNotReadyOnceItsAgentReportsReadinessFailingAtTheDefaultThreshold) {
  StartAgents();
  TempDir probe_dir;
  probe_dir.OpenToTasks();
  ProbeSwitch broken(probe_dir);
  std::string svc = Submit(
      "kind: InferenceService\nname: ready\nproject: a/serve\nqueue: qa\npriorityClass: production\nspec:\n"
      "  command: [\"sleep\", \"600\"]\n"
      "  taskGroups:\n    - name: server\n      resources: {cpu: 1, memory: 1Gi}\n"
      "  probes:\n    readiness:\n      exec: {command: [\"sh\", \"-c\", \"test ! -e " + broken.path() + "\"]}\n"
      "      periodSeconds: 1\n");
  ASSERT_TRUE(WaitFor([&] { return Get(svc).value("status", json::object()).value("readyReplicas", 0) == 1; },
                      std::chrono::seconds(30))) << Get(svc).dump();
  broken.Break();
  ASSERT_TRUE(WaitFor([&] { return !Events(svc, "ReplicaNotReady").empty(); }, std::chrono::seconds(30)))
      << EventTypes(svc) << Get(svc).dump();
  json w = Get(svc);
  EXPECT_EQ(w["status"].value("readyReplicas", -1), 0) << w.dump();
  EXPECT_FALSE(w["placements"][0].value("routed", false)) << w.dump();
}

// Issue 19.5: a canary whose readiness fails is rolled back at the default failureThreshold (3):
// event RolledBack, the replica back on the stable version and ready again.
TEST_F(ServiceTest, FailingCanaryIsRolledBackAtTheDefaultThreshold) {
  StartAgents();
  TempDir probe_dir;
  probe_dir.OpenToTasks();
  ProbeSwitch broken(probe_dir);
  // v2 breaks its readiness (the marker file), v1 repairs it.
  std::string svc = Submit(
      "kind: InferenceService\nname: canary\nproject: a/serve\nqueue: qa\npriorityClass: production\n"
      "labels: {version: v1}\nspec:\n"
      "  command: [\"sh\", \"-c\", \"if [ \\\"$ABACUS_VERSION\\\" = v2 ]; then touch " + broken.path() +
      "; else rm -f " + broken.path() + "; fi; sleep 600\"]\n"
      "  taskGroups:\n    - name: server\n      resources: {cpu: 1, memory: 1Gi}\n"
      "  probes:\n    readiness:\n      exec: {command: [\"sh\", \"-c\", \"test ! -e " + broken.path() + "\"]}\n"
      "      periodSeconds: 1\n"
      "  rollout: {version: v2, canaryReplicas: 1, promoteAfterSeconds: 600}\n");
  ASSERT_TRUE(WaitFor([&] { return !Events(svc, "CanaryStarted").empty(); }, std::chrono::seconds(30)))
      << EventTypes(svc) << Get(svc).dump();
  ASSERT_TRUE(WaitFor([&] { return !Events(svc, "RolledBack").empty(); }, std::chrono::seconds(40)))
      << EventTypes(svc) << Get(svc).dump();
  json rb = Events(svc, "RolledBack")[0]["details"];
  EXPECT_EQ(rb.value("version", ""), "v2") << rb.dump();
  EXPECT_EQ(rb.value("stableVersion", ""), "v1") << rb.dump();
  EXPECT_NE(rb.value("why", "").find("readiness"), std::string::npos) << rb.dump();
  ASSERT_TRUE(WaitFor([&] {
    json w = Get(svc);
    return w["placements"][0].value("version", "") == "v1" && w["status"].value("readyReplicas", 0) == 1;
  }, std::chrono::seconds(30))) << Get(svc).dump();
}

}  // namespace
}  // namespace abacus::testing
