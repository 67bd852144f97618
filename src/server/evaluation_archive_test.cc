// Evaluation results on a ControlPlane with a manual clock, without HTTP: the agent's Exited
// report carries the results file, CollectResults archives it with the run's resource use in the
// same commit (kind "evaluation"), or records why not (ResultsInvalid, ResultsMissing) while the
// evaluation still succeeds; GET /api/v1/evaluations' listing and comparison.
#include "server/agent_api.h"
#include "server/evaluation_archive.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "common/ids.h"
#include "server/control_plane.h"
#include "server/control_plane_fixture.h"
#include "server/evaluations_api.h"
#include "server/server_test_util.h"
#include "server/read_views_json.h"

namespace abacus::server {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

const std::string kOrg = testing_org::AcmeOrg("train", 2);

std::string Evaluation(const std::string& name, const std::string& version, const std::string& extra = "") {
  return "kind: Evaluation\nname: " + name +
         "\nproject: acme/ml\nqueue: train\nspec:\n  command: [\"true\"]\n  taskGroups:\n    - name: eval\n"
         "      resources: {cpu: 2, memory: 1Gi, accelerators: {flavor: gpu/nvidia/A100-80G, count: 1}}\n"
         "  model: llama\n  modelVersion: \"" +
         version + "\"\n  dataset: mmlu\n  resultsPath: /results/llama/mmlu.json\n" + extra;
}

class EvaluationArchiveTest : public testing_cp::ControlPlaneFixture {
 protected:
  void SetUp() override {
    ControlPlaneFixture::SetUp();
    Open();
    ApplyOrg(kOrg);
    ASSERT_TRUE(cp_->RegisterAgent(testing_cp::A100Node("gpu-a", 2), nullptr).ok());
  }
  std::string Submit(const std::string& yaml) { return SubmitYaml(yaml, "eval.yaml"); }
  void Report(const std::string& task, json fields) { ControlPlaneFixture::Report("gpu-a", task, std::move(fields)); }
  // Runs the evaluation's only task for an hour; it exits 0 with `exited` (results fields).
  void RunForAnHour(const std::string& id, json exited) {
    Report(id + ".0.0.1", {{"phase", "Running"}});
    clock_.Advance(1h);
    exited["phase"] = "Exited";
    exited["exitCode"] = 0;
    Report(id + ".0.0.1", exited);
  }
  json LastEvent(const std::string& id, const std::string& type) {
    json found;
    json all = *WorkloadEventsJson(cp_->Events(id));
    for (const auto& e : all["items"]) {
      if (e["type"] == type) found = e;
    }
    return found;
  }
  std::optional<json> Archived(const std::string& id) {
    auto rec = cp_->store().Get(kEvaluationKind, id);
    EXPECT_TRUE(rec.ok());
    if (!rec.ok() || !rec->has_value()) return std::nullopt;
    return json::parse((*rec)->json);
  }
};

TEST_F(EvaluationArchiveTest, ValidResultsAreArchivedWithTheResourcesTheRunUsed) {
  std::string id = Submit(Evaluation("eval-a", "1.0"));
  // The agent is told which results file to read first: resultsPath's file name.
  auto assignment = cp_->WaitAssignments("gpu-a", 0, 0ms);
  ASSERT_TRUE(assignment.ok());
  const json tasks = AssignmentJson(*assignment, "gpu-a", nullptr)["tasks"];
  ASSERT_EQ(tasks.size(), 1u);
  EXPECT_EQ(tasks[0].value("resultsFile", ""), "mmlu.json");

  RunForAnHour(id, {{"results", R"({"metrics": {"accuracy": 0.81, "mmlu": {"stem": 0.7}}})"}});
  EXPECT_EQ(State(id), "Succeeded");
  std::optional<json> doc = Archived(id);
  ASSERT_TRUE(doc.has_value());
  auto result = control::EvaluationResultFromJson(*doc);
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->workload_id, id);
  EXPECT_EQ(result->model, "llama");
  EXPECT_EQ(result->version, "1.0");
  EXPECT_EQ(result->dataset, "mmlu");
  EXPECT_EQ(result->metrics, (std::map<std::string, double>{{"accuracy", 0.81}, {"mmlu.stem", 0.7}}));
  EXPECT_EQ(result->usage.flavor, "gpu/nvidia/A100-80G");
  EXPECT_DOUBLE_EQ(result->usage.device_seconds, 3600);    // one GPU for an hour
  EXPECT_DOUBLE_EQ(result->usage.cpu_core_seconds, 7200);  // two cores
  EXPECT_DOUBLE_EQ(result->usage.wall_seconds, 3600);
  EXPECT_EQ(result->finished_at, clock_.Now());
  EXPECT_EQ((*doc)["project"], "acme/ml");
  EXPECT_EQ((*doc)["workload"], "eval-a");
  json ev = LastEvent(id, "ResultsArchived");
  ASSERT_FALSE(ev.is_null());
  EXPECT_EQ(ev["details"]["metrics"], 2);
  EXPECT_EQ(ev["details"]["task"], "eval.0");
  // The results stay on the placement, persisted; the workload's view shows only their size.
  json view = WorkloadViewJson(*cp_->GetWorkload(id));
  EXPECT_FALSE(view["placements"][0].contains("results"));
  EXPECT_EQ(view["placements"][0]["resultsBytes"], 54);
  cp_.reset();
  Open();
  std::string kept = cp_->Read([&](const Ledger& l) { return *l.FindWorkload(id)->placements[0].results; });
  EXPECT_EQ(kept, R"({"metrics": {"accuracy": 0.81, "mmlu": {"stem": 0.7}}})");
}

TEST_F(EvaluationArchiveTest, InvalidResultsAreAnEventAndTheEvaluationStillSucceeds) {
  std::string id = Submit(Evaluation("eval-bad", "1.0"));
  RunForAnHour(id, {{"results", "accuracy: 0.81"}});
  EXPECT_EQ(State(id), "Succeeded");
  EXPECT_FALSE(Archived(id).has_value());
  json ev = LastEvent(id, "ResultsInvalid");
  ASSERT_FALSE(ev.is_null());
  EXPECT_EQ(ev["details"]["message"], "results of task eval.0: results are not valid JSON");
  EXPECT_EQ(ev["details"]["reason"], "ResultsInvalid");
  EXPECT_TRUE(LastEvent(id, "ResultsArchived").is_null());

  // A file the agent refused (too large) is invalid with the agent's reason.
  std::string big = Submit(Evaluation("eval-big", "1.1"));
  RunForAnHour(big, {{"resultsError", "results.json is 300000 bytes, more than the 262144 allowed"}});
  EXPECT_EQ(State(big), "Succeeded");
  EXPECT_FALSE(Archived(big).has_value());
  EXPECT_EQ(LastEvent(big, "ResultsInvalid")["details"]["message"],
            "results of task eval.0: results.json is 300000 bytes, more than the 262144 allowed");
  // The server does not keep more than the cap either, whatever an agent sends.
  std::string huge = Submit(Evaluation("eval-huge", "1.2"));
  RunForAnHour(huge, {{"results", "{\"a\": 1," + std::string(kMaxResultsBytes, ' ') + "}"}});
  EXPECT_FALSE(Archived(huge).has_value());
  std::string message = LastEvent(huge, "ResultsInvalid")["details"].value("message", "");
  EXPECT_NE(message.find("more than the 262144 allowed"), std::string::npos) << message;
}

TEST_F(EvaluationArchiveTest, NoResultsFileIsResultsMissing) {
  std::string id = Submit(Evaluation("eval-none", "1.0"));
  RunForAnHour(id, json::object());
  EXPECT_EQ(State(id), "Succeeded");
  EXPECT_FALSE(Archived(id).has_value());
  json ev = LastEvent(id, "ResultsMissing");
  ASSERT_FALSE(ev.is_null());
  EXPECT_EQ(ev["details"]["message"],
            "no results: no task of the evaluation wrote $ABACUS_RESULTS_DIR/mmlu.json or "
            "$ABACUS_RESULTS_DIR/results.json");
  EXPECT_EQ(ev["details"]["reason"], "ResultsMissing");
}

TEST_F(EvaluationArchiveTest, ArchiveFalseChecksTheResultsButKeepsNone) {
  std::string id = Submit(Evaluation("eval-nokeep", "1.0", "  archive: false\n"));
  RunForAnHour(id, {{"results", R"({"accuracy": 0.5})"}});
  EXPECT_EQ(State(id), "Succeeded");
  EXPECT_FALSE(Archived(id).has_value());
  json ev = LastEvent(id, "ResultsCollected");
  ASSERT_FALSE(ev.is_null());
  EXPECT_EQ(ev["details"]["archived"], false);
}

TEST_F(EvaluationArchiveTest, ListingFiltersByModelAndCallerAndComparesVersions) {
  std::string a = Submit(Evaluation("eval-10", "1.0"));
  RunForAnHour(a, {{"results", R"({"metrics": {"accuracy": 0.81}})"}});
  std::string b = Submit(Evaluation("eval-11", "1.1", "  baselineVersion: \"1.0\"\n"));
  RunForAnHour(b, {{"results", R"({"metrics": {"accuracy": 0.84}})"}});
  std::string qwen = Evaluation("other", "2.0");
  qwen.replace(qwen.find("model: llama"), 12, "model: qwen");
  std::string other = Submit(qwen);
  RunForAnHour(other, {{"results", R"({"f1": 0.5})"}});

  auto all = ListEvaluations(cp_->store(), {});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ((*all)["items"].size(), 3u);
  EXPECT_EQ((*all)["items"][0]["workloadId"], a);  // oldest finished first
  EXPECT_FALSE(all->contains("comparison"));

  auto llama = ListEvaluations(cp_->store(), {"llama", "", nullptr});
  ASSERT_TRUE(llama.ok());
  ASSERT_EQ((*llama)["items"].size(), 2u);
  const json& cmp = (*llama)["comparison"];
  EXPECT_EQ(cmp["versions"], json({"1.0", "1.1"}));
  EXPECT_EQ(cmp["baseline"], "1.0");  // the newest result's baselineVersion
  ASSERT_EQ(cmp["rows"].size(), 1u);
  EXPECT_EQ(cmp["rows"][0]["metric"], "accuracy");
  EXPECT_TRUE(cmp["rows"][0]["deltas"][0] == 0.0);
  EXPECT_NEAR(cmp["rows"][0]["deltas"][1].get<double>(), 0.03, 1e-9);
  // An explicit baseline.
  auto against = ListEvaluations(cp_->store(), {"llama", "1.1", nullptr});
  ASSERT_TRUE(against.ok());
  EXPECT_NEAR((*against)["comparison"]["rows"][0]["deltas"][0].get<double>(), -0.03, 1e-9);
  // A baseline no result has: refused naming the versions there are (the probe of 2026-12-07:
  // a header about deltas against 9.9 over a table without them, exit 0).
  auto nowhere = ListEvaluations(cp_->store(), {"llama", "9.9", nullptr});
  EXPECT_EQ(nowhere.status().code(), StatusCode::kNotFound);
  EXPECT_NE(nowhere.status().message().find("no evaluation results of version 9.9"), std::string::npos)
      << nowhere.status().message();
  EXPECT_NE(nowhere.status().message().find("its versions: 1.0, 1.1"), std::string::npos);
  // The caller's view: results of workloads it may not see are left out.
  auto hidden = ListEvaluations(cp_->store(), {"llama", "", [](const Workload& w) {
                                                 return w.project == "acme/ml" && w.name == "eval-11";
                                               }});
  ASSERT_TRUE(hidden.ok());
  ASSERT_EQ((*hidden)["items"].size(), 1u);
  EXPECT_EQ((*hidden)["items"][0]["workloadId"], b);
  EXPECT_EQ((*hidden)["comparison"]["versions"], json({"1.1"}));
}

TEST(EvaluationArchiveUnitTest, ResultsFileIsTheLastPathComponent) {
  EXPECT_EQ(ResultsFileOf("/results/llama/1.4/mmlu"), "mmlu");
  EXPECT_EQ(ResultsFileOf("scores.json"), "scores.json");
  EXPECT_EQ(ResultsFileOf("/results/dir/"), "dir");
  EXPECT_EQ(ResultsFileOf("/"), "");
  EXPECT_EQ(ResultsFileOf("a/.."), "");
}

TEST(EvaluationArchiveUnitTest, UsageCountsEachTaskFromStartToEnd) {
  WorkloadRecord w;
  w.group_flavors = {"cpu", "gpu/nvidia/T4"};
  Time t0 = FromMicros(1'767'225'600'000'000);
  PlacementRecord cpu;
  cpu.group = 0;
  cpu.cpu_milli = 4000;
  cpu.started_at = t0;
  cpu.finished_at = t0 + 10min;
  PlacementRecord gpu;
  gpu.group = 1;
  gpu.cpu_milli = 1000;
  gpu.devices = {{0, 1000, 0}, {1, 500, 0}};
  gpu.started_at = t0 + 5min;  // still running at `now`
  PlacementRecord never;
  never.group = 1;
  never.devices = {{2, 1000, 0}};
  w.placements = {cpu, gpu, never};
  control::ResourceUsage u = UsageOf(w, t0 + 25min);
  EXPECT_EQ(u.flavor, "gpu/nvidia/T4");
  EXPECT_DOUBLE_EQ(u.device_seconds, 1.5 * 20 * 60);
  EXPECT_DOUBLE_EQ(u.cpu_core_seconds, 4 * 10 * 60 + 1 * 20 * 60);
  EXPECT_DOUBLE_EQ(u.wall_seconds, 25 * 60);
}

}  // namespace
}  // namespace abacus::server
