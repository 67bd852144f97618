// Bounded input against a real `abacus server`: a large apply is linear and leaves reads
// answered, bodies nested too deep are refused on every route that reads one (the server
// stays up), duplicate keys are errors with their line.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string Repeat(std::string_view s, int n) {
  std::string out;
  out.reserve(s.size() * static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// One tenant and `n` projects, one multi-document YAML body.
std::string ManyProjects(int n) {
  std::string out = "kind: Tenant\nname: bulk\n";
  for (int i = 0; i < n; ++i) out += "---\nkind: Project\nname: p" + std::to_string(i) + "\ntenant: bulk\n";
  return out;
}

// Every route that takes a body, from the route tables of docs/api.md and docs/agent-protocol.md
// ("POST /api/v1/…"; "{a,b}" lists expanded, "{W}" the workload `workload`). A route added to the
// API is documented there, and so is covered here.
std::set<std::string> DocumentedBodyRoutes(const std::string& workload) {
  std::set<std::string> routes;
  std::regex route(R"((POST|PUT|PATCH) (/api/v1/[^`\[\s|]*))");
  for (const char* doc : {"docs/api.md", "docs/agent-protocol.md"}) {
    std::string text = ReadFile(SourcePath(doc));
    for (std::sregex_iterator it(text.begin(), text.end(), route), end; it != end; ++it) {
      std::string path = (*it)[2];
      size_t open = path.find('{');
      if (open != std::string::npos) {
        size_t close = path.find('}', open);
        std::string inside = path.substr(open + 1, close - open - 1);
        std::string before = path.substr(0, open), after = path.substr(close + 1);
        if (inside.find(',') == std::string::npos) {
          routes.insert(before + workload + after);  // {W}
        } else {
          for (size_t s = 0; s <= inside.size();) {
            size_t comma = std::min(inside.find(',', s), inside.size());
            routes.insert(before + inside.substr(s, comma - s) + after);
            s = comma + 1;
          }
        }
      } else {
        routes.insert(path);
      }
    }
  }
  return routes;
}

class InputLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override { server_ = std::make_unique<ServerProcess>(dir_.path()); }
  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
};

// Issue 21: an apply of N documents is linear in N, and reads of queues, workloads and cohorts
// are answered while it runs (the state lock is held only for the swap).
TEST_F(InputLimitsTest, LargeApplyLeavesReadsAnswered) {
  constexpr int kProjects = 50000;  // the size issue 21 names
  auto api = server_->Client();
  ASSERT_EQ(api.Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);
  std::string body = ManyProjects(kProjects);

  std::atomic<bool> applying{true};
  std::atomic<int> reads_during{0};
  std::atomic<int> failed_reads{0};
  double slowest_read = 0;
  std::thread reader([&] {
    auto reads = server_->Client();
    const char* paths[] = {"/api/v1/queues", "/api/v1/workloads", "/api/v1/cohorts"};
    for (int i = 0; applying.load(); ++i) {
      auto start = Clock::now();
      auto r = reads.Get(paths[i % 3]);
      double took = std::chrono::duration<double>(Clock::now() - start).count();
      if (r.status != 200) failed_reads.fetch_add(1);
      if (applying.load()) {
        reads_during.fetch_add(1);
        slowest_read = std::max(slowest_read, took);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  auto start = Clock::now();
  auto applied = api.Post("/api/v1/apply?filename=bulk.yaml", body, "application/yaml");
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  applying.store(false);
  reader.join();

  ASSERT_EQ(applied.status, 200) << applied.text.substr(0, 500);
  EXPECT_EQ(applied.body["items"].size(), static_cast<size_t>(kProjects + 1));
  EXPECT_EQ(failed_reads.load(), 0);
  EXPECT_GT(reads_during.load(), 0);
  std::printf("apply of %d projects (%zu bytes): %.2f s; %d reads answered meanwhile, slowest %.3f s\n", kProjects,
              body.size(), seconds, reads_during.load(), slowest_read);

  auto projects = api.Get("/api/v1/projects");
  ASSERT_EQ(projects.status, 200);
  EXPECT_EQ(projects.body["items"].size(), static_cast<size_t>(kProjects + 1));  // acme/ml too
  // The same apply again changes nothing, and says so for each document.
  auto again = api.Post("/api/v1/apply", body, "application/yaml");
  ASSERT_EQ(again.status, 200);
  EXPECT_EQ(again.body["items"][kProjects]["action"], "unchanged");
}

// Issue 20 point 8: a body nested 100,000 levels deep killed the server on the agent
// registration route. Every route that reads a body refuses it with 400 naming the limit.
TEST_F(InputLimitsTest, DeepNestingIsRefusedOnEveryBodyRoute) {
  auto api = server_->Client();
  ASSERT_EQ(api.Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);
  constexpr char kJob[] =
      "kind: InferenceService\nname: svc\nproject: acme/ml\nqueue: train\nspec:\n  command: [serve]\n"
      "  taskGroups: [{name: s, resources: {cpu: 1, memory: 1Gi}}]\n";
  ASSERT_EQ(api.Post("/api/v1/workloads", kJob, "application/yaml").status, 201);

  const std::string deep_json = "{\"name\": " + Repeat("[", 100000) + Repeat("]", 100000) + "}";
  const std::string deep_yaml = "kind: Tenant\nname: x\nlabels:\n  " + Repeat("- ", 100000) + "x\n";
  cli::ApiClient join({server_->url(), server_->join_token()});
  auto registered = join.Post("/api/v1/agent/register",
                              R"({"name": "n1", "cpuMilli": 8000, "memoryBytes": 8589934592, "devices": []})",
                              "application/json");
  ASSERT_EQ(registered.status, 200) << registered.text;
  cli::ApiClient node({server_->url(), registered.body["nodeToken"].get<std::string>()});
  std::set<std::string> routes = DocumentedBodyRoutes("svc");
  ASSERT_GE(routes.size(), 15u);
  for (const std::string& route : routes) {
    // Routes that take no body (an admin's node reset) read nothing to refuse.
    if (route.size() > 6 && route.compare(route.size() - 6, 6, "/reset") == 0) continue;
    const bool agent = route.rfind("/api/v1/agent/", 0) == 0;
    cli::ApiClient& client = route == "/api/v1/agent/register" ? join : agent ? node : api;
    // Configuration and workload documents come as YAML too (collection routes: /api/v1/apply,
    // /api/v1/queues, ...); actions on one object (/api/v1/nodes/N/drain) read JSON only.
    const std::string path = route.substr(0, route.find('?'));
    const bool collection = path.find('/', std::string("/api/v1/").size()) == std::string::npos;
    // Tokens and secrets are JSON only (docs/api.md).
    const bool reads_yaml = !agent && collection && path != "/api/v1/nodes" && path != "/api/v1/tokens" &&
                            path != "/api/v1/secrets";
    std::vector<std::pair<std::string, const char*>> bodies = {{deep_json, "application/json"}};
    if (reads_yaml) bodies.emplace_back(deep_yaml, "application/yaml");
    for (const auto& [body, type] : bodies) {
      // The update route is PUT and PATCH; every other documented body route is POST.
      const bool update = path == "/api/v1/workloads/svc";
      auto r = update ? client.Put(route, body, type) : client.Post(route, body, type);
      EXPECT_EQ(r.status, 400) << route << " " << type << ": " << r.text.substr(0, 300);
      EXPECT_NE(r.text.find("nesting deeper than 64 levels (the limit)"), std::string::npos) << route << " " << type;
      ASSERT_EQ(api.Get("/healthz").status, 200) << "server died on " << route;
    }
  }
  // And it still works.
  EXPECT_EQ(api.Get("/api/v1/workloads/svc").status, 200);
}

// Issue 21: a key given twice is an error naming the line and the key, for YAML and JSON.
TEST_F(InputLimitsTest, DuplicateKeysAreErrorsWithTheirLine) {
  auto api = server_->Client();
  ASSERT_EQ(api.Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);
  auto yaml = api.Post("/api/v1/apply?filename=dup.yaml", "kind: Tenant\nname: a\nname: b\n", "application/yaml");
  EXPECT_EQ(yaml.status, 400);
  EXPECT_NE(yaml.text.find("dup.yaml:3: name: duplicate key 'name'; first at line 2"), std::string::npos) << yaml.text;
  auto json_body = api.Post("/api/v1/workloads?filename=dup.json",
                            "{\"kind\": \"TrainingJob\",\n \"name\": \"a\",\n \"name\": \"b\"}", "application/json");
  EXPECT_EQ(json_body.status, 400);
  EXPECT_NE(json_body.text.find("dup.json:3: duplicate key 'name'"), std::string::npos) << json_body.text;
  auto scale = api.Post("/api/v1/tokens", "{\"description\": \"a\",\n\"description\": \"b\"}", "application/json");
  EXPECT_EQ(scale.status, 400);
  EXPECT_NE(scale.text.find("line 2: duplicate key 'description'"), std::string::npos) << scale.text;
  EXPECT_EQ(api.Get("/api/v1/tenants/a").status, 404);  // nothing was stored

  // The CLI's offline check says the same.
  TempDir tmp;
  std::string file = tmp.path() + "/dup.yaml";
  std::ofstream(file) << "kind: Queue\nname: q\ntenant: acme\nquotas:\n  - resource: cpu\n    nominal: 1\n    nominal: 2\n";
  CliResult v = RunCli({"validate", "-f", file});
  EXPECT_EQ(v.code, 1);
  EXPECT_NE((v.out + v.err).find(file + ":7: quotas[0].nominal: duplicate key 'nominal'; first at line 6"),
            std::string::npos)
      << v.out << v.err;
}

// Issue 21: a full disk answered 429 "retry" and showed the database's absolute path to anyone.
// Now 503 (nothing stored; retry only once space is freed); the admin sees the store's detail,
// other users a message without internal paths.
TEST(InputLimitsDiskTest, FullStoreIs503WithoutPathsForUsers) {
  TempDir dir;
  const std::string db = dir.path() + "/capped.db";
  ServerProcess server(dir.path(), {"--store", "sqlite://" + db + "?max_pages=400"});
  auto admin = server.Client();
  ASSERT_EQ(admin.Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);
  ASSERT_EQ(admin.Post("/api/v1/apply", "kind: User\nname: mia\nroles: [{role: member, project: acme/ml}]\n",
                       "application/yaml")
                .status,
            200);
  auto token = admin.Post("/api/v1/tokens", R"({"user": "mia"})", "application/json");
  ASSERT_EQ(token.status, 201) << token.text;
  cli::ApiClient member({server.url(), token.body["token"].get<std::string>()});

  // Workloads with a large label until the database is full.
  auto job = [](int i) {
    return "kind: BatchJob\nname: fill-" + std::to_string(i) + "\nproject: acme/ml\nqueue: train\nlabels: {pad: " +
           std::string(60000, 'x') + "}\nspec:\n  command: [x]\n  tasks: 1\n  taskGroups: [{name: s, resources: "
           "{cpu: 1, memory: 1Gi}}]\n";
  };
  cli::ApiResponse full;
  int i = 0;
  for (; i < 200; ++i) {
    full = member.Post("/api/v1/workloads", job(i), "application/yaml");
    if (full.status != 201) break;
  }
  ASSERT_EQ(full.status, 503) << "after " << i << " workloads: " << full.text;
  EXPECT_EQ(full.body["error"]["code"], "unavailable");
  EXPECT_EQ(full.text.find(dir.path()), std::string::npos) << full.text;
  EXPECT_EQ(full.text.find("SQLite"), std::string::npos) << full.text;
  EXPECT_NE(full.text.find("storage is full"), std::string::npos) << full.text;

  auto for_admin = admin.Post("/api/v1/workloads", job(1000), "application/yaml");
  EXPECT_EQ(for_admin.status, 503);
  EXPECT_NE(for_admin.text.find(db), std::string::npos) << for_admin.text;  // the admin sees the detail

  // The server stays up and answers reads; nothing of the refused submissions was stored.
  EXPECT_EQ(admin.Get("/healthz").status, 200);
  auto listed = admin.Get("/api/v1/workloads");
  ASSERT_EQ(listed.status, 200);
  EXPECT_EQ(listed.body["total"], i);
}

}  // namespace
}  // namespace abacus::testing
