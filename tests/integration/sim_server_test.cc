// The simulator and the server decide alike (issue 4): one small scenario — five nodes of two
// flavors, ten workloads arriving together in one queue — replayed by `abacus sim events` and
// submitted to a real `abacus server` (nodes posted to /api/v1/nodes): every workload lands on
// the same nodes with the same device counts, and the same ones are left waiting.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>

#include "server/server_test_util.h"
#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;

const std::string kOrg = server::testing_org::TeamOrg(
    "acme", "ml", "train", {{"gpu/nvidia/A100-80G", "16"}, {"gpu/nvidia/T4", "8"}, {"cpu", "256"}, {"memory", "2Ti"}});

struct NodeSpec {
  std::string name, model;
  int gpus, cpu;
  std::string memory;
};
// In name order: the server lists nodes by name, the trace in file order.
const std::vector<NodeSpec> kNodes = {{"a100-1", "A100-80G", 8, 64, "512Gi"},
                                      {"a100-2", "A100-80G", 8, 64, "512Gi"},
                                      {"t4-1", "T4", 4, 32, "128Gi"},
                                      {"t4-2", "T4", 4, 32, "128Gi"},
                                      {"t4-3", "T4", 4, 32, "128Gi"}};

struct JobSpec {
  std::string name, kind, flavor;  // flavor empty: CPU only
  int count, replicas, cpu;
  std::string memory;
};
// Submitted in this order, all of priority class `high` (700, no aging): the server, which may
// decide them over several cycles as they arrive, sees them in the order one simulator cycle
// sorts them in (priority, then submission), and none may preempt another. Experiments are not
// gangs: a blocked one holds no nodes. w08 and w09 exceed the T4 quota (or find no A100 room);
// w10 finds no room.
const std::vector<JobSpec> kJobs = {
    {"w01", "TrainingJob", "gpu/nvidia/A100*", 4, 2, 8, "64Gi"},
    {"w02", "TrainingJob", "gpu/*", 2, 1, 4, "32Gi"},
    {"w03", "TrainingJob", "gpu/nvidia/T4", 2, 2, 4, "16Gi"},
    {"w04", "Experiment", "gpu/*", 1, 1, 2, "8Gi"},
    {"w05", "Experiment", "gpu/nvidia/T4", 3, 1, 8, "16Gi"},
    {"w06", "Experiment", "gpu/*", 2, 1, 2, "8Gi"},
    {"w07", "Experiment", "", 0, 1, 16, "64Gi"},
    {"w08", "Experiment", "gpu/*", 4, 1, 4, "16Gi"},
    {"w09", "Experiment", "gpu/nvidia/T4", 2, 1, 2, "8Gi"},
    {"w10", "Experiment", "gpu/*", 8, 1, 8, "32Gi"},
};

std::string TraceYaml() {
  std::string y = "nodes:\n";
  for (const auto& n : kNodes) {
    y += "  - {name: " + n.name + ", cpu: " + std::to_string(n.cpu) + ", memory: " + n.memory + ", devices: [\"gpu:nvidia:" +
         n.model + ":" + std::to_string(n.gpus) + "\"]}\n";
  }
  y += "workloads:\n";
  for (const auto& j : kJobs) {
    y += "  - {name: " + j.name + ", kind: " + j.kind + ", tenant: acme, queue: train, priorityClass: high, submit: 0, replicas: " +
         std::to_string(j.replicas) + ", cpu: " + std::to_string(j.cpu) + ", memory: " + j.memory;
    if (!j.flavor.empty()) y += ", accelerators: {flavor: \"" + j.flavor + "\", count: " + std::to_string(j.count) + "}";
    y += "}\n";
  }
  return y;
}

std::string WorkloadYaml(const JobSpec& j) {
  std::string y = "kind: " + j.kind + "\nname: " + j.name + "\nproject: acme/ml\nqueue: train\npriorityClass: high\nspec:\n" +
                  "  command: [\"sleep\", \"3600\"]\n  taskGroups:\n    - name: main\n      replicas: " +
                  std::to_string(j.replicas) + "\n      resources: {cpu: " + std::to_string(j.cpu) + ", memory: " + j.memory;
  if (!j.flavor.empty()) y += ", accelerators: {flavor: \"" + j.flavor + "\", count: " + std::to_string(j.count) + "}";
  return y + "}\n";
}

// Each task's node and device count, sorted (the order of tasks in a placement is not a decision).
using Where = std::multiset<std::pair<std::string, int>>;

TEST(SimServerTest, SimulatorAndServerMakeTheSamePlacements) {
  TempDir dir;
  // 1. The simulator.
  std::string trace = dir.path() + "/trace.yaml", org = dir.path() + "/org.yaml";
  {
    std::ofstream(trace) << TraceYaml();
    std::ofstream(org) << kOrg;
  }
  auto sim = RunCli({"sim", "events", "--trace", trace, "--config", org, "-o", "json", "--workloads", "-q"});
  ASSERT_EQ(sim.code, 0) << sim.err;
  json result = json::parse(sim.out);
  std::map<std::string, Where> simulated;
  for (const auto& w : result["workloads"]) {
    Where where;
    for (const auto& t : w["tasks"]) where.insert({t["node"].get<std::string>(), t["devices"].get<int>()});
    simulated[w["name"].get<std::string>()] = where;
  }
  ASSERT_EQ(simulated.size(), kJobs.size());
  EXPECT_TRUE(result["warnings"].empty());
  EXPECT_EQ(result["cycles"], 1) << "all arrive together: one cycle decides";
  int placed = 0;
  for (const auto& [name, where] : simulated) placed += !where.empty();
  // The scenario is meant to place most and leave some waiting.
  EXPECT_GE(placed, 7) << sim.out;
  EXPECT_LT(placed, static_cast<int>(kJobs.size())) << sim.out;

  // 2. The server, with the same organisation, nodes and workloads in the same order.
  ServerProcess server(dir.path() + "/server", {"--rate-limit", "0"});  // the test polls
  auto client = server.Client();
  auto applied = client.Post("/api/v1/apply", kOrg, "application/yaml");
  ASSERT_EQ(applied.status, 200) << applied.text;
  for (const auto& n : kNodes) {
    json devices = json::array();
    for (int i = 0; i < n.gpus; ++i) devices.push_back({{"index", i}, {"flavor", "gpu/nvidia/" + n.model}});
    json node = {{"name", n.name}, {"cpu", std::to_string(n.cpu)}, {"memory", n.memory}, {"devices", devices}};
    auto posted = client.Post("/api/v1/nodes", node.dump(), "application/json");
    ASSERT_EQ(posted.status, 201) << posted.text;
  }
  std::map<std::string, std::string> ids;
  for (const auto& j : kJobs) {
    auto r = client.Post("/api/v1/workloads", WorkloadYaml(j), "application/yaml");
    ASSERT_EQ(r.status, 201) << j.name << ": " << r.text;
    ids[j.name] = r.body["items"][0]["id"].get<std::string>();
  }
  // Wait until every workload the simulator placed is placed by the server too, and every other
  // one has been tried (it carries a pending reason).
  std::map<std::string, Where> served;
  std::map<std::string, json> records;
  bool settled = WaitFor([&] {
    bool all = true;
    for (const auto& j : kJobs) {
      json w = client.Get("/api/v1/workloads/" + ids[j.name]).body;
      Where where;
      for (const auto& p : w.value("placements", json::array())) {
        where.insert({p.value("node", ""), static_cast<int>(p.value("devices", json::array()).size())});
      }
      served[j.name] = where;
      records[j.name] = w;
      all &= simulated[j.name].empty() ? w.contains("pendingReason") : !where.empty();
    }
    return all;
  });
  for (const auto& j : kJobs) {
    EXPECT_EQ(served[j.name], simulated[j.name])
        << j.name << "\nserver: " << records[j.name].dump() << "\nsim: " << sim.out.substr(0, 4000);
  }
  EXPECT_TRUE(settled);
}

}  // namespace
}  // namespace abacus::testing
