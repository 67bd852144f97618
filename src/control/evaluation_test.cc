#include "control/evaluation.h"

#include <gtest/gtest.h>

#include "control/comparison.h"
#include "control/control_test_util.h"

namespace abacus::control {
namespace {

using namespace testing;  // NOLINT

Workload Eval() {
  EvaluationSpec s;
  s.model = "llama-3-8b";
  s.model_version = "1.4";
  s.dataset = "mmlu";
  s.results_path = "/results/llama/1.4/mmlu";
  s.baseline_version = "1.3";
  return MakeSpec(s);
}

TEST(EvaluationTest, SuccessCollectsTheResultsThenSucceeds) {
  Workload spec = Eval();
  WorkloadView w = View(spec, WorkloadState::kRunning, {Exited(0, 0, T(600))});
  Decisions ds = ReconcileEvaluation(w, T(600));
  EXPECT_EQ(Types(ds), "CollectResults,SetState,Event:Succeeded");
  EXPECT_EQ(std::get<CollectResults>(ds[0]).path, "/results/llama/1.4/mmlu");
  EXPECT_TRUE(std::get<CollectResults>(ds[0]).archive);
}

TEST(EvaluationTest, AFailureFailsAtOnceButANodeLossRequeues) {
  Workload spec = Eval();
  WorkloadView w = View(spec, WorkloadState::kRunning, {Exited(0, 2, T(60))});
  Decisions ds = ReconcileEvaluation(w, T(60));
  ASSERT_NE(Find<SetState>(ds), nullptr);
  EXPECT_EQ(Find<SetState>(ds)->to, WorkloadState::kFailed);
  EXPECT_EQ(Find<CollectResults>(ds), nullptr);
  w.tasks = {Lost(0, LostReason::kNodeLost, T(60))};
  ASSERT_NE(Find<Requeue>(ReconcileEvaluation(w, T(60))), nullptr);
}

TEST(EvaluationTest, ParsesFlatNestedAndMetricsObjectResults) {
  auto flat = ParseResultMetrics(R"({"accuracy": 0.71, "loss": 1, "note": "ok", "passed": true, "x": null})");
  ASSERT_TRUE(flat.ok()) << flat.status().ToString();
  EXPECT_EQ(*flat, (std::map<std::string, double>{{"accuracy", 0.71}, {"loss", 1}}));
  auto nested = ParseResultMetrics(R"({"mmlu": {"acc": 0.7, "per_subject": [0.5, 0.9]}})");
  ASSERT_TRUE(nested.ok());
  EXPECT_EQ(*nested, (std::map<std::string, double>{{"mmlu.acc", 0.7}, {"mmlu.per_subject.0", 0.5},
                                                     {"mmlu.per_subject.1", 0.9}}));
  auto wrapped = ParseResultMetrics(R"({"model": "m", "seed": 7, "metrics": {"f1": 0.8}})");
  ASSERT_TRUE(wrapped.ok());
  EXPECT_EQ(*wrapped, (std::map<std::string, double>{{"f1", 0.8}}));
}

TEST(EvaluationTest, RejectsResultsThatAreNotMetrics) {
  EXPECT_EQ(ParseResultMetrics("{not json").status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(ParseResultMetrics("[1, 2]").ok());
  EXPECT_FALSE(ParseResultMetrics(R"({"note": "nothing numeric"})").ok());
  EXPECT_FALSE(ParseResultMetrics(R"({"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":1}}}}}}}}})").ok());
}

TEST(EvaluationTest, BuildsTheArchivedResultFromTheSpec) {
  Workload spec = Eval();
  WorkloadView w = View(spec, WorkloadState::kSucceeded);
  ResourceUsage usage{"gpu/nvidia/A100-80G", 3600, 28800, 3600};
  auto r = BuildEvaluationResult(w, R"({"accuracy": 0.71})", usage, T(700));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->model, "llama-3-8b");
  EXPECT_EQ(r->version, "1.4");
  EXPECT_EQ(r->dataset, "mmlu");
  EXPECT_EQ(r->workload_id, "wl-1");
  EXPECT_EQ(r->usage, usage);
  EXPECT_EQ(ResultsEvent(r).type, "ResultsArchived");
  auto bad = BuildEvaluationResult(w, "{}", usage, T(700));
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(ResultsEvent(bad).type, "ResultsInvalid");
  auto back = EvaluationResultFromJson(ToJson(*r));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, *r);
  EXPECT_FALSE(EvaluationResultFromJson({{"model", "m"}}).ok());
}

EvaluationResult Result(std::string version, std::string dataset, std::map<std::string, double> m, int64_t t,
                        std::string model = "llama") {
  EvaluationResult r;
  r.model = std::move(model);
  r.version = std::move(version);
  r.dataset = std::move(dataset);
  r.metrics = std::move(m);
  r.finished_at = T(t);
  return r;
}

TEST(ComparisonTest, VersionsSideBySideWithDeltasAgainstTheBaseline) {
  std::vector<EvaluationResult> rs = {
      Result("1.10", "mmlu", {{"acc", 0.75}}, 30),
      Result("1.3", "mmlu", {{"acc", 0.70}, {"f1", 0.6}}, 10),
      Result("1.4", "mmlu", {{"acc", 0.60}}, 20),
      Result("1.4", "mmlu", {{"acc", 0.72}}, 25),  // latest of 1.4 wins
      Result("2.0", "mmlu", {{"acc", 0.99}}, 40, "other-model"),
  };
  ComparisonTable t = CompareVersions(rs, "llama");
  EXPECT_EQ(t.versions, (std::vector<std::string>{"1.3", "1.4", "1.10"}));
  EXPECT_EQ(t.baseline, "1.3");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0].metric, "acc");
  EXPECT_DOUBLE_EQ(*t.rows[0].values[1], 0.72);
  EXPECT_NEAR(*t.rows[0].deltas[1], 0.02, 1e-9);
  EXPECT_NEAR(*t.rows[0].deltas[2], 0.05, 1e-9);
  EXPECT_EQ(t.rows[1].metric, "f1");
  EXPECT_FALSE(t.rows[1].values[1].has_value());
  EXPECT_FALSE(t.rows[1].deltas[2].has_value());
  auto cells = ToCells(t);
  EXPECT_EQ(cells[0], (std::vector<std::string>{"DATASET", "METRIC", "1.3 (baseline)", "1.4", "1.10"}));
  EXPECT_EQ(cells[1], (std::vector<std::string>{"mmlu", "acc", "0.7", "0.72 (+0.02)", "0.75 (+0.05)"}));
  EXPECT_EQ(cells[2][3], "-");
  EXPECT_TRUE(ToJson(t)["rows"][1]["values"][1].is_null());
}

TEST(ComparisonTest, AnExplicitBaselineAndOneWithoutResults) {
  std::vector<EvaluationResult> rs = {Result("1.3", "mmlu", {{"acc", 0.7}}, 10), Result("1.4", "mmlu", {{"acc", 0.8}}, 20)};
  ComparisonTable t = CompareVersions(rs, "llama", "1.4");
  EXPECT_NEAR(*t.rows[0].deltas[0], -0.1, 1e-9);
  ComparisonTable none = CompareVersions(rs, "llama", "0.9");
  EXPECT_FALSE(none.rows[0].deltas[0].has_value());
  EXPECT_TRUE(CompareVersions(rs, "absent").rows.empty());
}

// The CLI prints the server's table: its JSON reads back to the same cells.
TEST(ComparisonTest, JsonReadsBackForTheCli) {
  std::vector<EvaluationResult> rs = {Result("1.3", "mmlu", {{"acc", 0.7}, {"f1", 0.6}}, 10),
                                      Result("1.4", "mmlu", {{"acc", 0.8}}, 20)};
  ComparisonTable t = CompareVersions(rs, "llama");
  auto back = ComparisonTableFromJson(ToJson(t));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->model, "llama");
  EXPECT_EQ(back->baseline, "1.3");
  EXPECT_EQ(back->versions, t.versions);
  ASSERT_EQ(back->rows.size(), 2u);
  EXPECT_FALSE(back->rows[1].values[1].has_value());
  EXPECT_EQ(ToCells(*back), ToCells(t));
  nlohmann::json bad = ToJson(t);
  bad["rows"][0]["values"] = {0.7};  // one cell for two versions
  EXPECT_EQ(ComparisonTableFromJson(bad).status().code(), StatusCode::kInvalidArgument);
  bad = ToJson(t);
  bad["rows"][0]["deltas"][1] = "x";
  EXPECT_FALSE(ComparisonTableFromJson(bad).ok());
  EXPECT_FALSE(ComparisonTableFromJson(nlohmann::json::array()).ok());
}

}  // namespace
}  // namespace abacus::control
