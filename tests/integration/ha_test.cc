// High availability (docs/operations.md "HA pair with PostgreSQL"): two `abacus server --ha`
// processes on one PostgreSQL and one agent with fake GPUs that knows both. The leader is
// SIGKILLed while clients submit to both servers; the follower takes over, nothing acknowledged
// is lost, no device is ever held by two workloads, and scheduling (agents included) resumes.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "server_process.h"
#include "store/postgres/pg_test_server.h"
#include "server/server_test_util.h"

namespace abacus::testing {
namespace {

using nlohmann::json;
using testing_util::PgTestDatabase;

const std::string kOrg = server::testing_org::AcmeOrg("gpu", 8) +
                         "---\nkind: Queue\nname: bulk\ntenant: acme\nquotas:\n"
                         "  - {resource: cpu, nominal: 1}\n  - {resource: memory, nominal: 1Gi}\n";

// A one-GPU job that runs until cancelled.
std::string GpuJob(const std::string& name) {
  return "kind: BatchJob\nname: " + name +
         "\nproject: acme/ml\nqueue: gpu\nspec:\n  command: [\"sleep\", \"600\"]\n  taskGroups:\n"
         "    - name: main\n      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, "
         "count: 1}}\n  tasks: 1\n  parallelism: 1\n";
}

// A job that never fits its queue: it stays Pending, a durable record and nothing else.
std::string BulkJob(const std::string& name) {
  return "kind: BatchJob\nname: " + name +
         "\nproject: acme/ml\nqueue: bulk\nspec:\n  command: [\"true\"]\n  taskGroups:\n"
         "    - name: main\n      resources: {cpu: 2, memory: 1Gi}\n  tasks: 1\n  parallelism: 1\n";
}

std::string Trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// The role a server states on /healthz (no token needed): "leader", "follower", or "" when down.
std::string Role(const std::string& url) {
  auto r = cli::ApiClient({url, ""}).Get("/healthz");
  return r.status == 200 ? r.body.value("role", "") : "";
}

// `abacus agent` with fake GPUs, given several server URLs.
class HaAgent {
 public:
  HaAgent(const std::string& servers, const std::string& join_token_file) {
    std::vector<std::string> args = {ABACUS_BINARY, "agent",        "--config",     "",
                                     "--server",    servers,        "--token-file", join_token_file,
                                     "--name",      "gpu-1",        "--work-dir",   work_.path(),
                                     "--no-real-devices", "--no-cgroups", "--heartbeat", "1",
                                     "--cpus",      "64",           "--memory",     "512Gi",
                                     "--fake-devices", "gpu:nvidia:A100-80G:8:80Gi"};
    pid_ = SpawnChild(std::move(args), /*silence_stderr=*/true);
  }
  ~HaAgent() {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
  }

 private:
  TempDir work_;
  pid_t pid_ = -1;
};

json Workloads(cli::ApiClient& api) {
  auto r = api.Get("/api/v1/workloads?limit=1000000");
  return r.status == 200 ? r.body : json{{"items", json::array()}};
}

int CountState(const json& list, const std::string& queue, const std::string& state) {
  int n = 0;
  for (const auto& w : list["items"]) n += w["queue"] == queue && w["state"] == state ? 1 : 0;
  return n;
}

// Returns "" when no (node, device) is held by two workloads that hold capacity, else the clash.
std::string DeviceClash(const json& list) {
  std::map<std::pair<std::string, int>, std::string> holder;
  for (const auto& w : list["items"]) {
    const std::string state = w["state"];
    if (state != "Admitted" && state != "Running" && state != "Preempting") continue;
    for (const auto& p : w["placements"]) {
      for (const auto& d : p["devices"]) {
        auto key = std::make_pair(p["node"].get<std::string>(), d["index"].get<int>());
        auto [it, fresh] = holder.emplace(key, w["name"].get<std::string>());
        if (!fresh) return key.first + "/" + std::to_string(key.second) + " held by " + it->second + " and " +
                           w["name"].get<std::string>();
      }
    }
  }
  return "";
}

TEST(HaTest, KillingTheLeaderUnderLoadLosesNoAcknowledgedWriteAndNoDeviceIsHeldTwice) {
  PgTestDatabase db;
  ABACUS_REQUIRE_PG_DATABASE(db);
  const std::vector<std::string> flags = {"--store", db.url(), "--ha", "--rate-limit", "0"};
  TempDir dir_a, dir_b;
  ServerProcess a(dir_a.path(), flags);
  ASSERT_TRUE(WaitFor([&] { return Role(a.url()) == "leader"; }));
  ServerProcess b(dir_b.path(), flags);  // b's data folder has no token files: the store has their hashes
  ASSERT_EQ(Role(b.url()), "follower");
  auto ready = cli::ApiClient({b.url(), ""}).Get("/readyz");  // a follower is ready once it knows the leader
  ASSERT_EQ(ready.status, 200) << ready.text;
  EXPECT_EQ(ready.body.value("leader", ""), a.url());
  const std::string token = Trimmed(ReadFile(dir_a.path() + "/admin.token"));
  cli::ApiClient via_a({a.url(), token}), via_b({b.url(), token});
  // The lease in /metrics (the AbacusLeaderLeaseLost / AbacusLeaderChanged alerts): 1 on the
  // leader, 0 on the follower.
  EXPECT_NE(via_a.Get("/metrics").text.find("\nabacus_ha_leader 1\n"), std::string::npos);
  EXPECT_NE(via_b.Get("/metrics").text.find("\nabacus_ha_leader 0\n"), std::string::npos);

  // Configuration through the follower reaches the leader; one agent knows both servers.
  auto applied = via_b.Post("/api/v1/apply", kOrg, "application/yaml");
  ASSERT_EQ(applied.status, 200) << applied.text;
  HaAgent agent(a.url() + "," + b.url(), dir_a.path() + "/join.token");
  ASSERT_TRUE(WaitFor([&] { return via_a.Get("/api/v1/nodes/gpu-1").body.value("state", "") == "Ready"; }));
  // 12 one-GPU jobs on 8 GPUs: 8 run on the agent, 4 wait.
  for (int i = 0; i < 12; ++i) {
    ASSERT_EQ(via_a.Post("/api/v1/workloads", GpuJob("gpu-" + std::to_string(i)), "application/yaml").status, 201);
  }
  ASSERT_TRUE(WaitFor([&] { return CountState(Workloads(via_a), "gpu", "Running") == 8; }));

  // Clients submit to both servers; every attempt has a new name, and a failed one moves to the
  // other server (as a client of an HA pair does).
  std::mutex mu;
  std::set<std::string> acked;
  std::atomic<int> acked_total{0}, acked_after{0};
  std::atomic<bool> stop{false}, took_over{false};
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&, c] {
      cli::ApiClient apis[] = {cli::ApiClient({a.url(), token}), cli::ApiClient({b.url(), token})};
      int target = c % 2;
      for (int n = 0; !stop.load(); ++n) {
        std::string name = "c" + std::to_string(c) + "-" + std::to_string(n);
        auto r = apis[target].Post("/api/v1/workloads", BulkJob(name), "application/yaml");
        if (r.status != 201) {
          target = 1 - target;
          std::this_thread::sleep_for(std::chrono::milliseconds(50));
          continue;
        }
        std::lock_guard lock(mu);
        acked.insert(name);
        ++acked_total;
        if (took_over) ++acked_after;
      }
    });
  }
  ASSERT_TRUE(WaitFor([&] { return acked_total.load() >= 200; }, std::chrono::seconds(30)));

  const auto killed = std::chrono::steady_clock::now();
  a.Kill9();
  const bool b_leads = WaitFor([&] { return Role(b.url()) == "leader"; }, std::chrono::seconds(30));
  const double takeover_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count();
  took_over = true;
  std::printf("[ HA       ] the follower took over %.2f s after the leader was killed (%d submissions acknowledged "
              "before)\n",
              takeover_s, acked_total.load());
  ASSERT_TRUE(b_leads);
  EXPECT_NE(via_b.Get("/metrics").text.find("\nabacus_ha_leader 1\n"), std::string::npos);
  const bool resumed = WaitFor([&] { return acked_after.load() >= 100; }, std::chrono::seconds(30));
  stop = true;
  for (auto& t : clients) t.join();
  ASSERT_TRUE(resumed) << acked_after.load() << " acknowledged after the takeover";

  // 1) Every acknowledged submission is in the store exactly once, and no name twice at all.
  json list = Workloads(via_b);
  std::map<std::string, int> seen;
  for (const auto& w : list["items"]) seen[w["name"].get<std::string>()]++;
  for (const std::string& name : acked) EXPECT_EQ(seen[name], 1) << name;
  for (const auto& [name, n] : seen) EXPECT_EQ(n, 1) << name;
  // 2) The GPU jobs as the new leader loaded them: 8 hold distinct devices, 4 wait.
  EXPECT_EQ(CountState(list, "gpu", "Running"), 8);
  EXPECT_EQ(CountState(list, "gpu", "Pending"), 4);
  EXPECT_EQ(DeviceClash(list), "");

  // 3) Scheduling resumes under the new leader, and the agent follows it: cancelling two running
  //    jobs lets two waiting ones start, and a job submitted now starts once a GPU frees.
  std::vector<std::string> running;
  for (const auto& w : list["items"]) {
    if (w["queue"] == "gpu" && w["state"] == "Running") running.push_back(w["name"]);
  }
  ASSERT_EQ(via_b.Delete("/api/v1/workloads/" + running[0]).status, 200);
  ASSERT_EQ(via_b.Delete("/api/v1/workloads/" + running[1]).status, 200);
  EXPECT_TRUE(WaitFor([&] {
    json l = Workloads(via_b);
    return CountState(l, "gpu", "Running") == 8 && CountState(l, "gpu", "Pending") == 2;
  })) << Workloads(via_b).dump();
  ASSERT_EQ(via_b.Post("/api/v1/workloads", GpuJob("after"), "application/yaml").status, 201);
  ASSERT_EQ(via_b.Delete("/api/v1/workloads/" + running[2]).status, 200);
  ASSERT_EQ(via_b.Delete("/api/v1/workloads/" + running[3]).status, 200);
  ASSERT_EQ(via_b.Delete("/api/v1/workloads/" + running[4]).status, 200);
  EXPECT_TRUE(WaitFor([&] { return via_b.Get("/api/v1/workloads/after").body.value("state", "") == "Running"; }))
      << via_b.Get("/api/v1/workloads/after").text;
  list = Workloads(via_b);
  EXPECT_EQ(CountState(list, "gpu", "Running"), 8);
  EXPECT_EQ(DeviceClash(list), "");
}

}  // namespace
}  // namespace abacus::testing
