// Durability and quota races against a real server process.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "server/server_test_util.h"
#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;

// The usage intervals of workload `id` stored in the SQLite store of `data_dir`, read as an
// auditor would (sqlite3, read-only, beside the running server).
std::vector<json> StoredUsage(const std::string& data_dir, const std::string& id) {
  std::vector<json> out;
  FILE* p = ::popen(("sqlite3 -readonly " + data_dir + "/abacus.db \"SELECT json FROM objects WHERE kind = 'usage'\"").c_str(),
                    "r");
  if (p == nullptr) return out;
  std::string rows;
  char buf[4096];
  while (fgets(buf, sizeof buf, p) != nullptr) rows += buf;
  ::pclose(p);
  std::istringstream lines(rows);
  for (std::string line; std::getline(lines, line);) {
    json iv = json::parse(line, nullptr, false);
    if (iv.is_object() && iv.value("workload", "") == id) out.push_back(std::move(iv));
  }
  return out;
}

std::string Org(int cpu_nominal) {
  return server::testing_org::TeamOrg("acme", "ml", "q", {{"cpu", std::to_string(cpu_nominal)}, {"memory", "1Ti"}});
}

std::string Job(const std::string& name) {
  return "kind: BatchJob\nname: " + name +
         "\nproject: acme/ml\nqueue: q\nspec:\n  command: [\"true\"]\n  taskGroups:\n"
         "    - name: main\n      resources: {cpu: 1, memory: 1Gi}\n  tasks: 1\n  parallelism: 1\n";
}

json CpuNode(const std::string& name, int cores) {
  return {{"name", name}, {"cpu", std::to_string(cores)}, {"memory", "1Ti"}, {"simulated", true}};
}

json AllWorkloads(cli::ApiClient& api) { return api.Get("/api/v1/workloads?limit=1000000").body; }

int CountState(const json& list, const std::string& state) {
  int n = 0;
  for (const auto& w : list["items"]) n += w["state"] == state ? 1 : 0;
  return n;
}

// 8 clients submit while the server is SIGKILLed; after a restart on the same data folder every
// acknowledged submission is there exactly once and scheduling resumes where it stopped.
TEST(DurabilityTest, Kill9MidStreamLosesNoAcknowledgedSubmission) {
  TempDir dir;
  ServerProcess server(dir.path());
  {
    auto api = server.Client();
    ASSERT_EQ(api.Post("/api/v1/apply", Org(100000), "application/yaml").status, 200);
    ASSERT_EQ(api.Post("/api/v1/nodes", CpuNode("cpu-1", 16).dump(), "application/json").status, 201);
  }
  std::mutex mu;
  std::map<std::string, std::string> acked;  // name → id
  std::atomic<int> total{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> clients;
  for (int c = 0; c < 8; ++c) {
    clients.emplace_back([&, c] {
      auto api = server.Client();
      for (int n = 0; !stop.load(); ++n) {
        std::string name = "c" + std::to_string(c) + "-" + std::to_string(n);
        auto r = api.Post("/api/v1/workloads", Job(name), "application/yaml");
        if (r.status != 201) break;  // the server died under us
        std::lock_guard lock(mu);
        acked[name] = r.body["items"][0]["id"];
        total.fetch_add(1);
      }
    });
  }
  bool reached = WaitFor([&] { return total.load() >= 400; });
  server.Kill9();
  stop = true;
  for (auto& t : clients) t.join();
  ASSERT_TRUE(reached) << total.load() << " acknowledged";

  server.Start();
  auto api = server.Client();
  json list = AllWorkloads(api);
  std::map<std::string, int> seen;
  for (const auto& w : list["items"]) seen[w["name"].get<std::string>()]++;
  for (const auto& [name, id] : acked) {
    ASSERT_EQ(seen[name], 1) << name << " acknowledged as " << id;
  }
  // Unacknowledged submissions may or may not have committed, but never twice.
  for (const auto& [name, n] : seen) EXPECT_EQ(n, 1) << name;
  // Each acknowledged submission's audit entry committed in its own transaction: every one is in
  // the chain after the kill, and the chain verifies.
  auto verify = api.Get("/api/v1/audit?verify=1");
  ASSERT_EQ(verify.status, 200) << verify.text;
  EXPECT_TRUE(verify.body["ok"].get<bool>()) << verify.text;
  auto audit = api.Get("/api/v1/audit");
  ASSERT_EQ(audit.status, 200);
  std::set<std::string> audited;
  std::istringstream lines(audit.text);
  for (std::string line; std::getline(lines, line);) {
    json e = json::parse(line, nullptr, false);
    if (!e.is_object() || e.value("action", "") != "create") continue;
    json after = json::parse(e.value("after", ""), nullptr, false);
    if (!after.is_array()) continue;
    for (const auto& item : after) audited.insert(item.value("id", ""));
  }
  for (const auto& [name, id] : acked) EXPECT_EQ(audited.count(id), 1u) << name << " (" << id << ") has no audit entry";
  // 16 cores, 1 core each: exactly 16 hold capacity (assumed decisions that were not committed
  // before the kill are simply made again).
  ASSERT_TRUE(WaitFor([&] { return CountState(AllWorkloads(api), "Admitted") == 16; }));
  // Transitions resume: cancelling an admitted workload lets the next one in.
  std::string victim;
  json admitted = AllWorkloads(api);
  for (const auto& w : admitted["items"]) {
    if (w["state"] == "Admitted") victim = w["id"];
  }
  auto cancelled = api.Delete("/api/v1/workloads/" + victim);
  ASSERT_EQ(cancelled.status, 200) << victim << ": " << cancelled.text;
  ASSERT_TRUE(WaitFor([&] {
    json l = AllWorkloads(api);
    return CountState(l, "Admitted") == 16 && CountState(l, "Cancelled") == 1;
  }));
  EXPECT_EQ(api.Get("/api/v1/workloads/" + victim + "/events").body["items"].back()["type"], "Cancelled");
}

// Concurrent submissions racing for one queue's quota never take more than its nominal.
TEST(QuotaRaceTest, ConcurrentSubmissionsNeverExceedQuota) {
  TempDir dir;
  ServerProcess server(dir.path());
  auto api = server.Client();
  ASSERT_EQ(api.Post("/api/v1/apply", Org(10), "application/yaml").status, 200);
  ASSERT_EQ(api.Post("/api/v1/nodes", CpuNode("big", 256).dump(), "application/json").status, 201);
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int c = 0; c < 8; ++c) {
    clients.emplace_back([&, c] {
      auto client = server.Client();
      for (int n = 0; n < 15; ++n) {
        auto r = client.Post("/api/v1/workloads", Job("r" + std::to_string(c) + "-" + std::to_string(n)),
                             "application/yaml");
        if (r.status == 201) ok.fetch_add(1);
        // Watch usage while the race runs.
        json q = client.Get("/api/v1/queues/q").body;
        for (const auto& u : q["usage"]) {
          if (u["resource"] == "cpu") {
            EXPECT_LE(u["used"].get<int64_t>(), u["nominal"].get<int64_t>());
          }
        }
      }
    });
  }
  for (auto& t : clients) t.join();
  ASSERT_EQ(ok.load(), 120);
  ASSERT_TRUE(WaitFor([&] {
    json l = AllWorkloads(api);
    return CountState(l, "Admitted") == 10 && CountState(l, "Pending") == 110;
  }));
  json q = api.Get("/api/v1/queues/q").body;
  for (const auto& u : q["usage"]) {
    if (u["resource"] == "cpu") {
      EXPECT_EQ(u["used"], 10000);
    }
  }
  // Every pending one says why: the quota.
  // (Submissions queued after the last cycle get their reason on the next one: wait for it.)
  json pending;
  EXPECT_TRUE(WaitFor([&] {
    pending = api.Get("/api/v1/workloads?state=Pending&limit=1").body;
    return pending["items"][0]["pendingReason"]["code"] == "Quota";
  })) << pending.dump();
}

// Submits TrainingJob `name` (one A100, `script` under sh -c) to acme/ml's queue train and
// waits until it runs; returns its id ("" on failure, the failure reported).
std::string RunningGpuJob(cli::ApiClient& api, const std::string& name, const std::string& script) {
  auto sub = api.Post("/api/v1/workloads",
                      "kind: TrainingJob\nname: " + name + "\nproject: acme/ml\nqueue: train\nspec:\n"
                      "  command: [\"sh\", \"-c\", \"" + script + "\"]\n  taskGroups:\n    - name: main\n      resources:\n"
                      "        cpu: 1\n        memory: 1Gi\n        accelerators: {flavor: gpu/nvidia/A100-80G, count: 1}\n",
                      "application/yaml");
  EXPECT_EQ(sub.status, 201) << sub.text;
  if (sub.status != 201) return "";
  const std::string id = sub.body["items"][0]["id"];
  const bool running =
      WaitFor([&] { return api.Get("/api/v1/workloads/" + id).body.value("state", "") == "Running"; });
  EXPECT_TRUE(running) << api.Get("/api/v1/workloads/" + id).text;
  return running ? id : "";
}

// The probe of 2026-12-07: a task that ended while the server was down was billed until the
// restarted server learned of its exit (a 6 s job billed 10.5 s), and its workload's finishedAt
// was that moment too. Its usage now closes, and its workload ends, when its agent saw it exit.
TEST(DurabilityTest, ATaskThatEndsWhileTheServerIsDownIsBilledUntilItsExitNotUntilTheRestart) {
  const int port = FreePort();
  TempDir data;
  ServerProcess server(data.path(), {"--listen", "127.0.0.1:" + std::to_string(port), "--heartbeat", "1"});
  auto api = server.Client();
  ASSERT_EQ(api.Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);
  AgentProcess agent(server, "gpu-a", "gpu:nvidia:A100-80G:1:80Gi@cuda=12.4");
  const std::string id = RunningGpuJob(api, "short", "sleep 2");
  ASSERT_FALSE(id.empty());
  server.Kill9();
  std::this_thread::sleep_for(std::chrono::seconds(7));  // the task ends meanwhile, 2 s in
  server.Start();  // on the same address: the agent finds it again and reports the exit
  api = server.Client();
  json w;
  ASSERT_TRUE(WaitFor([&] {
    w = api.Get("/api/v1/workloads/" + id).body;
    return w.value("state", "") == "Succeeded";
  }, std::chrono::seconds(30))) << w.dump();
  ASSERT_EQ(w["placements"].size(), 1u) << w.dump();
  const int64_t exited = w["placements"][0].value("finishedUs", int64_t{0});
  ASSERT_GT(exited, 0) << w.dump();
  EXPECT_EQ(w.value("finishedUs", int64_t{0}), exited) << w.dump();
  // Its usage interval, as stored.
  const std::vector<json> intervals = StoredUsage(data.path(), id);
  ASSERT_EQ(intervals.size(), 1u);
  const int64_t start = intervals[0].value("startUs", int64_t{0}), end = intervals[0].value("endUs", int64_t{0});
  EXPECT_EQ(end, exited) << intervals[0].dump();
  // About the task's 2 s (from its admission), not the 7 s outage on top.
  EXPECT_LT(end - start, 5'000'000) << intervals[0].dump();
}

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The probe of 2026-12-07: an agent killed with -9 takes its tasks with it (their lifeline stops
// them), but the lost attempt was billed until the agent registered again, its restart minutes
// later perhaps. It is billed until the agent's last call now: the task ran at most until then.
TEST(DurabilityTest, AnAgentKilledAndStartedLaterBillsItsLostTaskUntilItsLastCallNotItsReturn) {
  TempDir data;
  // A node timeout longer than the outage: the server learns of the loss from the registration.
  ServerProcess server(data.path(), {"--heartbeat", "1", "--node-timeout", "120"});
  auto api = server.Client();
  ASSERT_EQ(api.Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);
  AgentProcess agent(server, "gpu-a", "gpu:nvidia:A100-80G:1:80Gi@cuda=12.4");
  const std::string id = RunningGpuJob(api, "long", "sleep 300");
  ASSERT_FALSE(id.empty());
  const int64_t killed_us = NowUs();
  agent.Kill9();
  std::this_thread::sleep_for(std::chrono::seconds(6));
  const int64_t restarted_us = NowUs();
  agent.Start();  // the same work folder and credential: it re-registers and reports the task Lost
  json lost;
  ASSERT_TRUE(WaitFor([&] {
    for (const json& iv : StoredUsage(data.path(), id)) {
      if (iv.contains("endUs")) lost = iv;
    }
    return lost.is_object();
  }, std::chrono::seconds(30))) << api.Get("/api/v1/workloads/" + id).text;
  EXPECT_EQ(lost.value("endReason", ""), "NodeLost") << lost.dump();  // an agent restart is a node loss
  // Until the agent's last call (at most a second past the kill, a call then in flight), not
  // until its return 6 s later.
  EXPECT_LT(lost.value("endUs", int64_t{0}), killed_us + 1'000'000) << lost.dump() << " killed at " << killed_us;
  EXPECT_LT(lost.value("endUs", int64_t{0}), restarted_us) << lost.dump();
  EXPECT_GT(lost.value("endUs", int64_t{0}), lost.value("startUs", int64_t{0})) << lost.dump();
}

}  // namespace
}  // namespace abacus::testing
