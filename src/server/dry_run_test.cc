// Issue 23 on a ControlPlane without HTTP: dry runs of submissions and applies store nothing and
// say where work would go; the submitter is kept on the record (across a restart) and groups
// usage; a report scoped to some tenants holds their rows only and names workloads.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/ids.h"
#include "server/control_plane.h"
#include "server/control_plane_fixture.h"
#include "server/server_test_util.h"
#include "server/read_views_json.h"
#include "server/write_views_json.h"

namespace abacus::server {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

const std::string kOrg = testing_org::AcmeOrg("train", 2) + R"(---
kind: Tenant
name: beta
---
kind: Project
name: web
tenant: beta
---
kind: Queue
name: serve
tenant: beta
quotas:
  - {resource: gpu/nvidia/A100-80G, nominal: 2}
  - {resource: cpu, nominal: 64}
  - {resource: memory, nominal: 512Gi}
)";

std::string Job(const std::string& name, int gpus, const std::string& project = "acme/ml",
                const std::string& queue = "train") {
  return testing_cp::A100Job(name, gpus, project, queue);
}

govern::Principal User(const std::string& name) {
  RoleBinding admin;
  admin.role = Role::kAdmin;
  return govern::Principal::User(name, {admin});
}

class DryRunTest : public testing_cp::ControlPlaneFixture {
 protected:
  void SetUp() override {
    ControlPlaneFixture::SetUp();
    Open();
    ApplyOrg(kOrg);
    ASSERT_TRUE(cp_->RegisterAgent(testing_cp::A100Node("gpu-a", 4), nullptr).ok());
  }
  std::string Submit(const std::string& text, const std::string& user = "") {
    govern::Principal who = User(user);
    return SubmitYaml(text, "job.yaml", user.empty() ? nullptr : &who);
  }
  json DryRun(const std::string& text) {
    auto r = cp_->Submit(text, false, "job.yaml", nullptr, {}, true, nullptr);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? SubmitJson(r->answer)[0] : json();
  }
  json Report(const std::string& kind, const std::string& by, std::function<bool(const std::string&)> visible = {}) {
    ControlPlane::ReportQuery q;
    q.from = "2026-01-01";
    q.to = "2026-01-02";
    q.by = by;
    q.format = "json";
    q.tenant_visible = std::move(visible);
    auto r = cp_->Report(kind, q);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? json::parse(r->body) : json();
  }
  size_t Stored() { return ListWorkloadsJson(*cp_, {})["items"].size(); }
};

TEST_F(DryRunTest, ASubmissionDryRunSaysWhereItWouldGoAndStoresNothing) {
  json fits = DryRun(Job("a", 2));
  EXPECT_EQ(fits["wouldBe"], "Admitted") << fits.dump();
  EXPECT_EQ(fits["placements"][0]["node"], "gpu-a") << fits.dump();
  EXPECT_EQ(Stored(), 0u);
  Submit(Job("a", 2));
  // The queue's 2 GPUs are held now: the same shape would wait, on quota, in the scheduler's words.
  json waits = DryRun(Job("b", 1));
  EXPECT_EQ(waits["wouldBe"], "Pending") << waits.dump();
  EXPECT_EQ(waits["reason"]["code"], "Quota") << waits.dump();
  EXPECT_NE(waits.value("text", "").find("would wait"), std::string::npos) << waits.dump();
  // Every check of a submission runs: a name already active is refused as Submit refuses it.
  auto taken = cp_->Submit(Job("a", 1), false, "job.yaml", nullptr, {}, true, nullptr);
  EXPECT_EQ(taken.status().code(), StatusCode::kAlreadyExists) << taken.status().ToString();
  auto unknown = cp_->Submit(Job("c", 1, "acme/ml", "nope"), false, "job.yaml", nullptr, {}, true, nullptr);
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Stored(), 1u);
  // And the dry run left the real next submission its own answer: b waits, a second b too.
  Submit(Job("b", 1));
  EXPECT_EQ(ListWorkloadsJson(*cp_, {})["items"].size(), 2u);
}

TEST_F(DryRunTest, AnApplyDryRunDiffsEachObjectAndChangesNothing) {
  std::string queue = "kind: Queue\nname: train\ntenant: acme\nquotas:\n"
                      "  - {resource: gpu/nvidia/A100-80G, nominal: 4}\n  - {resource: cpu, nominal: 64}\n"
                      "  - {resource: memory, nominal: 512Gi}\n---\nkind: Tenant\nname: acme\n";
  auto applied = ApplyJson(cp_->Apply(queue, false, "q.yaml", nullptr, {}, true, nullptr));
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  json* r = &*applied;
  ASSERT_EQ(r->size(), 2u) << r->dump();
  EXPECT_EQ((*r)[0]["action"], "configured") << r->dump();
  ASSERT_EQ((*r)[0]["diff"].size(), 1u) << r->dump();
  EXPECT_EQ((*r)[0]["diff"][0]["from"], "2") << r->dump();
  EXPECT_EQ((*r)[0]["diff"][0]["to"], "4") << r->dump();
  EXPECT_EQ((*r)[1]["action"], "unchanged");
  // Nothing applied: the real apply still configures, and a dry run of it now is unchanged.
  auto real = ApplyJson(cp_->Apply(queue, false, "q.yaml", nullptr, {}, false, nullptr));
  ASSERT_TRUE(real.ok());
  EXPECT_EQ((*real)[0]["action"], "configured");
  EXPECT_EQ((*ApplyJson(cp_->Apply(queue, false, "q.yaml", nullptr, {}, true, nullptr)))[0]["action"], "unchanged");
}

TEST_F(DryRunTest, TheSubmitterIsKeptAcrossARestartAndGroupsUsage) {
  std::string a = Submit(Job("a", 1), "alice");
  std::string b = Submit(Job("b", 1, "beta/web", "serve"), "bob");
  std::string c = Submit(Job("c", 1));  // in-process: no submitter
  EXPECT_EQ(WorkloadViewJson(*cp_->GetWorkload(a))["submittedBy"], "alice");
  EXPECT_FALSE(WorkloadViewJson(*cp_->GetWorkload(c)).contains("submittedBy"));
  cp_.reset();
  Open();
  EXPECT_EQ(WorkloadViewJson(*cp_->GetWorkload(a))["submittedBy"], "alice");
  EXPECT_EQ(WorkloadViewJson(*cp_->GetWorkload(b))["submittedBy"], "bob");
  clock_.Advance(1h);
  json usage = Report("usage", "user");
  std::map<std::string, double> hours;
  for (const auto& row : usage["rows"]) hours[row["user"]] = row["deviceHours"];
  EXPECT_EQ(hours.size(), 3u) << usage.dump();
  EXPECT_DOUBLE_EQ(hours["alice"], 1.0) << usage.dump();
  EXPECT_DOUBLE_EQ(hours["bob"], 1.0) << usage.dump();
}

TEST_F(DryRunTest, AReportScopedToATenantHoldsItsRowsOnlyAndNamesWorkloads) {
  std::string first = Submit(Job("ft", 1), "alice");
  clock_.Advance(30min);  // it held its GPU for half an hour
  ASSERT_TRUE(cp_->Cancel(first, "again", {}, nullptr).ok());
  cp_->WaitForCycle();
  std::string second = Submit(Job("ft", 1), "alice");  // the same name again: ambiguous
  Submit(Job("solo", 1), "alice");
  Submit(Job("web", 1, "beta/web", "serve"), "bob");
  clock_.Advance(1h);
  auto acme = [](const std::string& t) { return t == "acme"; };
  json all = Report("usage", "tenant,workload");
  json mine = Report("usage", "tenant,workload", acme);
  EXPECT_EQ(all["rows"].size(), 4u) << all.dump();
  std::set<std::string> names;
  for (const auto& row : mine["rows"]) {
    EXPECT_EQ(row["tenant"], "acme") << mine.dump();
    names.insert(row["workload"].get<std::string>());
  }
  EXPECT_EQ(names, (std::set<std::string>{"ft (" + first + ")", "ft (" + second + ")", "solo"})) << mine.dump();
  for (const char* kind : {"wait", "failures"}) {
    json rows = Report(kind, "tenant", acme)["rows"];
    for (const auto& row : rows) EXPECT_EQ(row["tenant"], "acme") << kind << ": " << rows.dump();
  }
  ControlPlane::ReportQuery q;
  q.from = "2026-01-01";
  q.to = "2026-01-02";
  q.format = "json";
  q.tenant_visible = acme;
  auto evidence = cp_->Report("evidence", q);
  ASSERT_TRUE(evidence.ok()) << evidence.status().ToString();
  EXPECT_EQ(evidence->body.find("beta"), std::string::npos) << evidence->body.substr(0, 2000);
}

}  // namespace
}  // namespace abacus::server
