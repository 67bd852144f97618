// ControlPlane on a manual clock, without HTTP: incremental scheduling, agent task reports,
// metering (usage intervals committed with the transitions, prices, restart) and node liveness.
#include "server/agent_api.h"
#include "server/control_plane.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <atomic>

#include "common/ids.h"
#include "govern/audit.h"
#include "server/control_plane_fixture.h"
#include "server/server_test_util.h"
#include "server/read_views_json.h"

namespace abacus::server {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

const std::string kOrg = testing_org::AcmeOrg("train", 2) + R"(---
kind: PriceList
name: default
spec:
  currency: USD
  prices:
    - {flavor: gpu/nvidia/A100-80G, perHour: "2", effectiveFrom: "2026-01-01T00:00:00Z"}
    - {flavor: gpu/nvidia/A100-80G, perHour: "3", effectiveFrom: "2026-01-01T02:00:00Z"}
)";

std::string Job(const std::string& name, int gpus) { return testing_cp::A100Job(name, gpus); }

json AgentNode(const std::string& name, int gpus) { return testing_cp::A100Node(name, gpus); }

class ControlPlaneTest : public testing_cp::ControlPlaneFixture {
 protected:
  void SetUp() override {
    ControlPlaneFixture::SetUp();
    Open();
    ApplyOrg(kOrg);
  }
  using ControlPlaneFixture::Open;
  // Opens with nodes NotReady after `node_timeout` without a heartbeat.
  void Open(Duration node_timeout) {
    Open([&](ControlPlaneOptions& o) { o.node_timeout = node_timeout; });
  }
  std::string Submit(const std::string& name, int gpus) { return SubmitYaml(Job(name, gpus), name + ".yaml"); }
  json Usage(const std::string& by) {
    ControlPlane::ReportQuery q;
    q.from = "2026-01-01";
    q.to = "2026-01-02";
    q.by = by;
    q.format = "json";
    auto r = cp_->Report("usage", q);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? json::parse(r->body) : json();
  }
};

TEST_F(ControlPlaneTest, ParkedWorkloadWaitsUntilCapacityFreesThenIsAdmitted) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  std::string big = Submit("big", 2);
  EXPECT_EQ(State(big), "Admitted");
  std::string next = Submit("next", 1);
  EXPECT_EQ(State(next), "Pending");
  // Later submissions run incremental cycles; the parked one keeps its reason.
  Submit("another", 1);
  EXPECT_EQ(WorkloadViewJson(*cp_->GetWorkload(next))["pendingReason"]["code"], "Quota");
  // The big one finishes: capacity frees and the parked workload is retried at once.
  Report("gpu-a", big + ".0.0.1", {{"phase", "Exited"}, {"exitCode", 0}});
  EXPECT_EQ(State(big), "Succeeded");
  cp_->WaitForCycle();
  EXPECT_EQ(State(next), "Admitted");
}

// A submission's answer means the workload can be read: by id, by name and in the list, at
// every moment after, while the loop moves it from its inbox into the ledger (the loop takes it
// from the inbox inside the state lock readers take, so no read falls in between).
TEST_F(ControlPlaneTest, ASubmittedWorkloadIsReadableFromItsAnswerOn) {
  std::atomic<bool> done{false};
  std::thread hammer([&] {  // shared holders of the state lock, to hold the loop's writer back
    while (!done) {
      WorkloadFilter all;
      cp_->ListWorkloads(all, [](const WorkloadListView&) { std::this_thread::sleep_for(50us); });
    }
  });
  int missing = 0;
  for (int i = 0; i < 300 && missing == 0; ++i) {
    const std::string name = "read-" + std::to_string(i);
    auto r = cp_->Submit(Job(name, 1), false, name + ".yaml", nullptr, {}, false, nullptr);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const std::string id = r->answer.submitted[0].id;
    for (int k = 0; k < 20; ++k) {
      if (!cp_->GetWorkload(id).ok()) ++missing;
      auto resolved = cp_->ResolveWorkload(name, nullptr);
      if (!resolved.ok() || *resolved != id) ++missing;
      WorkloadFilter named;
      named.name = name;
      size_t found = 0;
      cp_->ListWorkloads(named, [&](const WorkloadListView& v) { found = v.items.size(); });
      if (found != 1) ++missing;
    }
  }
  done = true;
  hammer.join();
  EXPECT_EQ(missing, 0);
}

// Incremental cycles read the workloads holding quota from an index (Ledger::NoteHolder, loads,
// full scans) rather than scanning the ledger: one admitted in an earlier cycle, or loaded at a
// restart, still counts against the quota of the fresh ones.
TEST_F(ControlPlaneTest, IncrementalCyclesCountEveryHolderAcrossCyclesAndRestarts) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  std::string first = Submit("first", 1);
  ASSERT_EQ(State(first), "Admitted");
  std::string second = Submit("second", 1);
  ASSERT_EQ(State(second), "Admitted");
  std::string third = Submit("third", 1);  // the queue's 2 GPUs are held by the two above
  EXPECT_EQ(State(third), "Pending");
  cp_.reset();
  Open();
  cp_->WaitForCycle();
  std::string fourth = Submit("fourth", 1);
  EXPECT_EQ(State(fourth), "Pending");
  EXPECT_EQ(State(third), "Pending");
  EXPECT_EQ(State(first), "Admitted");
  EXPECT_EQ(State(second), "Admitted");
  // One finishes: exactly one of the waiting ones takes its place.
  Report("gpu-a", first + ".0.0.1", {{"phase", "Exited"}, {"exitCode", 0}});
  cp_->WaitForCycle();
  EXPECT_EQ(State(first), "Succeeded");
  EXPECT_EQ(State(third), "Admitted");
  Submit("fifth", 1);
  EXPECT_EQ(State(fourth), "Pending");
}

TEST_F(ControlPlaneTest, UsageIsMeteredFromAdmissionToReleaseAndPricedOverTime) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  std::string id = Submit("ft", 2);
  ASSERT_EQ(State(id), "Admitted");
  clock_.Advance(1h);
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  EXPECT_EQ(State(id), "Running");
  clock_.Advance(2h);  // 03:00
  Report("gpu-a", id + ".0.0.1", {{"phase", "Exited"}, {"exitCode", 0}});
  EXPECT_EQ(State(id), "Succeeded");
  json usage = Usage("tenant");
  ASSERT_EQ(usage["rows"].size(), 1u) << usage.dump();
  json row = usage["rows"][0];
  EXPECT_EQ(row["tenant"], "acme");
  EXPECT_DOUBLE_EQ(row["deviceHours"].get<double>(), 6.0) << row.dump();
  // 00:00-02:00 at 2/h and 02:00-03:00 at 3/h, for 2 GPUs.
  EXPECT_DOUBLE_EQ(row["cost"].get<double>(), 2 * (2 * 2.0 + 1 * 3.0)) << row.dump();
  EXPECT_EQ(usage["currency"], "USD");  // of the price list the report used
  // By hour: 2 device-hours in each of the three hours, the third at the later price.
  json hours = Usage("flavor,hour");
  ASSERT_EQ(hours["rows"].size(), 3u) << hours.dump();
  EXPECT_EQ(hours["rows"][0]["period"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(hours["rows"][2]["period"], "2026-01-01T02:00:00Z");
  for (const auto& r : hours["rows"]) EXPECT_DOUBLE_EQ(r["deviceHours"].get<double>(), 2.0) << r.dump();
  EXPECT_DOUBLE_EQ(hours["rows"][2]["cost"].get<double>(), 6.0);
}

TEST_F(ControlPlaneTest, RestartKeepsOneOpenIntervalPerHeldAllocation) {
  auto registered = cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr);
  ASSERT_TRUE(registered.ok());
  std::string id = Submit("long", 1);
  ASSERT_EQ(State(id), "Admitted");
  clock_.Advance(1h);
  cp_.reset();  // a stop at any point: usage was committed with the admission
  Open();
  EXPECT_EQ(State(id), "Admitted");
  clock_.Advance(1h);
  json again = AgentNode("gpu-a", 2);
  again["credential"] = registered->node_token;  // the agent proves it is the node
  ASSERT_TRUE(cp_->RegisterAgent(again, nullptr).ok());
  Report("gpu-a", id + ".0.0.1", {{"phase", "Exited"}, {"exitCode", 0}});
  json usage = Usage("workload");
  ASSERT_EQ(usage["rows"].size(), 1u) << usage.dump();
  EXPECT_DOUBLE_EQ(usage["rows"][0]["deviceHours"].get<double>(), 2.0) << usage.dump();  // counted once
}

TEST_F(ControlPlaneTest, SilentAgentNodeIsLostOnTheClockAndItsWorkRequeued) {
  cp_.reset();
  Open(30s);
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  std::string id = Submit("job", 1);
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  clock_.Advance(31s);
  cp_->WaitForCycle();
  cp_->WaitForCycle();
  json node = NodeJson(*cp_->GetNode("gpu-a"));
  EXPECT_EQ(node["state"], "NotReady");
  EXPECT_EQ(node["notReadySinceUs"], ToMicros(clock_.Now()));
  // Issue 20.9: its agent, cut off as long, is fencing the task (TrainingJob: 30 s by default);
  // the work stays where it is until then.
  EXPECT_EQ(State(id), "Running");
  clock_.Advance(29s);
  cp_->WaitForCycle();
  cp_->WaitForCycle();
  EXPECT_EQ(State(id), "Running");
  clock_.Advance(2s);  // NotReady + 30 s has passed
  cp_->WaitForCycle();
  cp_->WaitForCycle();
  EXPECT_EQ(State(id), "Requeued");
  auto events = (*WorkloadEventsJson(cp_->Events(id)))["items"];
  EXPECT_EQ(events.back()["details"]["reason"], "NodeLost") << events.dump();
  // Its usage ended with the loss: 31 s silent + 31 s of fencing.
  json usage = Usage("workload");
  EXPECT_NEAR(usage["rows"][0]["deviceHours"].get<double>(), 62.0 / 3600, 0.0005) << usage.dump();
}

// Issue 22.2: metering ends a requeued workload's usage by the Requeue decision's typed reason,
// not by words in its message. A task lost with its node ("NodeLost") whose message says nothing
// of a loss was metered as "Preempted" (the message did not contain " lost: ").
TEST_F(ControlPlaneTest, UsageEndsByTheRequeuesReasonNotItsMessage) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  std::string id = Submit("lost", 1);
  ASSERT_EQ(State(id), "Admitted");
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  clock_.Advance(60s);
  Report("gpu-a", id + ".0.0.1", {{"phase", "Lost"}, {"lostReason", "NodeLost"}, {"message", "connection reset"}});
  // Requeued without using a retry, and admitted again at once (the node is still Ready).
  const json events = *WorkloadEventsJson(cp_->Events(id));
  bool requeued = false;
  for (const auto& e : events["items"]) requeued |= e["type"] == "Requeued";
  ASSERT_TRUE(requeued) << events.dump();
  json usage = Usage("reason");
  std::set<std::string> reasons;
  for (const auto& row : usage["rows"]) reasons.insert(row.value("reason", ""));
  EXPECT_TRUE(reasons.count("NodeLost")) << usage.dump();
  EXPECT_FALSE(reasons.count("Preempted")) << usage.dump();
}

std::string GangJob(const std::string& name, const std::string& extra) {
  return "kind: TrainingJob\nname: " + name +
         "\nproject: acme/ml\nqueue: train\nspec:\n  command: [\"true\"]\n" + extra +
         "  taskGroups:\n    - name: w\n      replicas: 2\n"
         "      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: 1}}\n";
}

// The node's assignment as the long poll's route encodes it (no secret opened).
json AssignmentOf(ControlPlane& cp, const std::string& node) {
  return AssignmentJson(*cp.WaitAssignments(node, 0, 0ms), node, nullptr);
}

json TaskOf(const json& assignment, const std::string& id) {
  for (const auto& t : assignment["tasks"]) {
    if (t["taskId"] == id) return t;
  }
  return nullptr;
}

TEST_F(ControlPlaneTest, GangFailureStopsTheOthersThenRetriesAfterBackoffWithResume) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  auto r = cp_->Submit(GangJob("gang", "  checkpoint: {signal: SIGUSR1, graceSeconds: 60}\n"
                                       "  restartPolicy: {maxRetries: 1, backoffSeconds: 10}\n"),
                       false, "gang.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  Report("gpu-a", id + ".0.1.1", {{"phase", "Running"}});
  // One task fails: the controller stops its gang mate with the checkpoint signal and grace.
  Report("gpu-a", id + ".0.0.1", {{"phase", "Exited"}, {"exitCode", 3}, {"message", "exited 3"}});
  json mate = TaskOf(AssignmentOf(*cp_, "gpu-a"), id + ".0.1.1");
  ASSERT_FALSE(mate.is_null());
  EXPECT_EQ(mate["action"], "stop");
  EXPECT_EQ(mate["stopSignal"], "SIGUSR1");
  EXPECT_EQ(mate["graceSeconds"], 60);
  EXPECT_EQ(State(id), "Running");
  // The mate stops: the attempt is requeued with a retry used, not before the 10 s backoff.
  Report("gpu-a", id + ".0.1.1", {{"phase", "Exited"}, {"signal", 10}, {"stopped", true}});
  EXPECT_EQ(State(id), "Requeued");
  cp_->WaitForCycle();
  EXPECT_EQ(State(id), "Requeued");
  json reason = WorkloadViewJson(*cp_->GetWorkload(id))["pendingReason"];
  EXPECT_NE(reason["message"].get<std::string>().find("backoff"), std::string::npos);
  clock_.Advance(11s);
  cp_->WaitForCycle();
  cp_->WaitForCycle();
  json w = WorkloadViewJson(*cp_->GetWorkload(id));
  EXPECT_EQ(w["state"], "Admitted") << w.dump();
  EXPECT_EQ(w["failures"], 1);
  json next = TaskOf(AssignmentOf(*cp_, "gpu-a"), id + ".0.0.2");
  ASSERT_FALSE(next.is_null());
  EXPECT_EQ(next["env"]["ABACUS_RESUME"], "1");
  EXPECT_EQ(next["env"]["ABACUS_ATTEMPT"], "2");
}

TEST_F(ControlPlaneTest, MaxRuntimeStopsTheJobAndFailsIt) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  auto r = cp_->Submit(GangJob("capped", "  maxRuntime: 1h\n"), false, "capped.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  Report("gpu-a", id + ".0.1.1", {{"phase", "Running"}});
  clock_.Advance(61min);
  cp_->WaitForCycle();  // the controller tick
  cp_->WaitForCycle();
  json a = AssignmentOf(*cp_, "gpu-a");
  EXPECT_EQ(TaskOf(a, id + ".0.0.1")["action"], "stop") << a.dump();
  Report("gpu-a", id + ".0.0.1", {{"phase", "Exited"}, {"signal", 15}, {"stopped", true}});
  Report("gpu-a", id + ".0.1.1", {{"phase", "Exited"}, {"signal", 15}, {"stopped", true}});
  json w = WorkloadViewJson(*cp_->GetWorkload(id));
  EXPECT_EQ(w["state"], "Failed") << w.dump();
  EXPECT_EQ(w["failureReason"], "MaxRuntimeExceeded");
}

}  // namespace
}  // namespace abacus::server

namespace abacus::server {
namespace {

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

}  // namespace
}  // namespace abacus::server

namespace abacus::server {
namespace {

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

}  // namespace
}  // namespace abacus::server

namespace abacus::server {
namespace {

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

namespace abacus::server {
namespace {

std::string ExperimentYaml(const std::string& name, const std::string& extra) {
  return "kind: Experiment\nname: " + name +
         "\nproject: acme/ml\nqueue: train\nspec:\n  command: [\"jupyter\"]\n" + extra +
         "  taskGroups:\n    - name: nb\n"
         "      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: 1}}\n";
}

TEST_F(ControlPlaneTest, ExperimentPastItsTtlIsStoppedAndCancelled) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  auto r = cp_->Submit(ExperimentYaml("nb", "  ttl: 1h\n"), false, "nb.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  ASSERT_EQ(State(id), "Running");
  clock_.Advance(61min);
  ASSERT_TRUE(cp_->AgentHeartbeat("gpu-a", json::object()).ok());  // the node stays alive
  cp_->WaitForCycle();
  cp_->WaitForCycle();
  json a = AssignmentOf(*cp_, "gpu-a");
  EXPECT_EQ(TaskOf(a, id + ".0.0.1")["action"], "stop") << a.dump();
  Report("gpu-a", id + ".0.0.1", {{"phase", "Exited"}, {"signal", 15}, {"stopped", true}});
  EXPECT_EQ(State(id), "Cancelled");
  auto events = (*WorkloadEventsJson(cp_->Events(id)))["items"];
  bool ttl = false;
  for (const auto& e : events) ttl |= e["type"] == "Cancelled" && e["details"].value("reason", "") == "TTLExpired";
  EXPECT_TRUE(ttl) << events.dump();
}

TEST_F(ControlPlaneTest, IdleExperimentGetsANoticeThenIsReclaimed) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  auto r = cp_->Submit(
      ExperimentYaml("idle-nb", "  idle: {utilizationBelowPercent: 5, windowSeconds: 600, noticeSeconds: 300}\n"),
      false, "idle.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  int device = WorkloadViewJson(*cp_->GetWorkload(id))["placements"][0]["devices"][0]["index"];
  // Its device stays at 1% for the window: a notice, then (still idle) the reclaim.
  for (int minute = 0; minute <= 16; ++minute) {
    ASSERT_TRUE(cp_->AgentHeartbeat("gpu-a", json{{"devices", {{{"index", device}, {"utilization", 0.01}}}}}).ok());
    cp_->WaitForCycle();
    clock_.Advance(1min);
  }
  cp_->WaitForCycle();
  std::vector<std::string> types;
  json events = (*WorkloadEventsJson(cp_->Events(id)))["items"];
  for (const auto& e : events) types.push_back(e["type"]);
  EXPECT_NE(std::find(types.begin(), types.end(), "IdleNotice"), types.end()) << ::testing::PrintToString(types);
  json a = AssignmentOf(*cp_, "gpu-a");
  EXPECT_EQ(TaskOf(a, id + ".0.0.1")["action"], "stop") << a.dump();
}

}  // namespace
}  // namespace abacus::server

namespace abacus::server {
namespace {

constexpr char kTemporaryQuota[] = "  temporaryQuota: {resource: gpu/nvidia/A100-80G, amount: 1, expires: 1h}\n";

std::vector<std::string> TypesOf(ControlPlane& cp, const std::string& id) {
  std::vector<std::string> types;
  // Held: a range-for over the temporary Result would dangle.
  json events = *WorkloadEventsJson(cp.Events(id));
  for (const auto& e : events["items"]) types.push_back(e["type"]);
  return types;
}

bool Has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

TEST_F(ControlPlaneTest, TemporaryQuotaUnderTheTenantLimitIsGrantedThenReclaimedOnExpiry) {
  ASSERT_TRUE(cp_->Apply("kind: Tenant\nname: acme\ntemporaryQuotaAutoApprove:\n"
                         "  - {resource: gpu/nvidia/A100-80G, amount: 1}\n",
                         false, "acme.yaml", nullptr, {}, false, nullptr)
                  .ok());
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 4), nullptr).ok());
  std::string full = Submit("full", 2);  // the queue's nominal 2 GPUs are taken
  ASSERT_EQ(State(full), "Admitted");
  auto r = cp_->Submit(ExperimentYaml("nb", kTemporaryQuota), false, "nb.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  clock_.Advance(2s);  // the controller tick decides the request
  cp_->WaitForCycle();
  cp_->WaitForCycle();
  auto types = TypesOf(*cp_, id);
  EXPECT_TRUE(Has(types, "TemporaryQuotaApproved")) << ::testing::PrintToString(types);
  ASSERT_EQ(State(id), "Admitted") << (*ExplainJson(cp_->Explain(id))).dump();
  json rec = WorkloadViewJson(*cp_->GetWorkload(id));
  ASSERT_EQ(rec["quotaGrants"].size(), 1u) << rec.dump();
  EXPECT_EQ(rec["quotaGrants"][0]["amount"], "1");
  // The grant is the experiment's alone: another GPU job of the queue still waits on quota.
  std::string more = Submit("more", 1);
  EXPECT_EQ(State(more), "Pending");
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  // An hour after admission the grant expires: the experiment is stopped and cancelled.
  clock_.Advance(61min);
  ASSERT_TRUE(cp_->AgentHeartbeat("gpu-a", json::object()).ok());
  cp_->WaitForCycle();
  cp_->WaitForCycle();
  json a = AssignmentOf(*cp_, "gpu-a");
  EXPECT_EQ(TaskOf(a, id + ".0.0.1")["action"], "stop") << a.dump();
  Report("gpu-a", id + ".0.0.1", {{"phase", "Exited"}, {"signal", 15}, {"stopped", true}});
  EXPECT_EQ(State(id), "Cancelled");
  types = TypesOf(*cp_, id);
  EXPECT_TRUE(Has(types, "TemporaryQuotaExpired")) << ::testing::PrintToString(types);
  EXPECT_TRUE(WorkloadViewJson(*cp_->GetWorkload(id)).value("quotaGrants", json::array()).empty());
}

TEST_F(ControlPlaneTest, TemporaryQuotaAboveTheLimitWaitsForATenantAdmin) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 4), nullptr).ok());
  std::string full = Submit("full", 2);
  ASSERT_EQ(State(full), "Admitted");
  std::vector<std::string> ids;
  for (const char* name : {"nb-no", "nb-yes"}) {
    auto r = cp_->Submit(ExperimentYaml(name, kTemporaryQuota), false, std::string(name) + ".yaml", nullptr, {}, false, nullptr);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ids.push_back(r->answer.submitted[0].id);
  }
  cp_->WaitForCycle();
  // Not yet requested: nothing to decide.
  EXPECT_EQ(cp_->DecideTemporaryQuota(ids[0], true, "tia", nullptr).status().code(), StatusCode::kFailedPrecondition);
  clock_.Advance(2s);
  cp_->WaitForCycle();
  cp_->WaitForCycle();
  for (const auto& id : ids) {
    EXPECT_TRUE(Has(TypesOf(*cp_, id), "TemporaryQuotaRequested"));  // no auto-approve limit
    EXPECT_EQ(State(id), "Pending");
  }
  auto no = cp_->DecideTemporaryQuota(ids[0], false, "tia", nullptr);
  ASSERT_TRUE(no.ok()) << no.status().ToString();
  EXPECT_TRUE(Has(TypesOf(*cp_, ids[0]), "TemporaryQuotaRejected"));
  EXPECT_EQ(cp_->DecideTemporaryQuota(ids[0], true, "tia", nullptr).status().code(), StatusCode::kFailedPrecondition);
  auto yes = cp_->DecideTemporaryQuota(ids[1], true, "tia", nullptr);
  ASSERT_TRUE(yes.ok()) << yes.status().ToString();
  cp_->WaitForCycle();
  EXPECT_TRUE(Has(TypesOf(*cp_, ids[1]), "TemporaryQuotaApproved"));
  EXPECT_EQ(State(ids[1]), "Admitted");
  EXPECT_EQ(State(ids[0]), "Pending");  // rejected: waits on the queue's own quota
  EXPECT_EQ(WorkloadViewJson(*cp_->GetWorkload(ids[1]))["quotaDecision"]["by"], "tia");
  // A workload that asks no temporary quota has nothing to decide.
  EXPECT_EQ(cp_->DecideTemporaryQuota(full, true, "tia", nullptr).status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(ControlPlaneTest, ClustersAreLedgerObjectsAndQueuesLimitOrPreferThem) {
  ASSERT_TRUE(cp_->Apply("kind: Cluster\nname: east\nlocation: cn-hangzhou\nnetworkDomain: idc-a\n"
                         "labels: {data.abacus.io/imagenet: \"true\"}\n---\n"
                         "kind: Queue\nname: east-train\ntenant: acme\nclusters: [east]\n"
                         "quotas:\n  - {resource: gpu/nvidia/A100-80G, nominal: 16}\n  - {resource: cpu, nominal: 64}\n"
                         "  - {resource: memory, nominal: 512Gi}\n",
                         false, "clusters.yaml", nullptr, {}, false, nullptr)
                  .ok());
  // Agents register into clusters; "west" is not declared: it is listed from its nodes.
  json east = AgentNode("gpu-east", 4), west = AgentNode("gpu-west", 8);
  east["cluster"] = "east";
  west["cluster"] = "west";
  ASSERT_TRUE(cp_->RegisterAgent(east, nullptr).ok());
  ASSERT_TRUE(cp_->RegisterAgent(west, nullptr).ok());
  json clusters = ClustersJson(cp_->ListClusters())["items"];
  ASSERT_EQ(clusters.size(), 2u) << clusters.dump();
  EXPECT_EQ(clusters[0]["name"], "east");
  EXPECT_EQ(clusters[0]["location"], "cn-hangzhou");
  EXPECT_EQ(clusters[0]["nodes"], 1);
  EXPECT_EQ(clusters[0]["devices"]["gpu/nvidia/A100-80G"]["total"], 4);
  EXPECT_EQ(clusters[1]["name"], "west");
  EXPECT_EQ(clusters[1]["declared"], false);
  // The queue limited to east places there, though west has more room.
  std::string job = Job("limited", 2);
  job.replace(job.find("queue: train"), 12, "queue: east-train");
  auto r = cp_->Submit(job, false, "limited.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string limited = r->answer.submitted[0].id;
  // A job reading imagenet goes where the data is; a plain one where the room is.
  std::string data = Job("data", 1);
  data.replace(data.find("queue: train"), 12, "labels: {data.abacus.io/imagenet: \"true\"}\nqueue: train");
  r = cp_->Submit(data, false, "data.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string reads = r->answer.submitted[0].id;
  std::string plain = Submit("plain", 1);
  cp_->WaitForCycle();
  auto node_of = [&](const std::string& id) {
    json w = WorkloadViewJson(*cp_->GetWorkload(id));
    if (w["placements"].empty()) return "not placed: " + (*ExplainJson(cp_->Explain(id))).dump();
    return w["placements"][0].value("node", "");
  };
  EXPECT_EQ(node_of(limited), "gpu-east");
  EXPECT_EQ(node_of(reads), "gpu-east");
  EXPECT_EQ(node_of(plain), "gpu-west");
  // (A gang that fits only across clusters waits: SchedulerTest.AGangNeverSpansClusters.)
}

TEST_F(ControlPlaneTest, AssignmentsCarryTheDataMounts) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  auto r = cp_->Submit(GangJob("mounted", "  mounts: [{path: /data/corpus, mountPath: /corpus}]\n"), false, "m.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  json t = TaskOf(AssignmentOf(*cp_, "gpu-a"), id + ".0.0.1");
  ASSERT_FALSE(t.is_null());
  EXPECT_EQ(t["mounts"], json::parse(R"([{"path":"/data/corpus","mountPath":"/corpus","readOnly":true}])"));
}

}  // namespace
}  // namespace abacus::server

namespace abacus::server {
namespace {

// The tasks the agent of `node` is told to run, by task id.
std::map<std::string, json> Assigned(ControlPlane& cp, const std::string& node) {
  std::map<std::string, json> out;
  auto answer = cp.WaitAssignments(node, 0, 0ms);
  if (!answer.ok()) return out;
  const json assignment = AssignmentJson(*answer, node, nullptr);
  for (const auto& t : assignment["tasks"]) {
    if (t.value("action", "") == "run") out[t["taskId"].get<std::string>()] = t;
  }
  return out;
}

std::vector<std::string> EventTypes(ControlPlane& cp, const std::string& id) {
  std::vector<std::string> types;
  auto events = WorkloadEventsJson(cp.Events(id));
  if (!events.ok()) return types;
  for (const auto& e : (*events)["items"]) types.push_back(e["type"]);
  return types;
}

bool HasEvent(ControlPlane& cp, const std::string& id, const std::string& type) {
  auto types = EventTypes(cp, id);
  return std::find(types.begin(), types.end(), type) != types.end();
}

TEST_F(ControlPlaneTest, BatchArrayRunsIndexesInSlotsReusesThemAndReleasesTheLast) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  auto r = cp_->Submit(R"(kind: BatchJob
name: sweep
project: acme/ml
queue: train
spec:
  command: ["true"]
  tasks: 3
  parallelism: 2
  taskGroups:
    - name: main
      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: 1}}
)",
                       false, "sweep.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  // Two slots, array tasks 0 and 1, at admission.
  auto tasks = Assigned(*cp_, "gpu-a");
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[id + ".0.0.1"]["env"]["ABACUS_TASK_INDEX"], "0");
  EXPECT_EQ(tasks[id + ".0.1.1"]["env"]["ABACUS_TASK_INDEX"], "1");
  EXPECT_EQ(tasks[id + ".0.1.1"]["env"]["ABACUS_TASK_COUNT"], "3");
  // Index 0 is done: its slot runs index 2 as the slot's next run (a new task id).
  Report("gpu-a", id + ".0.0.1", {{"phase", "Exited"}, {"exitCode", 0}});
  tasks = Assigned(*cp_, "gpu-a");
  ASSERT_TRUE(tasks.count(id + ".0.0.1.1")) << ::testing::PrintToString(tasks);
  EXPECT_EQ(tasks[id + ".0.0.1.1"]["env"]["ABACUS_TASK_INDEX"], "2");
  json w = WorkloadViewJson(*cp_->GetWorkload(id));
  EXPECT_EQ(w["status"]["progress"]["done"], 1) << w.dump();
  EXPECT_EQ(w["status"]["progress"]["running"], 2) << w.dump();
  // Index 1 is done and nothing is left to start: its slot is released (its GPU freed).
  Report("gpu-a", id + ".0.1.1", {{"phase", "Exited"}, {"exitCode", 0}});
  w = WorkloadViewJson(*cp_->GetWorkload(id));
  EXPECT_EQ(w["placements"].size(), 1u) << w.dump();
  EXPECT_TRUE(HasEvent(*cp_, id, "SlotsReleased"));
  Report("gpu-a", id + ".0.0.1.1", {{"phase", "Exited"}, {"exitCode", 0}});
  EXPECT_EQ(State(id), "Succeeded");
  EXPECT_EQ(WorkloadViewJson(*cp_->GetWorkload(id))["status"]["progress"]["done"], 3);
}

TEST_F(ControlPlaneTest, BatchSlotLostWithItsNodeIsPlacedAgainElsewhere) {
  cp_.reset();
  Open(30s);
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 1), nullptr).ok());
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-b", 1), nullptr).ok());
  auto r = cp_->Submit(R"(kind: BatchJob
name: one
project: acme/ml
queue: train
spec:
  command: ["true"]
  tasks: 1
  parallelism: 1
  taskGroups:
    - name: main
      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: 1}}
)",
                       false, "one.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok());
  std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  std::string first = WorkloadViewJson(*cp_->GetWorkload(id))["placements"][0]["node"];
  std::string other = first == "gpu-a" ? "gpu-b" : "gpu-a";
  Report(first, id + ".0.0.1", {{"phase", "Running"}});
  // Only the other node keeps its heartbeat; the first one is lost.
  clock_.Advance(20s);
  ASSERT_TRUE(cp_->AgentHeartbeat(other, json{{"devices", json::array()}}).ok());
  clock_.Advance(11s);
  for (int i = 0; i < 4; ++i) cp_->WaitForCycle();
  // The lost node's slot moves once its agent has fenced it (BatchJob: 10 s after NotReady).
  ASSERT_TRUE(cp_->AgentHeartbeat(other, json{{"devices", json::array()}}).ok());
  clock_.Advance(11s);
  for (int i = 0; i < 4; ++i) cp_->WaitForCycle();
  json w = WorkloadViewJson(*cp_->GetWorkload(id));
  ASSERT_EQ(w["placements"].size(), 1u) << w.dump();
  EXPECT_EQ(w["placements"][0]["node"], other) << w.dump();
  EXPECT_EQ(w["requeues"], 0);  // the array went on; no whole-workload requeue
  EXPECT_TRUE(HasEvent(*cp_, id, "SlotPlaced")) << ::testing::PrintToString(EventTypes(*cp_, id));
  auto tasks = Assigned(*cp_, other);
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks.begin()->second["env"]["ABACUS_TASK_INDEX"], "0");
}

constexpr char kService[] = R"(kind: InferenceService
name: chat
project: acme/ml
queue: train
labels: {version: "1.0"}
spec:
  command: ["serve"]
  replicas: 1
  minReplicas: 1
  maxReplicas: 2
  autoscaling: {metric: rps, target: 10, stabilizationSeconds: 0, cooldownSeconds: 0}
  taskGroups:
    - name: server
      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: 1}}
)";

TEST_F(ControlPlaneTest, InferenceScalesUpOnMetricsInPlaceAndBackDown) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  auto r = cp_->Submit(kService, false, "chat.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok());
  std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  auto tasks = Assigned(*cp_, "gpu-a");
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[id + ".0.0.1"]["env"]["ABACUS_VERSION"], "1.0");
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  // Bad metric reports are refused with the field named.
  EXPECT_EQ(cp_->ReportMetrics(id, json{{"metric", "qps"}, {"value", 1}, {"replica", 0}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(cp_->ReportMetrics(id, json{{"value", 1}}).status().code(), StatusCode::kInvalidArgument);
  // 25 rps on one replica with a target of 10: 2 replicas (the maximum), the new one placed in
  // place — the first keeps running, nothing is requeued.
  ASSERT_TRUE(cp_->ReportMetrics(id, json{{"metric", "rps"}, {"value", 25}, {"replica", 0}}).ok());
  clock_.Advance(1s);
  for (int i = 0; i < 3; ++i) cp_->WaitForCycle();
  json w = WorkloadViewJson(*cp_->GetWorkload(id));
  ASSERT_EQ(w["placements"].size(), 2u) << w.dump();
  EXPECT_EQ(w["state"], "Running");
  EXPECT_EQ(w["requeues"], 0);
  EXPECT_TRUE(HasEvent(*cp_, id, "Scaled"));
  EXPECT_TRUE(HasEvent(*cp_, id, "ReplicaPlaced"));
  tasks = Assigned(*cp_, "gpu-a");
  ASSERT_TRUE(tasks.count(id + ".0.1.1")) << ::testing::PrintToString(tasks);
  EXPECT_EQ(tasks[id + ".0.1.1"]["env"]["ABACUS_VERSION"], "1.0");
  Report("gpu-a", id + ".0.1.1", {{"phase", "Running"}});
  // Traffic drops to 3 rps per replica: back to 1; replica 1 is stopped, then removed.
  clock_.Advance(1s);
  ASSERT_TRUE(cp_->ReportMetrics(id, json{{"samples", {{{"value", 3}, {"replica", 0}}, {{"value", 3}, {"replica", 1}}}}}).ok());
  clock_.Advance(1s);
  for (int i = 0; i < 3; ++i) cp_->WaitForCycle();
  json stop = TaskOf(AssignmentOf(*cp_, "gpu-a"), id + ".0.1.1");
  ASSERT_FALSE(stop.is_null());
  EXPECT_EQ(stop["action"], "stop");
  Report("gpu-a", id + ".0.1.1", {{"phase", "Exited"}, {"signal", 15}, {"stopped", true}});
  w = WorkloadViewJson(*cp_->GetWorkload(id));
  EXPECT_EQ(w["placements"].size(), 1u) << w.dump();
  EXPECT_TRUE(HasEvent(*cp_, id, "ReplicasRemoved"));
  EXPECT_EQ(State(id), "Running");
}

TEST_F(ControlPlaneTest, ExitedReplicaRestartsInPlaceAsANewRun) {
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
  auto r = cp_->Submit(kService, false, "chat.yaml", nullptr, {}, false, nullptr);
  ASSERT_TRUE(r.ok());
  std::string id = r->answer.submitted[0].id;
  cp_->WaitForCycle();
  Report("gpu-a", id + ".0.0.1", {{"phase", "Running"}});
  Report("gpu-a", id + ".0.0.1", {{"phase", "Exited"}, {"exitCode", 1}, {"message", "exited 1"}});
  clock_.Advance(1s);
  for (int i = 0; i < 2; ++i) cp_->WaitForCycle();
  EXPECT_TRUE(HasEvent(*cp_, id, "ReplicaExited")) << ::testing::PrintToString(EventTypes(*cp_, id));
  auto tasks = Assigned(*cp_, "gpu-a");
  ASSERT_TRUE(tasks.count(id + ".0.0.1.1")) << ::testing::PrintToString(tasks);
  EXPECT_EQ(tasks[id + ".0.0.1.1"]["run"], 1);
  EXPECT_EQ(State(id), "Running");
  EXPECT_EQ(WorkloadViewJson(*cp_->GetWorkload(id))["requeues"], 0);
}

// Issue 20 point 4: the join token alone cannot take over a registered agent node; its
// credential can; an admin's reset lets another machine register under the name.
TEST_F(ControlPlaneTest, ARegisteredNodeRegistersAgainOnlyWithItsCredential) {
  auto first = cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr);
  ASSERT_TRUE(first.ok());
  auto stolen = cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr);
  EXPECT_EQ(stolen.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(stolen.status().message().find("abacus node reset gpu-a"), std::string::npos) << stolen.status().message();
  json wrong = AgentNode("gpu-a", 2);
  wrong["credential"] = "not-it";
  EXPECT_EQ(cp_->RegisterAgent(wrong, nullptr).status().code(), StatusCode::kFailedPrecondition);
  json own = AgentNode("gpu-a", 2);
  own["credential"] = first->node_token;
  auto again = cp_->RegisterAgent(own, nullptr);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(NodeJson(*cp_->GetNode("gpu-a")).contains("credential"));
  EXPECT_EQ(cp_->ResetNode("nowhere", nullptr).status().code(), StatusCode::kNotFound);
  ASSERT_TRUE(cp_->ResetNode("gpu-a", nullptr).ok());
  EXPECT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 2), nullptr).ok());
}

}  // namespace
}  // namespace abacus::server

namespace abacus::server {
namespace {

// Issue 20.12: a parked gang's node holds persist across the incremental cycles that later
// submissions run (before, those cycles left the gang out, so nothing was held: a 1-GPU job of
// equal priority took a held node while explain still said the nodes were held).
TEST_F(ControlPlaneTest, AParkedGangKeepsItsNodeHoldsAcrossIncrementalCycles) {
  ASSERT_TRUE(cp_->Apply(testing_org::AcmeOrg("wide", 16), false, "wide.yaml", nullptr, {}, false, nullptr).ok());
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-a", 4), nullptr).ok());
  ASSERT_TRUE(cp_->RegisterAgent(AgentNode("gpu-b", 4), nullptr).ok());
  cp_->WaitForCycle();
  auto submit = [&](const std::string& name, int replicas, int gpus) {
    std::string yaml = "kind: TrainingJob\nname: " + name +
                       "\nproject: acme/ml\nqueue: wide\nspec:\n  command: [\"true\"]\n  taskGroups:\n    - name: w\n"
                       "      replicas: " + std::to_string(replicas) +
                       "\n      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: " +
                       std::to_string(gpus) + "}}\n";
    auto r = cp_->Submit(yaml, false, name + ".yaml", nullptr, {}, false, nullptr);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    cp_->WaitForCycle();
    return r.ok() ? r->answer.submitted[0].id : "";
  };
  std::string filler = submit("filler", 1, 1);
  ASSERT_EQ(State(filler), "Admitted");
  const std::string filler_node = WorkloadViewJson(*cp_->GetWorkload(filler))["placements"][0]["node"];
  // 2 × 4 GPUs: 7 of 8 free, so the gang waits and holds both nodes.
  std::string gang = submit("gang", 2, 4);
  ASSERT_EQ(State(gang), "Pending");
  json reason = WorkloadViewJson(*cp_->GetWorkload(gang))["pendingReason"];
  EXPECT_NE(reason.value("message", "").find("holding 2 node(s)"), std::string::npos) << reason.dump();
  // A later 1-GPU job of equal priority, in an incremental cycle: the held nodes stay held.
  std::string small = submit("small", 1, 1);
  EXPECT_EQ(State(small), "Pending") << WorkloadViewJson(*cp_->GetWorkload(small)).dump();
  EXPECT_EQ(WorkloadViewJson(*cp_->GetWorkload(small))["pendingReason"].value("code", ""), "ReservedForGang")
      << WorkloadViewJson(*cp_->GetWorkload(small)).dump();
  json gang_reason = WorkloadViewJson(*cp_->GetWorkload(gang))["pendingReason"];
  EXPECT_NE(gang_reason.value("message", "").find("holding 2 node(s)"), std::string::npos);
  // The filler ends: the gang starts on what it held.
  Report(filler_node, filler + ".0.0.1", {{"phase", "Exited"}, {"exitCode", 0}});
  cp_->WaitForCycle();
  EXPECT_EQ(State(gang), "Admitted");
  EXPECT_EQ(State(small), "Pending");
}

}  // namespace
}  // namespace abacus::server
