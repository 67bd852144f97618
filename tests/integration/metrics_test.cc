// GET /metrics of a real server answers an operator's questions (issue 25): how many devices of
// a flavor are free in which pool, which nodes are cordoned, what each queue may borrow and lend,
// what waits and why, which routes are called — with bounded labels, and `promtool check
// metrics` clean where promtool is installed (scripts/install-deps.sh installs it).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>

#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;

constexpr char kOrg[] = R"(kind: Tenant
name: acme
---
kind: Project
name: ml
tenant: acme
---
kind: Cohort
name: shared
---
kind: Queue
name: train
tenant: acme
cohort: shared
quotas:
  - {resource: cpu, nominal: 64, borrowingLimit: 16, lendingLimit: 32}
  - {resource: memory, nominal: 512Gi}
  - {resource: gpu/nvidia/A100-80G, nominal: 8, borrowingLimit: 4}
---
kind: Queue
name: infer
tenant: acme
cohort: shared
quotas:
  - {resource: cpu, nominal: 32}
  - {resource: memory, nominal: 256Gi}
  - {resource: gpu/nvidia/A100-80G, nominal: 4}
)";

std::string Job(const std::string& name, const std::string& flavor, int gpus) {
  return "kind: BatchJob\nname: " + name +
         "\nproject: acme/ml\nqueue: train\nspec:\n  command: [\"sleep\", \"600\"]\n  tasks: 1\n  taskGroups:\n"
         "    - name: main\n      resources: {cpu: 4, memory: 16Gi, accelerators: {flavor: \"" + flavor +
         "\", count: " + std::to_string(gpus) + "}}\n";
}

json Node(const std::string& name, const std::string& pool, int gpus) {
  json devices = json::array();
  for (int i = 0; i < gpus; ++i) devices.push_back({{"index", i}, {"flavor", "gpu/nvidia/A100-80G"}, {"memory", "80Gi"}});
  return {{"name", name}, {"cpu", "64"}, {"memory", "512Gi"}, {"simulated", true}, {"pool", pool}, {"devices", devices}};
}

// The value of the series written exactly as `series` (name and labels in order), or -1.
double Sample(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

TEST(MetricsTest, InventoryQuotasAndPendingWorkAnswerAnOperatorsQuestions) {
  TempDir dir;
  ServerProcess server(dir.path(), {});
  auto api = server.Client();
  ASSERT_EQ(api.Post("/api/v1/apply?filename=org.yaml", kOrg, "application/yaml").status, 200);
  ASSERT_EQ(api.Post("/api/v1/nodes", Node("a1", "train-pool", 4).dump(), "application/json").status, 201);
  ASSERT_EQ(api.Post("/api/v1/nodes", Node("a2", "train-pool", 4).dump(), "application/json").status, 201);
  ASSERT_EQ(api.Post("/api/v1/nodes", Node("b1", "infer-pool", 2).dump(), "application/json").status, 201);
  ASSERT_EQ(api.Post("/api/v1/nodes/b1/cordon", R"({"reason": "maintenance"})", "application/json").status, 200);
  auto placed = api.Post("/api/v1/workloads", Job("fits", "gpu/nvidia/A100-80G", 4), "application/yaml");
  ASSERT_EQ(placed.status, 201) << placed.text;
  // Within quota, but no node has 8 A100s: it can never be placed.
  auto never = api.Post("/api/v1/workloads", Job("too-big", "gpu/nvidia/A100-80G", 8), "application/yaml");
  ASSERT_EQ(never.status, 201) << never.text;
  const std::string placed_id = placed.body["items"][0]["id"], never_id = never.body["items"][0]["id"];
  ASSERT_TRUE(WaitFor([&] { return api.Get("/api/v1/workloads/fits").body["state"] == "Admitted"; }));
  std::string text;
  ASSERT_TRUE(WaitFor([&] {
    text = api.Get("/metrics").text;
    return Sample(text, R"(abacus_pending_workloads{queue="train",status="inadmissible",reason="NeverFits"})") == 1;
  })) << text;

  // How many A100s are free right now, in which pool.
  const std::string train = R"({cluster="default",pool="train-pool",flavor="gpu/nvidia/A100-80G",state=)";
  EXPECT_EQ(Sample(text, "abacus_devices" + train + R"("allocated"})"), 4) << text;
  EXPECT_EQ(Sample(text, "abacus_devices" + train + R"("free"})"), 4);
  const std::string infer = R"({cluster="default",pool="infer-pool",flavor="gpu/nvidia/A100-80G",state=)";
  EXPECT_EQ(Sample(text, "abacus_devices" + infer + R"("cordoned"})"), 2);
  EXPECT_EQ(Sample(text, "abacus_devices" + infer + R"("free"})"), 0);
  EXPECT_EQ(Sample(text, R"(abacus_node_state{cluster="default",pool="infer-pool",state="Cordoned"})"), 1);
  EXPECT_EQ(Sample(text, R"(abacus_node_state{cluster="default",pool="train-pool",state="Ready"})"), 2);
  // Quotas with their limits, tenant and cohort; cohort totals.
  EXPECT_EQ(Sample(text, R"(abacus_queue_quota_borrowing_limit{queue="train",tenant="acme",cohort="shared",resource="gpu/nvidia/A100-80G"})"), 4);
  EXPECT_EQ(Sample(text, R"(abacus_queue_quota_lending_limit{queue="train",tenant="acme",cohort="shared",resource="cpu"})"), 32);
  EXPECT_EQ(Sample(text, R"(abacus_queue_quota_used{queue="train",tenant="acme",cohort="shared",resource="gpu/nvidia/A100-80G"})"), 4);
  EXPECT_EQ(Sample(text, R"(abacus_queue_quota_lent{queue="infer",tenant="acme",cohort="shared",resource="gpu/nvidia/A100-80G"})"), 0);
  EXPECT_EQ(Sample(text, R"(abacus_cohort_quota_nominal{cohort="shared",resource="gpu/nvidia/A100-80G"})"), 12);
  EXPECT_EQ(Sample(text, R"(abacus_cohort_quota_used{cohort="shared",resource="gpu/nvidia/A100-80G"})"), 4);
  // What waits, and for how long.
  EXPECT_GE(Sample(text, R"(abacus_queue_oldest_pending_seconds{queue="train"})"), 0);
  EXPECT_EQ(Sample(text, R"(abacus_queue_max_wait_overrun_seconds{queue="infer"})"), 0);
  // Routes by template and code; the binary and the process.
  EXPECT_GE(Sample(text, R"(abacus_http_requests_total{route="/api/v1/workloads",code="201"})"), 2);
  EXPECT_GE(Sample(text, R"(abacus_http_requests_total{route="/api/v1/nodes/{name}/cordon",code="200"})"), 1);
  EXPECT_NE(text.find("abacus_build_info{version=\""), std::string::npos);
  EXPECT_GT(Sample(text, "process_open_fds"), 0);
  EXPECT_GT(Sample(text, "process_resident_memory_bytes"), 0);
  // Bounded labels: no workload id, no object name of a 404 in any series.
  api.Get("/api/v1/workloads/scanner-probe-123");
  text = api.Get("/metrics").text;
  EXPECT_EQ(text.find(placed_id), std::string::npos);
  EXPECT_EQ(text.find(never_id), std::string::npos);
  EXPECT_EQ(text.find("scanner-probe-123"), std::string::npos);
  EXPECT_GE(Sample(text, R"(abacus_http_requests_total{route="unmatched",code="404"})"), 1);

  // The same inventory over time: `abacus report utilization` by pool.
  auto utilization = api.Get("/api/v1/reports/utilization?by=pool&format=json");
  ASSERT_EQ(utilization.status, 200) << utilization.text;
  std::set<std::string> pools;
  for (const auto& row : utilization.body["rows"]) pools.insert(row["pool"].get<std::string>());
  EXPECT_EQ(pools, (std::set<std::string>{"infer-pool", "train-pool"})) << utilization.text;

  // Every metric the shipped dashboard and alert rules query exists in a live /metrics.
  for (const char* shipped : {"packaging/grafana/abacus.json", "packaging/prometheus/abacus-rules.yaml"}) {
    std::ifstream f(std::string(ABACUS_SOURCE_DIR) + "/" + shipped);
    std::string content((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    ASSERT_FALSE(content.empty()) << shipped;
    if (std::string(shipped).ends_with(".json")) {
      json dashboard = json::parse(content, nullptr, false);
      ASSERT_FALSE(dashboard.is_discarded()) << shipped << " is not JSON";
      ASSERT_FALSE(dashboard["panels"].empty());
    }
    std::regex metric(R"(\b((abacus|process)_[a-z_]+))");
    int seen = 0;
    for (std::sregex_iterator it(content.begin(), content.end(), metric), end; it != end; ++it) {
      std::string name = (*it)[1];
      for (const char* suffix : {"_bucket", "_sum", "_count"}) {
        if (name.ends_with(suffix) && text.find("# TYPE " + name.substr(0, name.size() - std::string(suffix).size()) +
                                                " histogram") != std::string::npos) {
          name = name.substr(0, name.size() - std::string(suffix).size());
        }
      }
      // The lease's families exist on HA servers only (ha_integration_test checks them there).
      if (name.starts_with("abacus_ha_")) continue;
      EXPECT_NE(text.find("# TYPE " + name + " "), std::string::npos) << shipped << " queries " << name;
      ++seen;
    }
    EXPECT_GT(seen, 5) << shipped;
  }

  // promtool, the Prometheus project's own checker, where installed.
  if (std::system("command -v promtool >/dev/null 2>&1") != 0) {
    if (std::getenv("ABACUS_REQUIRE_PROMTOOL") != nullptr) FAIL() << "promtool is not installed";
    GTEST_SKIP() << "promtool not installed (scripts/install-deps.sh installs the prometheus package)";
  }
  const std::string file = dir.path() + "/metrics.txt";
  std::ofstream(file) << text;
  const std::string out = dir.path() + "/promtool.out";
  int rc = std::system(("promtool check metrics < " + file + " > " + out + " 2>&1").c_str());
  std::ifstream in(out);
  std::string said((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(rc, 0) << said;
}

// A real Prometheus (the Debian package's binary, on loopback, started here) scrapes a real
// server with a token and evaluates the shipped rules: inadmissible work raises
// AbacusInadmissibleWork (pending for its 15 minutes), and the scrape is up.
TEST(MetricsTest, ARealPrometheusScrapesTheServerAndEvaluatesTheShippedRules) {
  if (std::system("command -v prometheus >/dev/null 2>&1") != 0) {
    if (std::getenv("ABACUS_REQUIRE_PROMTOOL") != nullptr) FAIL() << "prometheus is not installed";
    GTEST_SKIP() << "prometheus not installed (scripts/install-deps.sh installs the prometheus package)";
  }
  TempDir dir;
  ServerProcess server(dir.path() + "/data", {});
  auto api = server.Client();
  ASSERT_EQ(api.Post("/api/v1/apply?filename=org.yaml", kOrg, "application/yaml").status, 200);
  ASSERT_EQ(api.Post("/api/v1/nodes", Node("a1", "train-pool", 4).dump(), "application/json").status, 201);
  ASSERT_EQ(api.Post("/api/v1/workloads", Job("too-big", "gpu/nvidia/A100-80G", 8), "application/yaml").status, 201);

  const std::string target = server.url().substr(server.url().find("://") + 3);
  std::ofstream(dir.path() + "/token") << server.token();
  std::ofstream(dir.path() + "/prometheus.yml")
      << "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
         "rule_files: [\"" << ABACUS_SOURCE_DIR << "/packaging/prometheus/abacus-rules.yaml\"]\n"
         "scrape_configs:\n"
         "  - job_name: abacus\n"
         "    authorization: {credentials_file: " << dir.path() << "/token}\n"
         "    static_configs: [{targets: [\"" << target << "\"]}]\n";
  const int port = FreePort();
  pid_t prom = SpawnChild({"/usr/bin/prometheus", "--config.file=" + dir.path() + "/prometheus.yml",
                           "--storage.tsdb.path=" + dir.path() + "/tsdb", "--web.listen-address=127.0.0.1:" + std::to_string(port)},
                          true);
  cli::ApiClient prometheus({"http://127.0.0.1:" + std::to_string(port), ""});
  std::string alerts, up;
  bool raised = WaitFor([&] {
    alerts = prometheus.Get("/api/v1/alerts").text;
    return alerts.find("\"alertname\":\"AbacusInadmissibleWork\"") != std::string::npos;
  }, std::chrono::seconds(60));
  up = prometheus.Get("/api/v1/query?query=up%7Bjob%3D%22abacus%22%7D").text;
  ::kill(prom, SIGTERM);
  int st = 0;
  ::waitpid(prom, &st, 0);
  ASSERT_TRUE(raised) << alerts;
  EXPECT_NE(alerts.find("\"queue\":\"train\""), std::string::npos) << alerts;
  EXPECT_NE(alerts.find("\"state\":\"pending\""), std::string::npos) << alerts;  // for: 15m
  EXPECT_NE(up.find("\"value\":["), std::string::npos) << up;
  EXPECT_NE(up.find(",\"1\"]"), std::string::npos) << up;
}

}  // namespace
}  // namespace abacus::testing
