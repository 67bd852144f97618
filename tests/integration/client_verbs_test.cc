// Issue 23, the client's part, each with the real binary against a real server: `abacus run`,
// dry runs (submit/apply --dry-run, apply --diff), the submitter of each workload (-o wide,
// report --by user), tenant admins reading their own tenants' reports, report --from in the
// forms audit --since takes, admin token rotation, user token revocation and the break-glass
// reset of the admin token.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "server/server_test_util.h"
#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;
namespace org = server::testing_org;

// t1 (project p1, queue q1) and t2 (p3, q2), 16 cores each; members alice of t1/p1 and bob of
// t2/p3, tia tenant-admin of t1.
const std::string kOrg = org::Org(
    org::TwoTenants("p3"), {{"cpu", "16"}, {"memory", "64Gi"}},
    {org::Member("alice", "t1/p1"), org::Member("bob", "t2/p3"),
     org::TenantAdmin("tia", "t1")});

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string Job(const std::string& name, const std::string& project, const std::string& queue, int cpu = 1) {
  return "kind: TrainingJob\nname: " + name + "\nproject: " + project + "\nqueue: " + queue +
         "\nspec:\n  command: [\"true\"]\n  taskGroups:\n    - name: w\n      resources: {cpu: " + std::to_string(cpu) +
         ", memory: 1Gi}\n";
}

class ClientVerbsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(dir_.path());
    auto admin = server_->Client();
    auto applied = admin.Post("/api/v1/apply?filename=org.yaml", kOrg, "application/yaml");
    ASSERT_EQ(applied.status, 200) << applied.text;
    json node = {{"name", "cpu-a"}, {"cpu", "32"}, {"memory", "128Gi"}, {"simulated", true}};
    ASSERT_TRUE(admin.Post("/api/v1/nodes", node.dump(), "application/json").ok());
    for (const char* user : {"alice", "bob", "tia"}) {
      auto r = admin.Post("/api/v1/tokens", json{{"user", user}}.dump(), "application/json");
      ASSERT_EQ(r.status, 201) << r.text;
      tokens_[user] = r.body["token"];
    }
  }
  std::vector<std::string> Env(const std::string& user = "") const {
    return {"ABACUS_SERVER=" + server_->url(), "ABACUS_TOKEN=" + (user.empty() ? server_->token() : tokens_.at(user))};
  }
  CliResult Run(const std::vector<std::string>& args, const std::string& user = "", const std::string& in = "") {
    return RunCli(args, Env(user), in);
  }
  json Workloads() { return server_->Client().Get("/api/v1/workloads").body["items"]; }
  size_t AuditEntries() {
    auto r = server_->Client().Get("/api/v1/audit");
    return static_cast<size_t>(std::count(r.text.begin(), r.text.end(), '\n'));
  }
  bool Admitted(const std::string& name) {
    return WaitFor([&] {
      auto r = server_->Client().Get("/api/v1/workloads/" + name);
      return r.ok() && r.body.value("state", "") == "Admitted";
    });
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::map<std::string, std::string> tokens_;
};

TEST_F(ClientVerbsTest, RunSubmitsAJobFromFlagsThroughSubmitsPath) {
  auto r = Run({"run", "hello", "--queue", "q1", "--project", "t1/p1", "--cpu", "2", "--memory", "1Gi", "--env",
                "STEP=1", "--label", "team=nlp", "--", "python3", "train.py", "--lr", "3e-4"},
               "alice");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(Contains(r.out, "TrainingJob/hello submitted to queue q1")) << r.out;
  EXPECT_EQ(r.out.rfind("wl-", 0), 0u) << r.out;  // the id first, as submit prints it
  auto w = server_->Client().Get("/api/v1/workloads/hello");
  ASSERT_TRUE(w.ok()) << w.text;
  const json& spec = w.body["spec"];
  EXPECT_EQ(spec["spec"]["command"], json({"python3", "train.py", "--lr", "3e-4"})) << spec.dump();
  EXPECT_EQ(spec["spec"]["env"]["STEP"], "1");
  EXPECT_EQ(spec["labels"]["team"], "nlp");
  EXPECT_EQ(spec["spec"]["taskGroups"][0]["resources"]["cpu"], "2") << spec.dump();
  EXPECT_EQ(w.body.value("submittedBy", ""), "alice");

  // The same validation and errors as submit -f: an unknown queue is the server's 400, exit 1.
  auto bad_queue =
      Run({"run", "x", "--queue", "nope", "--project", "t1/p1", "--cpu", "1", "--memory", "1Gi", "--", "true"});
  EXPECT_EQ(bad_queue.code, 1);
  EXPECT_TRUE(Contains(bad_queue.err, "nope")) << bad_queue.err;
  auto bad_cpu =
      Run({"run", "x", "--queue", "q1", "--project", "t1/p1", "--cpu", "lots", "--memory", "1Gi", "--", "true"});
  // A bad amount is named by its flag (the probe of 2026-12-07: "abacus run:17", a line of a
  // document the user never saw).
  EXPECT_EQ(bad_cpu.code, 2);
  EXPECT_TRUE(Contains(bad_cpu.err, "--cpu 'lots': expected cores")) << bad_cpu.err;
  auto bad_gpus = Run({"run", "x", "--queue", "q1", "--project", "t1/p1", "--gpus", "gpu/nvidia/A100-80G:two", "--",
                       "true"});
  EXPECT_EQ(bad_gpus.code, 2);
  EXPECT_TRUE(Contains(bad_gpus.err, "expected FLAVOR:COUNT")) << bad_gpus.err;
  auto no_command = Run({"run", "x", "--queue", "q1", "--project", "t1/p1"});
  EXPECT_EQ(no_command.code, 2);
  auto help = RunCli({"run", "--help"});
  EXPECT_TRUE(Contains(help.out, "Examples: abacus run llama-ft")) << help.out;
  // Without --cpu and --memory (cli.md's own example): one core and 2Gi, as the help says.
  auto plain = Run({"run", "plain", "--queue", "q1", "--project", "t1/p1", "--", "true"}, "alice");
  ASSERT_EQ(plain.code, 0) << plain.err;
  auto p = server_->Client().Get("/api/v1/workloads/plain");
  EXPECT_EQ(p.body["spec"]["spec"]["taskGroups"][0]["resources"]["cpu"], "1") << p.text;
  EXPECT_EQ(p.body["spec"]["spec"]["taskGroups"][0]["resources"]["memory"], "2Gi") << p.text;
  EXPECT_TRUE(Contains(help.out, "--cpu TEXT=1")) << help.out;
  EXPECT_EQ(Workloads().size(), 2u);
}

TEST_F(ClientVerbsTest, DryRunsCheckExplainAndStoreNothing) {
  std::string job = dir_.path() + "/job.yaml";
  std::ofstream(job) << Job("trial", "t1/p1", "q1", 4);
  size_t audited = AuditEntries();
  auto fits = Run({"submit", "-f", job, "--dry-run"});
  ASSERT_EQ(fits.code, 0) << fits.err;
  EXPECT_TRUE(Contains(fits.out, "TrainingJob/trial in queue q1 (dry run, nothing stored): would be admitted now"))
      << fits.out;
  EXPECT_TRUE(Contains(fits.out, "cpu-a: w[0]")) << fits.out;
  // Over the queue's quota: where it would wait and why, in the scheduler's words.
  std::ofstream(job) << Job("big", "t1/p1", "q1", 20);
  auto waits = Run({"submit", "-f", job, "--dry-run", "-o", "json"});
  ASSERT_EQ(waits.code, 0) << waits.err;
  json item = json::parse(waits.out)["items"][0];
  EXPECT_EQ(item["wouldBe"], "Pending") << item.dump();
  EXPECT_FALSE(item["reason"].value("message", "").empty()) << item.dump();
  // Roles are checked as on submit: bob may not submit to t1.
  std::ofstream(job) << Job("trial", "t1/p1", "q1", 4);
  auto denied = Run({"submit", "-f", job, "--dry-run"}, "bob");
  EXPECT_EQ(denied.code, 1);
  EXPECT_TRUE(Contains(denied.err, "may not")) << denied.err;
  EXPECT_TRUE(Workloads().empty());
  EXPECT_EQ(AuditEntries(), audited);  // a dry run changes nothing, so it is not in the chain

  // apply --dry-run / --diff of configuration: what would change, per object; nothing applied.
  std::string queue = dir_.path() + "/queue.yaml";
  std::ofstream(queue) << "kind: Queue\nname: q1\ntenant: t1\nquotas:\n  - {resource: cpu, nominal: 24}\n"
                          "  - {resource: memory, nominal: 64Gi}\n---\nkind: Tenant\nname: t1\n";
  auto diff = Run({"apply", "-f", queue, "--diff"});
  ASSERT_EQ(diff.code, 0) << diff.err;
  EXPECT_TRUE(Contains(diff.out, "Queue/q1 configured (dry run)\n  quotas[0].nominal: 16 -> 24")) << diff.out;
  EXPECT_TRUE(Contains(diff.out, "Tenant/t1 unchanged (dry run)")) << diff.out;
  auto q1 = server_->Client().Get("/api/v1/queues/q1");
  EXPECT_TRUE(Contains(q1.text, "16")) << q1.text;  // not applied
  auto plain = Run({"apply", "-f", queue, "--dry-run"});
  EXPECT_TRUE(Contains(plain.out, "Queue/q1 configured (dry run)\n")) << plain.out;
  EXPECT_FALSE(Contains(plain.out, "nominal: 16 -> 24")) << plain.out;

  // apply --diff of a workload that exists: the update's diff, no new revision.
  std::ofstream(job) << Job("trial", "t1/p1", "q1", 4);
  ASSERT_EQ(Run({"submit", "-f", job}).code, 0);
  std::string changed = Job("trial", "t1/p1", "q1", 4);
  changed.replace(changed.find("[\"true\"]"), 8, "[\"false\"]");
  std::ofstream(job) << changed;
  auto update = Run({"apply", "-f", job, "--diff"});
  ASSERT_EQ(update.code, 0) << update.err;
  EXPECT_TRUE(Contains(update.out, "would be updated (revision 2)")) << update.out;
  EXPECT_TRUE(Contains(update.out, "spec.command")) << update.out;
  auto revisions = server_->Client().Get("/api/v1/workloads/trial/revisions");
  EXPECT_EQ(revisions.body["items"].size(), 1u) << revisions.text;
}

TEST_F(ClientVerbsTest, SubmitterShownAndReportsScopedToTheCallersTenants) {
  auto alice = Run({"run", "a1", "--queue", "q1", "--project", "t1/p1", "--cpu", "1", "--memory", "1Gi", "--", "true"}, "alice");
  ASSERT_EQ(alice.code, 0) << alice.err;
  auto bob = Run({"run", "b1", "--queue", "q2", "--project", "t2/p3", "--cpu", "1", "--memory", "1Gi", "--", "true"}, "bob");
  ASSERT_EQ(bob.code, 0) << bob.err;
  ASSERT_TRUE(Admitted("a1"));
  ASSERT_TRUE(Admitted("b1"));
  auto wide = Run({"get", "workloads", "-o", "wide"});
  ASSERT_EQ(wide.code, 0) << wide.err;
  EXPECT_TRUE(Contains(wide.out.substr(0, wide.out.find('\n')), "SUBMITTED BY")) << wide.out;
  EXPECT_TRUE(Contains(wide.out, "alice")) << wide.out;
  EXPECT_TRUE(Contains(wide.out, "bob")) << wide.out;
  auto described = Run({"describe", "workload", "a1"});
  EXPECT_TRUE(Contains(described.out, " by alice")) << described.out;  // "Submitted:    5s ago (…) by alice"

  // Per-user chargeback, for the admin: both users.
  auto by_user = Run({"report", "usage", "--by", "user", "--from", "1d", "-o", "csv"});
  ASSERT_EQ(by_user.code, 0) << by_user.err;
  EXPECT_TRUE(Contains(by_user.out, "\nalice,")) << by_user.out;
  EXPECT_TRUE(Contains(by_user.out, "\nbob,")) << by_user.out;

  // A tenant admin: its tenant's rows only, workloads by name. Before: 403 "it spans every tenant".
  for (const char* kind : {"usage", "wait", "failures"}) {
    std::string by = std::string(kind) == "usage" ? "tenant,workload,user" : "tenant,user";
    auto mine = Run({"report", kind, "--by", by, "--from", "yesterday", "-o", "csv"}, "tia");
    ASSERT_EQ(mine.code, 0) << kind << ": " << mine.err;
    EXPECT_FALSE(Contains(mine.out, "t2")) << kind << ": " << mine.out;
    EXPECT_FALSE(Contains(mine.out, "bob")) << kind << ": " << mine.out;
    if (std::string(kind) != "failures") {
      EXPECT_TRUE(Contains(mine.out, "t1")) << kind << ": " << mine.out;
    }
  }
  auto usage = Run({"report", "usage", "--by", "workload", "-o", "csv"}, "tia");
  EXPECT_TRUE(Contains(usage.out, "\na1,")) << usage.out;  // its name, not its id
  auto evidence = Run({"report", "evidence", "-o", "json"}, "tia");
  ASSERT_EQ(evidence.code, 0) << evidence.err;
  EXPECT_FALSE(Contains(evidence.out, "b1")) << evidence.out;
  EXPECT_FALSE(Contains(evidence.out, "\"t2\"")) << evidence.out;
  // The chain is verified whole, but its size (the whole cluster's activity) is not shown to one
  // tenant (the probe of 2026-12-07); an admin sees it.
  const json chain = json::parse(evidence.out, nullptr, false).value("auditChain", json::object());
  EXPECT_EQ(chain.value("ok", false), true) << evidence.out;
  EXPECT_FALSE(chain.contains("entries")) << chain.dump();
  auto whole = Run({"report", "evidence", "-o", "json"});
  EXPECT_TRUE(json::parse(whole.out, nullptr, false).value("auditChain", json::object()).contains("entries")) << whole.out;
  // A project member reads no report; the answer says who may.
  auto member = Run({"report", "usage"}, "alice");
  EXPECT_EQ(member.code, 1);
  EXPECT_TRUE(Contains(member.err, "reports are for admins, tenant admins")) << member.err;

  // --from/--to take what audit --since takes; anything else names the forms.
  EXPECT_EQ(Run({"report", "wait", "--from", "7d", "--to", "now"}).code, 0);
  EXPECT_EQ(Run({"report", "wait", "--from", "2026-01-01"}).code, 0);
  auto bad = Run({"report", "wait", "--from", "last week"});
  EXPECT_EQ(bad.code, 1);
  EXPECT_TRUE(Contains(bad.err, "from: 'last week': expected a time like")) << bad.err;
  EXPECT_EQ(Run({"audit", "--since", "yesterday"}).code, 0);

  // A filter the route does not read is refused by name, not dropped: ?tenant=t1 on a report or
  // the audit answered every tenant's rows (the fifth probe).
  auto admin = server_->Client();
  for (const char* path : {"/api/v1/reports/usage?tenant=t1", "/api/v1/audit?tenant=t1"}) {
    auto r = admin.Get(path);
    EXPECT_EQ(r.status, 400) << path << ": " << r.text;
    EXPECT_TRUE(Contains(r.text, "tenant: not a query parameter of this route; allowed: ")) << path << ": " << r.text;
  }
  EXPECT_EQ(admin.Get("/api/v1/reports/usage?by=tenant&from=1d&format=json").status, 200);
}

// `abacus get shares`, like sshare: every queue's fair share over time, -o json, and a tenant's
// user sees only its tenant's queues.
TEST_F(ClientVerbsTest, GetSharesListsFairShareLikeSshare) {
  auto table = Run({"get", "shares"});
  ASSERT_EQ(table.code, 0) << table.err;
  EXPECT_TRUE(Contains(table.out.substr(0, table.out.find('\n')),
                       "QUEUE  COHORT  RAW USAGE  DECAYED USAGE  WEIGHT  SHARE  FAIR SHARE"))
      << table.out;
  EXPECT_TRUE(Contains(table.out, "\nq1 ")) << table.out;
  EXPECT_TRUE(Contains(table.out, "\nq2 ")) << table.out;
  auto as_json = Run({"get", "shares", "-o", "json"});
  ASSERT_EQ(as_json.code, 0) << as_json.err;
  json parsed = json::parse(as_json.out);
  ASSERT_TRUE(parsed.is_array() || parsed.contains("items")) << as_json.out;
  const json items = parsed.is_array() ? parsed : parsed["items"];
  ASSERT_EQ(items.size(), 2u) << as_json.out;
  EXPECT_EQ(items[0]["fairShare"], 1.0) << as_json.out;  // nothing used yet
  auto alice = Run({"get", "shares"}, "alice");
  ASSERT_EQ(alice.code, 0) << alice.err;
  EXPECT_TRUE(Contains(alice.out, "\nq1 ")) << alice.out;
  EXPECT_FALSE(Contains(alice.out, "q2")) << alice.out;  // another tenant's queue is absent
}

TEST_F(ClientVerbsTest, AdminTokenRotationUserRevocationAndBreakGlass) {
  std::string old_token = server_->token();
  auto refused = Run({"token", "rotate-admin"}, "tia");
  EXPECT_EQ(refused.code, 1);
  EXPECT_TRUE(Contains(refused.err, "admins only")) << refused.err;
  auto rotated = Run({"token", "rotate-admin"});
  ASSERT_EQ(rotated.code, 0) << rotated.err;
  std::string fresh = rotated.out.substr(0, rotated.out.find('\n'));
  ASSERT_EQ(fresh.size(), 64u) << rotated.out;
  EXPECT_TRUE(Contains(rotated.err, "the old one no longer works")) << rotated.err;
  std::string on_disk = ReadFile(server_->data_dir() + "/admin.token");
  EXPECT_EQ(on_disk, fresh + "\n");
  EXPECT_EQ(RunCli({"get", "nodes"}, {"ABACUS_SERVER=" + server_->url(), "ABACUS_TOKEN=" + old_token}).code, 1);
  std::vector<std::string> as_new = {"ABACUS_SERVER=" + server_->url(), "ABACUS_TOKEN=" + fresh};
  EXPECT_EQ(RunCli({"get", "nodes"}, as_new).code, 0);
  auto audit = RunCli({"audit", "-o", "jsonl"}, as_new);
  EXPECT_TRUE(Contains(audit.out, "\"admin-token-rotate\"")) << audit.out;
  EXPECT_FALSE(Contains(audit.out, fresh));  // never the secret

  // Every token of a user, revoked by name.
  auto revoked = RunCli({"token", "revoke", "--user", "alice"}, as_new);
  ASSERT_EQ(revoked.code, 0) << revoked.err;
  EXPECT_TRUE(Contains(revoked.out, "(user alice)")) << revoked.out;
  EXPECT_EQ(Run({"get", "workloads"}, "alice").code, 1);
  EXPECT_EQ(RunCli({"token", "revoke"}, as_new).code, 2);

  // Break-glass: refused while the server holds the data folder; with it stopped, a new token
  // the restarted server accepts.
  auto busy = RunCli({"admin", "reset-admin-token", "--data", server_->data_dir()});
  EXPECT_EQ(busy.code, 1);
  EXPECT_TRUE(Contains(busy.err, "is in use by")) << busy.err;
  server_->Terminate();
  auto reset = RunCli({"admin", "reset-admin-token", "--data", server_->data_dir()});
  ASSERT_EQ(reset.code, 0) << reset.err;
  std::string glass = reset.out.substr(0, reset.out.find('\n'));
  ASSERT_EQ(glass.size(), 64u);
  server_->Start();
  EXPECT_EQ(server_->token(), glass);
  EXPECT_EQ(RunCli({"get", "nodes"}, {"ABACUS_SERVER=" + server_->url(), "ABACUS_TOKEN=" + glass}).code, 0);
  EXPECT_EQ(RunCli({"get", "nodes"}, {"ABACUS_SERVER=" + server_->url(), "ABACUS_TOKEN=" + fresh}).code, 1);
}

}  // namespace
}  // namespace abacus::testing
