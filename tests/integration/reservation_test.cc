// kind Reservation against a real server with a simulated GPU node (issue 26): while a window is
// in force only its owner's work lands on the reserved node and the others' explain names the
// reservation; once the window passes they run. Applying and deleting are admin-only and audited.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/clock.h"
#include "server/server_test_util.h"
#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;
namespace org = server::testing_org;

// t1 (project p1, queue q1) and t2 (p2, q2), 8 A100 each; tia tenant-admin of t1.
const std::string kOrg = org::Org(
    org::TwoTenants("p2"), {{"cpu", "100"}, {"memory", "1Ti"}, {"gpu/nvidia/A100-80G", "8"}},
    {org::TenantAdmin("tia", "t1")});

// A job of 4 A100s; `max_runtime` ("10m") becomes its spec.maxRuntime when not empty.
std::string Job(const std::string& name, const std::string& project, const std::string& queue,
                const std::string& max_runtime = "") {
  return "kind: TrainingJob\nname: " + name + "\nproject: " + project + "\nqueue: " + queue +
         "\nspec:\n  command: [\"true\"]\n" + (max_runtime.empty() ? "" : "  maxRuntime: " + max_runtime + "\n") +
         "  taskGroups:\n    - name: w\n      resources: {cpu: 1, memory: 1Gi, "
         "accelerators: {flavor: gpu/nvidia/A100-80G, count: 4}}\n";
}

json GpuNode(const std::string& name) {
  json devices = json::array();
  for (int i = 0; i < 8; ++i) devices.push_back({{"index", i}, {"flavor", "gpu/nvidia/A100-80G"}, {"memory", "80Gi"}});
  return {{"name", name}, {"cpu", "64"}, {"memory", "512Gi"}, {"simulated", true}, {"devices", devices}};
}

TEST(ReservationTest, OwnerOnlyDuringTheWindowThenEveryone) {
  TempDir dir;
  ServerProcess server(dir.path());
  auto admin = server.Client();
  ASSERT_EQ(admin.Post("/api/v1/apply?filename=org.yaml", kOrg, "application/yaml").status, 200);
  ASSERT_EQ(admin.Post("/api/v1/nodes", GpuNode("gpu-a").dump(), "application/json").status, 201);
  auto token = admin.Post("/api/v1/tokens", json{{"user", "tia"}, {"description", "test"}}.dump(), "application/json");
  ASSERT_EQ(token.status, 201) << token.text;
  const std::vector<std::string> env = {"ABACUS_SERVER=" + server.url(), "ABACUS_TOKEN=" + server.token()};

  // In force from a minute ago for 15 s: gpu-a is t1's.
  const Time now = SystemClock::Get().Now();
  const std::string reservation = "kind: Reservation\nname: t1-a100\nnodes: [gpu-a]\ntenant: t1\nstart: " +
                                  FormatTime(now - std::chrono::minutes(1)) + "\nend: " +
                                  FormatTime(now + std::chrono::seconds(15)) + "\n";
  // A tenant admin may not reserve cluster capacity.
  auto refused = RunCli({"apply", "-f", "-"}, {"ABACUS_SERVER=" + server.url(), "ABACUS_TOKEN=" + token.body["token"].get<std::string>()},
                        reservation);
  EXPECT_NE(refused.code, 0) << refused.out;
  auto applied = RunCli({"apply", "-f", "-"}, env, reservation);
  ASSERT_EQ(applied.code, 0) << applied.err;

  auto listed = RunCli({"get", "reservations"}, env);
  ASSERT_EQ(listed.code, 0) << listed.err;
  EXPECT_NE(listed.out.find("t1-a100"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("Active"), std::string::npos) << listed.out;

  // t2's work waits though gpu-a has room; t1's runs there.
  { auto sub = admin.Post("/api/v1/workloads", Job("other", "t2/p2", "q2"), "application/yaml"); ASSERT_EQ(sub.status, 201) << sub.text; }
  ASSERT_EQ(admin.Post("/api/v1/workloads", Job("mine", "t1/p1", "q1"), "application/yaml").status, 201);
  auto state = [&](const std::string& w) { return admin.Get("/api/v1/workloads/" + w).body.value("state", ""); };
  ASSERT_TRUE(WaitFor([&] { return state("mine") == "Admitted" || state("mine") == "Running"; })) << state("mine");
  std::string explained;
  ASSERT_TRUE(WaitFor([&] {
    explained = RunCli({"explain", "other"}, env).out;
    return explained.find("gpu-a reserved for t1 (reservation t1-a100)") != std::string::npos;
  })) << explained;
  EXPECT_EQ(state("other"), "Pending");

  // The window passes: the others' work runs there too.
  ASSERT_TRUE(WaitFor([&] { return state("other") == "Admitted" || state("other") == "Running"; },
                      std::chrono::seconds(60)))
      << RunCli({"explain", "other"}, env).out;
  EXPECT_NE(RunCli({"get", "reservations"}, env).out.find("Over"), std::string::npos);

  // Deleted (admins only), audited.
  auto deleted = RunCli({"delete", "reservation", "t1-a100"}, env);
  ASSERT_EQ(deleted.code, 0) << deleted.err;
  EXPECT_EQ(admin.Get("/api/v1/reservations/t1-a100").status, 404);
  auto audit = RunCli({"audit", "-o", "json"}, env);
  EXPECT_NE(audit.out.find("reservation-delete"), std::string::npos) << audit.out;
}

// A reservation is configuration: a server stopped and started again on the same data folder
// still keeps the window (work that would overlap it stays out, and explain names it), and
// still backfills work that ends before it starts.
TEST(ReservationTest, AWindowHoldsAcrossAServerRestart) {
  TempDir dir;
  ServerProcess server(dir.path());
  auto before = server.Client();  // a client of the first server (ApiClient is not assignable)
  ASSERT_EQ(before.Post("/api/v1/apply?filename=org.yaml", kOrg, "application/yaml").status, 200);
  ASSERT_EQ(before.Post("/api/v1/nodes", GpuNode("gpu-a").dump(), "application/json").status, 201);
  // gpu-a is t1's from in an hour, for two hours.
  const Time now = SystemClock::Get().Now();
  const std::string reservation = "kind: Reservation\nname: t1-later\nnodes: [gpu-a]\ntenant: t1\nstart: " +
                                  FormatTime(now + std::chrono::hours(1)) + "\nend: " +
                                  FormatTime(now + std::chrono::hours(3)) + "\n";
  ASSERT_EQ(before.Post("/api/v1/apply?filename=r.yaml", reservation, "application/yaml").status, 200);
  auto state = [&](const std::string& w) { return server.Client().Get("/api/v1/workloads/" + w).body.value("state", ""); };
  auto explain = [&](const std::string& w) {
    return RunCli({"explain", w}, {"ABACUS_SERVER=" + server.url(), "ABACUS_TOKEN=" + server.token()}).out;
  };
  // Submitted before the restart: t2's job declares no maxRuntime, so it may overlap the window.
  ASSERT_EQ(before.Post("/api/v1/workloads", Job("before", "t2/p2", "q2"), "application/yaml").status, 201);
  std::string why;
  ASSERT_TRUE(WaitFor([&] { return (why = explain("before")).find("reservation t1-later") != std::string::npos; }))
      << why;

  ASSERT_EQ(server.Terminate(), 0);
  server.Start();
  auto admin = server.Client();

  auto listed = admin.Get("/api/v1/reservations/t1-later");
  ASSERT_EQ(listed.status, 200) << listed.text;
  EXPECT_EQ(listed.body.value("state", ""), "Upcoming") << listed.text;
  // After the restart: the waiting job still waits and explain still names the reservation; a new
  // one that would overlap the window waits too; one that ends before it (maxRuntime 10m)
  // backfills, which shows the restarted scheduler ran its cycles over gpu-a.
  ASSERT_EQ(admin.Post("/api/v1/workloads", Job("after", "t2/p2", "q2"), "application/yaml").status, 201);
  ASSERT_EQ(admin.Post("/api/v1/workloads", Job("short", "t2/p2", "q2", "10m"), "application/yaml").status, 201);
  ASSERT_TRUE(WaitFor([&] { return state("short") == "Admitted" || state("short") == "Running" ||
                                   state("short") == "Succeeded"; }))
      << explain("short");
  for (const std::string w : {"before", "after"}) {
    ASSERT_TRUE(WaitFor([&] {
      why = explain(w);
      return why.find("gpu-a reserved for t1 (reservation t1-later)") != std::string::npos &&
             why.find("declares no maxRuntime") != std::string::npos;
    })) << w << ": " << why;
    EXPECT_EQ(state(w), "Pending") << w;
  }
}

}  // namespace
}  // namespace abacus::testing
