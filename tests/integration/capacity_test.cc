// True numbers (issue 20, points 16 and 17) from a real server: capacity is the integral of what
// existed, and refused requests are not manual interventions.
#include <gtest/gtest.h>

#include <sstream>

#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;

json Section(const json& evidence, const std::string& id) {
  for (const auto& s : evidence["sections"]) {
    if (s["id"] == id) return s;
  }
  return json();
}

TEST(CapacityTest, AYoungClusterHasTheCapacityItHadNotTheWindowsLength) {
  TempDir data;
  ServerProcess server(data.path(), {"--node-timeout", "30"});
  AgentProcess agent(server, "gpu-a", "gpu:nvidia:A100-80G:2:80Gi");
  // A window of six years; the node has existed for seconds.
  auto r = server.Client().Get("/api/v1/reports/evidence?format=json&from=2020-01-01T00:00:00Z");
  ASSERT_EQ(r.status, 200) << r.text;
  json util = Section(r.body, "utilization");
  ASSERT_FALSE(util.is_null()) << r.text;
  json row;
  for (const auto& x : util["tables"][0]["rows"]) {
    if (x["flavor"] == "gpu/nvidia/A100-80G") row = x;
  }
  ASSERT_FALSE(row.is_null()) << util.dump();
  EXPECT_EQ(row["devices"], 2);
  // 2 devices × the seconds the node has existed (it was 2 × 6 years ≈ 105,000 device-hours).
  EXPECT_LT(row["capacityDeviceHours"].get<double>(), 1.0) << row.dump();
  EXPECT_EQ(row["downDeviceHours"].get<double>(), 0.0) << row.dump();
}

TEST(CapacityTest, RefusedCancelsAreNotManualInterventions) {
  TempDir data;
  ServerProcess server(data.path());
  auto admin = server.Client();
  ASSERT_EQ(admin.Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);
  const std::string job =
      "kind: BatchJob\nname: once\nproject: acme/ml\nqueue: train\nspec:\n  command: [\"true\"]\n"
      "  tasks: 1\n  taskGroups:\n    - name: main\n      resources: {cpu: 1, memory: 1Gi}\n";
  auto sub = admin.Post("/api/v1/workloads", job, "application/yaml");
  ASSERT_EQ(sub.status, 201) << sub.text;
  std::string id = sub.body["items"][0]["id"];
  // One cancel that takes effect, then two that are refused.
  EXPECT_EQ(admin.Post("/api/v1/workloads/" + id + "/cancel", "{}", "application/json").status, 200);
  EXPECT_EQ(admin.Post("/api/v1/workloads/" + id + "/cancel", "{}", "application/json").status, 409);
  EXPECT_EQ(admin.Post("/api/v1/workloads/no-such-workload/cancel", "{}", "application/json").status, 404);
  auto r = admin.Get("/api/v1/reports/evidence?format=json&from=2020-01-01T00:00:00Z");
  ASSERT_EQ(r.status, 200) << r.text;
  // The quota the org's apply set, and the one cancel that took effect (it counted the 409 and 404 too).
  EXPECT_EQ(r.body["summary"]["Manual interventions"], "2") << r.body["summary"].dump();
  std::string text = Section(r.body, "interventions").value("text", "");
  EXPECT_NE(text.find("2 manual interventions by 1 person"), std::string::npos) << text;
  // The refused ones are in the audit log, each naming what was asked (the probe of 2026-12-07:
  // the 404's entry named no workload, so an auditor could not tell which id was tried).
  auto audit = admin.Get("/api/v1/audit");
  ASSERT_EQ(audit.status, 200);
  int refused_404 = 0;
  std::istringstream lines(audit.text);
  for (std::string line; std::getline(lines, line);) {
    json e = json::parse(line, nullptr, false);
    if (!e.is_object() || e.value("result", "").rfind("404", 0) != 0) continue;
    ++refused_404;
    EXPECT_EQ(e["object"].value("name", ""), "no-such-workload") << line;
    EXPECT_EQ(e["object"].value("kind", ""), "workload") << line;
  }
  EXPECT_EQ(refused_404, 1) << audit.text;
}

}  // namespace
}  // namespace abacus::testing
