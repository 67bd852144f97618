// REST API against a real `abacus server`: happy paths and every error status.
#include <gtest/gtest.h>

#include <httplib.h>

#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;

const std::string& kOrg = kAcmeOrg;

constexpr char kJob[] = R"(kind: TrainingJob
name: ft
project: acme/ml
queue: train
spec:
  command: ["python3", "train.py"]
  taskGroups:
    - name: worker
      replicas: 1
      resources:
        cpu: 8
        memory: 64Gi
        accelerators: {flavor: "gpu/nvidia/*", count: 4}
)";

json Node(const std::string& name, int gpus) {
  json devices = json::array();
  for (int i = 0; i < gpus; ++i) devices.push_back({{"index", i}, {"flavor", "gpu/nvidia/A100-80G"}, {"memory", "80Gi"}});
  return {{"name", name}, {"cpu", "64"}, {"memory", "512Gi"}, {"simulated", true}, {"devices", devices}};
}

class RestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(dir_.path(), std::vector<std::string>{"--max-body", "65536"});
  }
  // Applies the org, puts node cpu-1 (no GPU) and submits kJob, which waits there for GPUs;
  // returns its path ("/api/v1/workloads/ID"), "" when a step failed.
  std::string WaitingWorkload() {
    auto api = server_->Client();
    EXPECT_EQ(api.Post("/api/v1/apply", kOrg, "application/yaml").status, 200);
    EXPECT_EQ(api.Post("/api/v1/nodes", Node("cpu-1", 0).dump(), "application/json").status, 201);
    auto submitted = api.Post("/api/v1/workloads", kJob, "application/yaml");
    EXPECT_EQ(submitted.status, 201) << submitted.text;
    if (submitted.status != 201) return "";
    const std::string wl = "/api/v1/workloads/" + submitted.body["items"][0]["id"].get<std::string>();
    EXPECT_TRUE(WaitFor([&] { return api.Get(wl).body.contains("pendingReason"); }));
    return wl;
  }
  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(RestTest, HappyPathSubmitPlaceExplainCancel) {
  auto api = server_->Client();
  auto applied = api.Post("/api/v1/apply?filename=org.yaml", kOrg, "application/yaml");
  ASSERT_EQ(applied.status, 200) << applied.text;
  EXPECT_EQ(applied.body["items"].size(), 3u);
  EXPECT_EQ(applied.body["items"][2]["action"], "created");
  // Applying the same file again changes nothing.
  EXPECT_EQ(api.Post("/api/v1/apply", kOrg, "application/yaml").body["items"][2]["action"], "unchanged");

  auto node = api.Post("/api/v1/nodes", Node("gpu-1", 8).dump(), "application/json");
  ASSERT_EQ(node.status, 201) << node.text;

  auto submitted = api.Post("/api/v1/workloads?filename=job.yaml", kJob, "application/yaml");
  ASSERT_EQ(submitted.status, 201) << submitted.text;
  std::string id = submitted.body["items"][0]["id"];
  EXPECT_EQ(id.rfind("wl-", 0), 0u);

  // Read-your-writes, by id and by name.
  EXPECT_EQ(api.Get("/api/v1/workloads/" + id).status, 200);
  EXPECT_EQ(api.Get("/api/v1/workloads/ft").body["id"], id);

  ASSERT_TRUE(WaitFor([&] { return api.Get("/api/v1/workloads/" + id).body["state"] == "Admitted"; }));
  json w = api.Get("/api/v1/workloads/" + id).body;
  ASSERT_EQ(w["placements"].size(), 1u);
  EXPECT_EQ(w["placements"][0]["node"], "gpu-1");
  EXPECT_EQ(w["placements"][0]["devices"].size(), 4u);

  auto list = api.Get("/api/v1/workloads?queue=train&state=Admitted");
  EXPECT_EQ(list.body["total"], 1);
  EXPECT_EQ(api.Get("/api/v1/workloads?queue=other").body["total"], 0);

  auto explain = api.Get("/api/v1/workloads/ft/explain");
  ASSERT_EQ(explain.status, 200);
  EXPECT_NE(explain.body["text"].get<std::string>().find("gpu-1"), std::string::npos);

  // A second job of 8 GPUs exceeds the queue's quota of 8 with 4 used: pending, with numbers.
  std::string big = kJob;
  big.replace(big.find("name: ft"), 8, "name: big");
  big.replace(big.find("count: 4"), 8, "count: 8");
  auto second = api.Post("/api/v1/workloads", big, "application/yaml");
  ASSERT_EQ(second.status, 201);
  ASSERT_TRUE(WaitFor([&] { return api.Get("/api/v1/workloads/big").body.contains("pendingReason"); }));
  json reason = api.Get("/api/v1/workloads/big/explain").body;
  EXPECT_EQ(reason["reason"]["code"], "Quota") << reason.dump();
  EXPECT_NE(reason["text"].get<std::string>().find("nominal 8"), std::string::npos) << reason.dump();

  auto events = api.Get("/api/v1/workloads/" + id + "/events");
  ASSERT_EQ(events.status, 200);
  std::vector<std::string> types;
  for (const auto& e : events.body["items"]) types.push_back(e["type"]);
  EXPECT_EQ(types, (std::vector<std::string>{"Submitted", "Admitted", "Placed"}));

  auto logs = api.Get("/api/v1/workloads/" + id + "/logs");
  EXPECT_EQ(logs.status, 404);
  EXPECT_NE(logs.body["error"]["message"].get<std::string>().find("no logs: no task"), std::string::npos);

  // Scale: a TrainingJob cannot be scaled (409); bad body (400).
  EXPECT_EQ(api.Post("/api/v1/workloads/ft/scale", R"({"replicas": 2})", "application/json").status, 409);
  EXPECT_EQ(api.Post("/api/v1/workloads/ft/scale", R"({"n": 2})", "application/json").status, 400);

  // Cancel frees the quota; the big job is admitted next. Cancelling twice is an illegal transition.
  auto cancelled = api.Delete("/api/v1/workloads/" + id);
  ASSERT_EQ(cancelled.status, 200) << cancelled.text;
  EXPECT_EQ(cancelled.body["state"], "Cancelled");
  auto again = api.Post("/api/v1/workloads/" + id + "/cancel", "{}", "application/json");
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(again.body["error"]["code"], "failed_precondition");
  ASSERT_TRUE(WaitFor([&] { return api.Get("/api/v1/workloads/big").body["state"] == "Admitted"; }));

  // Listings.
  EXPECT_EQ(api.Get("/api/v1/nodes").body["items"].size(), 1u);
  EXPECT_EQ(api.Get("/api/v1/devices").body["items"].size(), 8u);
  EXPECT_EQ(api.Get("/api/v1/queues/train").body["admitted"], 1);
  EXPECT_EQ(api.Get("/api/v1/tenants").body["items"][0]["projects"][0], "ml");
  EXPECT_EQ(api.Get("/api/v1/projects/acme/ml").status, 200);
  EXPECT_GE(api.Get("/api/v1/priorityclasses").body["items"].size(), 7u);
  EXPECT_EQ(api.Get("/api/v1/flavors").body["items"][0]["devices"], 8);
}

TEST_F(RestTest, ErrorsAreJsonWithTheRightStatus) {
  auto api = server_->Client();
  // 401: no token, wrong token.
  cli::ApiClient anonymous({server_->url(), ""});
  auto r401 = anonymous.Get("/api/v1/workloads");
  EXPECT_EQ(r401.status, 401);
  EXPECT_EQ(r401.body["error"]["code"], "unauthenticated");
  EXPECT_EQ(cli::ApiClient({server_->url(), "wrong"}).Get("/api/v1/nodes").status, 401);
  EXPECT_EQ(anonymous.Get("/metrics").status, 401);
  // /healthz needs none; nor do the way to the dashboard and the browser's icon request.
  EXPECT_EQ(anonymous.Get("/healthz").status, 200);
  httplib::Client browser(server_->url());
  auto root = browser.Get("/");
  ASSERT_TRUE(root);
  EXPECT_EQ(root->status, 302);
  EXPECT_EQ(root->get_header_value("Location"), "/ui/");
  auto icon = browser.Get("/favicon.ico");
  ASSERT_TRUE(icon);
  EXPECT_EQ(icon->status, 204);
  EXPECT_EQ(anonymous.Get("/api/v1/workloads").status, 401);  // the API still is not open
  EXPECT_EQ(api.Get("/readyz").status, 200);
  // 403: the join token is for agents only.
  auto r403 = cli::ApiClient({server_->url(), server_->join_token()}).Get("/api/v1/workloads");
  EXPECT_EQ(r403.status, 403);
  EXPECT_EQ(r403.body["error"]["code"], "permission_denied");
  // 404: unknown workload, unknown route.
  auto r404 = api.Get("/api/v1/workloads/nope");
  EXPECT_EQ(r404.status, 404);
  EXPECT_EQ(r404.body["error"]["code"], "not_found");
  EXPECT_EQ(api.Get("/api/v1/nothing").body["error"]["code"], "not_found");
  // 400: every problem as FILE:LINE: field: message.
  std::string bad = std::string(kJob) + "  maxRuntime: forever\n";
  bad.replace(bad.find("replicas: 1"), 11, "replicas: -3");
  auto r400 = api.Post("/api/v1/workloads?filename=bad.yaml", bad, "application/yaml");
  EXPECT_EQ(r400.status, 400);
  ASSERT_TRUE(r400.body["error"].contains("details")) << r400.text;
  EXPECT_GE(r400.body["error"]["details"].size(), 2u) << r400.text;
  for (const auto& d : r400.body["error"]["details"]) EXPECT_EQ(d.get<std::string>().rfind("bad.yaml:", 0), 0u) << d;
  // 400: unknown queue reference (the server knows the configuration).
  ASSERT_EQ(api.Post("/api/v1/apply", kOrg, "application/yaml").status, 200);
  std::string ghost = kJob;
  ghost.replace(ghost.find("queue: train"), 12, "queue: ghost");
  auto unknown_queue = api.Post("/api/v1/workloads?filename=j.yaml", ghost, "application/yaml");
  EXPECT_EQ(unknown_queue.status, 400) << unknown_queue.text;
  // 400: config kinds do not go to submit, workloads do not go to apply.
  EXPECT_EQ(api.Post("/api/v1/workloads", kOrg, "application/yaml").status, 400);
  EXPECT_EQ(api.Post("/api/v1/apply", kJob, "application/yaml").status, 400);
  // 400: malformed JSON.
  EXPECT_EQ(api.Post("/api/v1/workloads", "{not json", "application/json").status, 400);
  // 413: bodies beyond --max-body.
  auto r413 = api.Post("/api/v1/workloads", std::string(70000, '#'), "application/yaml");
  EXPECT_EQ(r413.status, 413);
  EXPECT_EQ(r413.body["error"]["code"], "payload_too_large");
  // Metrics are Prometheus text.
  auto metrics = api.Get("/metrics");
  EXPECT_NE(metrics.text.find("# TYPE abacus_scheduling_cycle_seconds histogram"), std::string::npos);
  EXPECT_NE(metrics.text.find("abacus_store_commit_seconds_bucket"), std::string::npos);
}

// Every route that reads a JSON body refuses one that is not JSON with 400 (where and why), and
// the request changes nothing: a malformed cancel once cancelled with no reason, a malformed
// metrics or node body was only refused because each route checked for itself.
TEST_F(RestTest, MalformedBodiesAreRefusedAndChangeNothing) {
  auto api = server_->Client();
  const std::string wl = WaitingWorkload();
  ASSERT_FALSE(wl.empty());
  const std::vector<std::string> paths = {
      wl + "/cancel", wl + "/scale", wl + "/quota", wl + "/metrics", wl + "/priority", wl + "/hold",
      wl + "/rollback", "/api/v1/queues/train/suspend", "/api/v1/nodes/cpu-1/cordon", "/api/v1/nodes/cpu-1/drain",
      "/api/v1/nodes", "/api/v1/workloads", "/api/v1/apply", "/api/v1/tokens", "/api/v1/secrets",
      "/api/v1/tokens/rotate-admin", "/api/v1/secrets/reencrypt"};
  for (const std::string& body : {std::string("{\"reason\": \"x\",\n \"grace\": nope}"), std::string("{")}) {
    for (const std::string& path : paths) {
      auto r = api.Post(path, body, "application/json");
      EXPECT_EQ(r.status, 400) << path << ": " << r.text;
      EXPECT_EQ(r.body["error"]["code"], "invalid_argument") << path << ": " << r.text;
      EXPECT_NE(r.text.find("not valid JSON"), std::string::npos) << path << ": " << r.text;
    }
    auto patched = api.Patch(wl, body, "application/merge-patch+json");
    EXPECT_EQ(patched.status, 400) << patched.text;
  }
  // The line and column name where the body broke, not the bytes it held.
  auto where = api.Post(wl + "/cancel", "{\"reason\": \"x\",\n \"y\": SECRETVALUE}", "application/json");
  EXPECT_NE(where.text.find("line 2"), std::string::npos) << where.text;
  EXPECT_EQ(where.text.find("SECRET"), std::string::npos) << where.text;
  // A body that is JSON but not the shape the cancel reads is refused too.
  EXPECT_EQ(api.Post(wl + "/cancel", R"({"reason": 5})", "application/json").status, 400);
  EXPECT_EQ(api.Post(wl + "/cancel", R"("stop")", "application/json").status, 400);
  // So is a field of the wrong type elsewhere: refused and named, never dropped as if not sent
  // (a cordon without its reason, a token issued to the caller instead of the user named).
  for (const std::string path : {"/api/v1/nodes/cpu-1/cordon", "/api/v1/nodes/cpu-1/drain"}) {
    auto r = api.Post(path, R"({"reason": 5})", "application/json");
    EXPECT_EQ(r.status, 400) << path << ": " << r.text;
    EXPECT_NE(r.text.find("reason: expected a string"), std::string::npos) << path << ": " << r.text;
  }
  auto token = api.Post("/api/v1/tokens", R"({"user": 5})", "application/json");
  EXPECT_EQ(token.status, 400) << token.text;
  EXPECT_NE(token.text.find("user: expected a string"), std::string::npos) << token.text;
  // Nothing changed: the workload waits as it did, the queue runs, the node is schedulable.
  json w = api.Get(wl).body;
  EXPECT_NE(w["state"], "Cancelled") << w.dump();
  EXPECT_FALSE(w.contains("message") && w["message"].get<std::string>().find("cancel") != std::string::npos) << w.dump();
  EXPECT_FALSE(api.Get("/api/v1/queues/train").body.contains("suspended"));
  EXPECT_FALSE(api.Get("/api/v1/nodes/cpu-1").body.contains("cordon"));
  // The well-formed cancel still works, with its reason.
  auto cancelled = api.Post(wl + "/cancel", R"({"reason": "done"})", "application/json");
  ASSERT_EQ(cancelled.status, 200) << cancelled.text;
  EXPECT_EQ(cancelled.body["state"], "Cancelled");
  EXPECT_EQ(api.Get(wl).body["message"], "cancelled: done");
}

// A misspelt field in an action body was taken as absent (a security team's probe):
// {"expire": "1h"} gave a token that never expires, {"reson": "x"} cancelled the workload without
// its reason, {"graze": "1m"} drained the node with the default grace, {"dryRun": true} in a scale
// body scaled. Every action body now refuses a field it does not read, naming it. So are query
// numbers that are not numbers of the range asked (a negative log tail answered 500), and the
// priority route lists the classes it knows and records a change only when there is one.
TEST_F(RestTest, MisspeltFieldsAndBadNumbersAreRefusedAndChangeNothing) {
  auto api = server_->Client();
  const std::string wl = WaitingWorkload();
  ASSERT_FALSE(wl.empty());
  const size_t tokens_before = api.Get("/api/v1/tokens").body["items"].size();
  struct Case {
    std::string path, body, field;
  };
  const std::vector<Case> cases = {
      {"/api/v1/tokens", R"({"description": "ci", "expire": "1h"})", "expire"},
      {wl + "/cancel", R"({"reson": "x"})", "reson"},
      {"/api/v1/nodes/cpu-1/drain", R"({"graze": "1m"})", "graze"},
      {"/api/v1/nodes/cpu-1/cordon", R"({"reason": "x", "bogus": 1})", "bogus"},
      {wl + "/scale", R"({"replicas": 2, "dryRun": true})", "dryRun"},
      {wl + "/priority", R"({"priority": 5, "by": "me"})", "by"},
      {wl + "/hold", R"({"reason": "x"})", "reason"},
      {wl + "/quota", R"({"approve": true, "why": "x"})", "why"},
      {wl + "/rollback", R"({"rev": 1})", "rev"},
      {"/api/v1/queues/train/suspend", R"({"reason": "x"})", "reason"},
      {"/api/v1/tokens/rotate-admin", R"({"x": 1})", "x"},
      {"/api/v1/secrets/reencrypt", R"({"x": 1})", "x"},
  };
  for (const Case& c : cases) {
    auto r = api.Post(c.path, c.body, "application/json");
    EXPECT_EQ(r.status, 400) << c.path << ": " << r.text;
    EXPECT_EQ(r.body["error"]["code"], "invalid_argument") << c.path << ": " << r.text;
    EXPECT_NE(r.text.find("unknown field '" + c.field + "'"), std::string::npos) << c.path << ": " << r.text;
  }
  // Nothing changed: no token, the workload waits, the node and the queue are as they were.
  EXPECT_EQ(api.Get("/api/v1/tokens").body["items"].size(), tokens_before);
  json w = api.Get(wl).body;
  EXPECT_NE(w["state"], "Cancelled") << w.dump();
  EXPECT_NE(w["state"], "Held") << w.dump();
  EXPECT_FALSE(api.Get("/api/v1/nodes/cpu-1").body.contains("cordon"));
  EXPECT_FALSE(api.Get("/api/v1/queues/train").body.contains("suspended"));
  // A token's description is a bounded line: no 100,000 characters, no NUL byte.
  json long_description = {{"description", std::string(300, 'd')}};
  EXPECT_EQ(api.Post("/api/v1/tokens", long_description.dump(), "application/json").status, 400);
  EXPECT_EQ(api.Post("/api/v1/tokens", R"({"description": "a\u0000b"})", "application/json").status, 400);

  // Numbers in the query: the whole text, in range, or 400 naming the parameter.
  for (const std::string q : {"logs?tail=-1", "logs?tail=12abc", "logs?tail=-9223372036854775808",
                              "logs?follow=1&tail=-1", "logs?follow=1&timeoutSeconds=301"}) {
    auto r = api.Get(wl + "/" + q);
    EXPECT_EQ(r.status, 400) << q << ": " << r.text;
    EXPECT_NE(r.text.find(": expected a whole number from 0 to"), std::string::npos) << q << ": " << r.text;
  }
  for (const std::string q : {"/api/v1/audit?limit=-1", "/api/v1/audit?after=1x"}) {
    EXPECT_EQ(api.Get(q).status, 400) << q;
  }
  for (const std::string q : {"nan", "0.05x", "-1"}) {
    auto r = api.Get("/api/v1/reports/idle?threshold=" + q);
    EXPECT_EQ(r.status, 400) << q << ": " << r.text;
    EXPECT_NE(r.text.find("threshold: expected a number from 0 to 1"), std::string::npos) << q << ": " << r.text;
  }

  // An unknown priority class: the answer lists the classes a workload may name, the built-in
  // ones included. The same priority twice is one change, one event.
  auto unknown = api.Post(wl + "/priority", R"({"priority": "nosuchclass"})", "application/json");
  EXPECT_EQ(unknown.status, 400) << unknown.text;
  EXPECT_NE(unknown.text.find("training"), std::string::npos) << unknown.text;
  EXPECT_NE(unknown.text.find("production"), std::string::npos) << unknown.text;
  ASSERT_EQ(api.Post(wl + "/priority", R"({"priority": 500})", "application/json").status, 200);
  auto again = api.Post(wl + "/priority", R"({"priority": 500})", "application/json");
  ASSERT_EQ(again.status, 200) << again.text;
  EXPECT_EQ(again.body["priority"], 500) << again.text;
  int changes = 0;
  auto read = api.Get(wl + "/events");
  ASSERT_EQ(read.status, 200) << read.text;
  json events = read.body;
  for (const json& e : events["items"]) changes += e["type"] == "PriorityChanged";
  EXPECT_EQ(changes, 1) << events.dump();
}

// A per-kind route took any kind: POST /api/v1/queues with a Tenant document created the tenant
// (a security team's probe). Each takes its own kind only; /api/v1/apply takes any.
TEST_F(RestTest, APerKindRouteTakesItsKindOnly) {
  auto api = server_->Client();
  auto wrong = api.Post("/api/v1/queues", "kind: Tenant\nname: sneaky\n", "application/yaml");
  EXPECT_EQ(wrong.status, 400) << wrong.text;
  EXPECT_NE(wrong.text.find("this route takes Queue documents, got Tenant"), std::string::npos) << wrong.text;
  EXPECT_EQ(api.Get("/api/v1/tenants/sneaky").status, 404);
  auto mixed = api.Post("/api/v1/tenants", "kind: Tenant\nname: t9\n---\nkind: Cohort\nname: c9\n", "application/yaml");
  EXPECT_EQ(mixed.status, 400) << mixed.text;
  EXPECT_NE(mixed.text.find(":4: kind: this route takes Tenant documents, got Cohort"), std::string::npos) << mixed.text;
  EXPECT_EQ(api.Get("/api/v1/tenants/t9").status, 404);  // nothing of a refused body is applied
  EXPECT_EQ(api.Post("/api/v1/tenants", "kind: Tenant\nname: t9\n", "application/yaml").status, 200);
  EXPECT_EQ(api.Post("/api/v1/apply", "kind: Cohort\nname: c9\n", "application/yaml").status, 200);
}

// A JSON submission's problems named no line ("jobs.json: spec.command: expected a list"), where a
// YAML file's name theirs: a body that does not decode is read again with positions.
TEST_F(RestTest, AJsonSubmissionsProblemsNameTheirLine) {
  auto api = server_->Client();
  ASSERT_EQ(api.Post("/api/v1/apply", kOrg, "application/yaml").status, 200);
  const std::string group = R"("taskGroups": [{"name": "w", "resources": {"cpu": 1, "memory": "1Gi"}}])";
  const std::string body =
      "[\n"
      "  {\"kind\": \"TrainingJob\", \"name\": \"fine\", \"project\": \"acme/ml\", \"queue\": \"train\",\n"
      "   \"spec\": {\"command\": [\"true\"], " + group + "}},\n"
      "  {\"kind\": \"TrainingJob\", \"name\": \"broken\", \"project\": \"acme/ml\", \"queue\": \"train\",\n"
      "   \"spec\": {\"command\": true,\n"
      "            " + group + "}}\n"
      "]\n";
  auto r = api.Post("/api/v1/workloads?filename=jobs.json", body, "application/json");
  EXPECT_EQ(r.status, 400) << r.text;
  EXPECT_NE(r.text.find("jobs.json:5: spec.command: expected a list"), std::string::npos) << r.text;
  EXPECT_EQ(api.Get("/api/v1/workloads/fine").status, 404);  // nothing of a refused body is submitted
  // Well-formed, the same body is taken (the fast path, no second reading).
  std::string fixed = body;
  fixed.replace(fixed.find("\"command\": true"), 15, "\"command\": [\"true\"]");
  EXPECT_EQ(api.Post("/api/v1/workloads?filename=jobs.json", fixed, "application/json").status, 201);
}

TEST_F(RestTest, SigtermShutsDownCleanlyAndStateSurvives) {
  auto api = server_->Client();
  ASSERT_EQ(api.Post("/api/v1/apply", kOrg, "application/yaml").status, 200);
  ASSERT_EQ(api.Post("/api/v1/workloads", kJob, "application/yaml").status, 201);
  EXPECT_EQ(server_->Terminate(), 0);
  server_->Start();
  auto again = server_->Client();
  EXPECT_EQ(again.Get("/api/v1/workloads/ft").status, 200);
  EXPECT_EQ(again.Get("/api/v1/queues").body["items"].size(), 1u);
}

}  // namespace
}  // namespace abacus::testing
