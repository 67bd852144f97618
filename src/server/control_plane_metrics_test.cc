// ControlPlane on a manual clock: what it shows of itself — device utilization and holders,
// Prometheus text, the counters of attempts, evictions and replicas, shortages — and scheduler and
// controller decisions in the audit chain, committed with the change they make.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "govern/audit.h"
#include "server/control_plane_test.h"
#include "server/read_views_json.h"

namespace abacus::server {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using testing_cp::ControlPlaneTest;

json AgentNode(const std::string& name, int gpus) { return testing_cp::A100Node(name, gpus); }

// A strict reader of the Prometheus text format 0.0.4: every family has HELP then TYPE before
// its samples, names and labels are well formed, values are numbers, histogram buckets are
// cumulative and end with +Inf equal to _count.
struct Family {
  std::string type;
  std::vector<std::pair<std::string, double>> samples;  // "name{labels}" → value
};

std::map<std::string, Family> ParsePrometheus(const std::string& text, std::vector<std::string>& problems) {
  std::map<std::string, Family> families;
  std::string current;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  auto name_ok = [](const std::string& s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_' || s[0] == ':')) return false;
    for (char c : s) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':')) return false;
    }
    return true;
  };
  while (std::getline(in, line)) {
    ++n;
    std::string where = "line " + std::to_string(n) + ": ";
    if (line.rfind("# HELP ", 0) == 0) {
      std::string name = line.substr(7, line.find(' ', 7) - 7);
      if (!name_ok(name)) problems.push_back(where + "bad name " + name);
      if (families.count(name)) problems.push_back(where + "family repeated " + name);
      current = name;
      families[name];
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      std::string rest = line.substr(7);
      std::string name = rest.substr(0, rest.find(' '));
      std::string type = rest.substr(rest.find(' ') + 1);
      if (name != current) problems.push_back(where + "TYPE without HELP for " + name);
      if (type != "counter" && type != "gauge" && type != "histogram") problems.push_back(where + "type " + type);
      families[name].type = type;
      continue;
    }
    if (line.empty() || line[0] == '#') {
      problems.push_back(where + "unexpected line '" + line + "'");
      continue;
    }
    size_t brace = line.find('{');
    size_t space = line.rfind(' ');
    std::string name = line.substr(0, std::min(brace, space));
    std::string base = name;
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      if (families[current].type == "histogram" && base.size() > std::strlen(suffix) &&
          base.compare(base.size() - std::strlen(suffix), std::string::npos, suffix) == 0) {
        base = base.substr(0, base.size() - std::strlen(suffix));
      }
    }
    if (base != current) problems.push_back(where + "sample " + name + " outside its family " + current);
    if (brace != std::string::npos) {
      std::string labels = line.substr(brace + 1, line.find('}') - brace - 1);
      // label="value" pairs, comma separated, values with escapes only.
      std::regex pair(R"re(^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(,|$))re");
      std::smatch m;
      std::string rest = labels;
      while (!rest.empty()) {
        if (!std::regex_search(rest, m, pair)) {
          problems.push_back(where + "bad labels {" + labels + "}");
          break;
        }
        rest = m.suffix();
      }
    }
    char* end = nullptr;
    std::string value = line.substr(space + 1);
    double v = std::strtod(value.c_str(), &end);
    if (value != "+Inf" && (end == value.c_str() || *end != '\0')) problems.push_back(where + "bad value " + value);
    families[current].samples.emplace_back(line.substr(0, space), v);
  }
  for (const auto& [name, f] : families) {
    if (f.type.empty()) problems.push_back(name + ": no TYPE");
    if (f.type != "histogram") continue;
    double last = -1;
    for (const auto& [key, v] : f.samples) {
      if (key.find("_bucket") != std::string::npos) {
        if (last >= 0 && v < last) problems.push_back(name + ": buckets not cumulative at " + key);
        last = v;
      } else if (key.find("_count") != std::string::npos) {
        if (v != last) problems.push_back(name + ": _count " + std::to_string(v) + " != +Inf bucket");
        last = -1;
      }
    }
  }
  return families;
}

// The value of sample `key` ("name{labels}") of `family`; -1 when absent.
double SampleValue(const std::map<std::string, Family>& families, const std::string& family, const std::string& key) {
  auto f = families.find(family);
  if (f == families.end()) return -1.0;
  for (const auto& [k, v] : f->second.samples) {
    if (k == key) return v;
  }
  return -1.0;
}

// GET /api/v1/nodes: each device carries its agent's last reported utilization and its holders
// as the caller sees them; a caller that may not see the workload gets only hiddenMilli.
TEST_F(ControlPlaneTest, NodeDevicesCarryUtilizationAndHoldersAsTheCallerSeesThem) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  std::string id = Submit("ft", 1);
  ASSERT_TRUE(cp_->AgentHeartbeat("gpu-a", json{{"devices", {{{"index", 0}, {"utilization", 0.75}}}}}).ok());
  json node = NodeJson(*cp_->GetNode("gpu-a"));
  json dev0 = node["devices"][0];
  EXPECT_EQ(dev0["utilization"], 0.75);
  EXPECT_FALSE(node["devices"][1].contains("utilization"));  // never reported
  ASSERT_EQ(dev0["holders"].size(), 1u) << dev0.dump();
  EXPECT_EQ(dev0["holders"][0], (json{{"workload", id}, {"name", "ft"}, {"milli", 1000}}));
  EXPECT_EQ(dev0["hiddenMilli"], 0);

  json hidden = NodeJson(*cp_->GetNode("gpu-a", [](const Workload&) { return false; }));
  EXPECT_TRUE(hidden["devices"][0]["holders"].empty());
  EXPECT_EQ(hidden["devices"][0]["hiddenMilli"], 1000);
  EXPECT_EQ(hidden["hiddenCpuMilli"], 1000);
  EXPECT_EQ(hidden.dump().find(id), std::string::npos);
  EXPECT_EQ(DevicesJson(cp_->ListDevices()).dump().find(id), std::string::npos);  // names no holder
}

TEST_F(ControlPlaneTest, MetricsAreValidPrometheusTextWithTheIssueFamilies) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  std::string id = Submit("ft", 2);
  ASSERT_TRUE(cp_->AgentHeartbeat("gpu-a", json{{"devices", {{{"index", 0}, {"utilization", 0.5}}}}}).ok());
  Report("gpu-a", id + ".0.0.1", {{"phase", "Exited"}, {"exitCode", 0}});
  std::vector<std::string> problems;
  auto families = ParsePrometheus(cp_->RenderMetrics(), problems);
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
  for (const char* name :
       {"abacus_queue_pending_workloads", "abacus_queue_quota_nominal", "abacus_queue_quota_used",
        "abacus_queue_quota_borrowed", "abacus_queue_admission_wait_seconds", "abacus_node_devices",
        "abacus_device_utilization_ratio", "abacus_scheduling_cycle_seconds", "abacus_preemptions_total",
        "abacus_workloads_total"}) {
    EXPECT_TRUE(families.count(name)) << name;
  }
  auto value = [&](const std::string& family, const std::string& key) { return SampleValue(families, family, key); };
  EXPECT_EQ(value("abacus_queue_quota_nominal",
                  R"(abacus_queue_quota_nominal{queue="train",tenant="acme",cohort="",resource="gpu/nvidia/A100-80G"})"),
            2.0);
  EXPECT_EQ(value("abacus_workloads_total", R"(abacus_workloads_total{kind="TrainingJob",result="Succeeded"})"), 1.0);
  EXPECT_EQ(value("abacus_device_utilization_ratio", R"(abacus_device_utilization_ratio{node="gpu-a",device="0"})"), 0.5);
  EXPECT_EQ(value("abacus_queue_admission_wait_seconds",
                  R"(abacus_queue_admission_wait_seconds_count{queue="train"})"), 1.0);
  // No workload id in any label.
  EXPECT_EQ(cp_->RenderMetrics().find(id), std::string::npos);
}

// Issue 24: a task group's placement rules go from the YAML through the ledger to the scheduler:
// with maxPerNode 1 the two replicas land on two nodes (binpacking alone puts both on one).
TEST_F(ControlPlaneTest, MaxPerNodeSpreadsTheReplicasOfASubmittedWorkloadOverNodes) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-b", 2), nullptr).ok());
  auto submit = [&](const std::string& name, const std::string& placement) {
    auto r = cp_->Submit("kind: TrainingJob\nname: " + name +
                             "\nproject: acme/ml\nqueue: train\nspec:\n  command: [\"true\"]\n  taskGroups:\n"
                             "    - name: w\n      replicas: 2\n" + placement +
                             "      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: 1}}\n",
                         false, name + ".yaml", nullptr, {}, false, nullptr);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    cp_->WaitForCycle();
    std::set<std::string> nodes;
    json w = WorkloadViewJson(*cp_->GetWorkload(r->answer.submitted[0].id));
    for (const auto& p : w["placements"]) nodes.insert(p["node"].get<std::string>());
    return nodes;
  };
  EXPECT_EQ(submit("packed", "").size(), 1u);  // the queue's 2 GPUs: then cancelled
  ASSERT_TRUE(cp_->Cancel("packed", "test", {}, nullptr).ok());
  cp_->WaitForCycle();
  EXPECT_EQ(submit("spread", "      placement: {maxPerNode: 1}\n").size(), 2u);
}

// Issue 25: admission attempts, controller actions, evictions and inference replicas are in
// /metrics, counted once their batch committed.
TEST_F(ControlPlaneTest, MetricsCountAttemptsControllerActionsEvictionsAndReplicas) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  std::string id = Submit("lost", 1);
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  Report("gpu-a", id + ".0.0.1", {{"phase", "Lost"}, {"lostReason", "NodeLost"}, {"message", "connection reset"}});
  cp_->WaitForCycle();
  auto r = cp_->Submit(R"(kind: InferenceService
name: chat
project: acme/ml
queue: train
spec:
  command: ["serve"]
  replicas: 1
  minReplicas: 1
  maxReplicas: 3
  taskGroups:
    - name: server
      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: 1}}
)",
                       false, "chat.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  cp_->WaitForCycle();
  std::vector<std::string> problems;
  const std::string text = cp_->RenderMetrics();
  auto families = ParsePrometheus(text, problems);
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
  auto value = [&](const std::string& family, const std::string& key) { return SampleValue(families, family, key); };
  // Admitted twice (first, then again after the requeue), and the service once.
  EXPECT_EQ(value("abacus_admission_attempts_total", R"(abacus_admission_attempts_total{result="admitted",reason=""})"),
            3.0)
      << text;
  EXPECT_EQ(value("abacus_controller_actions_total",
                  R"(abacus_controller_actions_total{kind="TrainingJob",action="requeue"})"),
            1.0)
      << text;
  EXPECT_EQ(value("abacus_evictions_total", R"(abacus_evictions_total{reason="NodeLost"})"), 1.0) << text;
  const std::string svc = R"(abacus_inference_replicas{service="chat",tenant="acme",queue="train",state=")";
  EXPECT_EQ(value("abacus_inference_replicas", svc + R"(desired"})"), 1.0) << text;
  EXPECT_EQ(value("abacus_inference_replicas", svc + R"(min"})"), 1.0) << text;
  EXPECT_EQ(value("abacus_inference_replicas", svc + R"(max"})"), 3.0) << text;
  EXPECT_EQ(value("abacus_inference_replicas", svc + R"(placed"})"), 1.0) << text;
  EXPECT_EQ(value("abacus_inference_replicas", svc + R"(ready"})"), 0.0) << text;  // no task runs yet
}

TEST_F(ControlPlaneTest, AnInferenceServiceWaitingForCapacityIsAShortage) {
  // No node at all: the service waits 2 h, then a node joins and it is admitted.
  auto r = cp_->Submit(R"(kind: InferenceService
name: chat
project: acme/ml
queue: train
spec:
  command: ["serve"]
  replicas: 2
  minReplicas: 1
  maxReplicas: 4
  taskGroups:
    - name: server
      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: 1}}
)",
                       false, "chat.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  clock_.Advance(2h);
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  cp_->WaitForCycle();
  ASSERT_EQ(State(id), "Admitted");
  ControlPlane::ReportQuery q;
  q.from = "2026-01-01";
  q.to = "2026-01-02";
  q.by = "workload";
  q.format = "json";
  auto rep = cp_->Report("shortages", q);
  ASSERT_TRUE(rep.ok()) << rep.status().ToString();
  json t = json::parse(rep->body);
  ASSERT_EQ(t["rows"].size(), 1u) << t.dump();
  EXPECT_DOUBLE_EQ(t["rows"][0]["shortageHours"].get<double>(), 2.0) << t.dump();
  EXPECT_DOUBLE_EQ(t["rows"][0]["missingReplicaHours"].get<double>(), 4.0) << t.dump();
}

TEST_F(ControlPlaneTest, SchedulerAndControllerDecisionsJoinTheAuditChain) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  std::string id = Submit("audited", 1);
  ASSERT_EQ(State(id), "Admitted");
  Report("gpu-a", id + ".0.0.1", {{"phase", "Exited"}, {"exitCode", 2}, {"message", "exited 2"}});
  ASSERT_EQ(State(id), "Failed");
  cp_->governance().FlushAudit();
  auto entries = cp_->governance().ReadAudit({});
  ASSERT_TRUE(entries.ok()) << entries.status().ToString();
  std::set<std::string> seen;
  for (const auto& e : *entries) {
    if (e.record.object_name == id) seen.insert(e.record.actor + " " + e.record.action);
  }
  EXPECT_TRUE(seen.count("scheduler admit")) << ::testing::PrintToString(seen);
  EXPECT_TRUE(seen.count("controller/TrainingJob fail")) << ::testing::PrintToString(seen);
  auto verified = cp_->governance().VerifyAudit();
  ASSERT_TRUE(verified.ok());
  EXPECT_TRUE(verified->ok);
}

// Issue 20: a decision and its audit entry commit together or not at all. With the audit chain
// unable to append (an entry written behind its back), a controller's "fail" and the scheduler's
// "admit" used to commit anyway and lose their entries; now neither happens, before or after a
// restart (the agent reports again; the cycle tries again).
TEST_F(ControlPlaneTest, ADecisionCommitsWithItsAuditEntryOrNotAtAll) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  std::string holder = Submit("holder", 2);
  ASSERT_EQ(State(holder), "Admitted");
  std::string waiter = Submit("waiter", 1);
  ASSERT_EQ(State(waiter), "Pending");
  cp_->governance().FlushAudit();
  // A stray entry at the chain's next seq: every audited commit now fails.
  WriteBatch stray;
  stray.AppendJournalJson(std::string(govern::AuditLog::kStream), json{{"stray", true}}, clock_.Now());
  ASSERT_TRUE(cp_->store().Commit(stray).ok());

  Report("gpu-a", holder + ".0.0.1", {{"phase", "Exited"}, {"exitCode", 2}, {"message", "exited 2"}});
  EXPECT_EQ(State(holder), "Admitted");  // the controller's "fail" did not commit without its entry
  EXPECT_EQ(State(waiter), "Pending");   // nor did an admission into the freed GPUs
  cp_.reset();
  Open();
  EXPECT_EQ(State(holder), "Admitted");
  EXPECT_EQ(State(waiter), "Pending");
}

}  // namespace
}  // namespace abacus::server
