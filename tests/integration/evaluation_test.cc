// Evaluation results end to end with real processes: a server and an agent with fake GPUs run two
// Evaluation workloads of one model (versions 1.0 and 1.1) whose command writes its metrics to
// $ABACUS_RESULTS_DIR/results.json; the agent uploads them with the Exited report, the server
// archives them with the resources used, and GET /api/v1/evaluations and `abacus get
// evaluations` list them and compare the versions side by side. A member of another tenant sees
// none of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;

// An Evaluation of llama `version` whose task writes {"metrics": {"accuracy": ACCURACY}}. Its
// resultsPath names no file the task writes: the agent falls back to results.json.
std::string Evaluation(const std::string& version, const std::string& accuracy) {
  return "kind: Evaluation\nname: llama-" + version +
         "\nproject: acme/ml\nqueue: train\nspec:\n"
         "  command: [\"sh\", \"-c\", \"printf '{\\\"metrics\\\": {\\\"accuracy\\\": " +
         accuracy +
         "}}' > \\\"$ABACUS_RESULTS_DIR/results.json\\\"\"]\n"
         "  taskGroups:\n    - name: eval\n      resources:\n        cpu: 1\n        memory: 1Gi\n"
         "        accelerators: {flavor: gpu/nvidia/A100-80G, count: 1}\n"
         "  model: llama\n  modelVersion: \"" +
         version + "\"\n  dataset: mmlu\n  resultsPath: /results/llama/" + version + "/mmlu\n";
}

class EvaluationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(dir_.path());
    auto admin = server_->Client();
    ASSERT_EQ(admin.Post("/api/v1/apply", kAcmeOrg, "application/yaml").status, 200);
    ASSERT_EQ(admin.Post("/api/v1/apply", kBetaTenant, "application/yaml").status, 200);
    agent_ = std::make_unique<AgentProcess>(*server_, "gpu-a", "gpu:nvidia:A100-80G:2:80Gi@cuda=12.4");
  }
  std::string Submit(const std::string& yaml) {
    auto r = server_->Client().Post("/api/v1/workloads", yaml, "application/yaml");
    EXPECT_EQ(r.status, 201) << r.text;
    return r.ok() ? r.body["items"][0]["id"].get<std::string>() : "";
  }
  json Get(const std::string& id) { return server_->Client().Get("/api/v1/workloads/" + id).body; }
  std::vector<std::string> EventTypes(const std::string& id) {
    std::vector<std::string> out;
    auto r = server_->Client().Get("/api/v1/workloads/" + id + "/events");
    for (const auto& e : r.body["items"]) out.push_back(e["type"]);
    return out;
  }
  std::vector<std::string> Cli(std::vector<std::string> args) {
    args.insert(args.end(), {"--server", server_->url(), "--token", server_->token()});
    CliResult r = RunCli(args);
    EXPECT_EQ(r.code, 0) << r.err;
    std::vector<std::string> lines;
    size_t start = 0;
    while (start < r.out.size()) {
      size_t end = r.out.find('\n', start);
      if (end == std::string::npos) end = r.out.size();
      lines.push_back(r.out.substr(start, end - start));
      start = end + 1;
    }
    return lines;
  }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<AgentProcess> agent_;
};

TEST_F(EvaluationTest, TwoVersionsAreArchivedAndComparedSideBySide) {
  std::string v10 = Submit(Evaluation("1.0", "0.81"));
  std::string v11 = Submit(Evaluation("1.1", "0.84"));
  for (const std::string& id : {v10, v11}) {
    ASSERT_TRUE(WaitFor([&] { return Get(id).value("state", "") == "Succeeded"; }, std::chrono::seconds(60)))
        << Get(id).dump();
    std::vector<std::string> types = EventTypes(id);
    EXPECT_NE(std::find(types.begin(), types.end(), "ResultsArchived"), types.end()) << id;
    // The workload shows the upload's size, not its text.
    EXPECT_EQ(Get(id)["placements"][0].value("resultsBytes", 0), 31);
  }

  // REST: both results with what they used, and the comparison with the delta.
  auto listed = server_->Client().Get("/api/v1/evaluations?model=llama");
  ASSERT_EQ(listed.status, 200) << listed.text;
  ASSERT_EQ(listed.body["items"].size(), 2u) << listed.text;
  std::set<std::string> ids;
  for (const auto& item : listed.body["items"]) {
    ids.insert(item["workloadId"]);
    EXPECT_EQ(item["model"], "llama");
    EXPECT_EQ(item["dataset"], "mmlu");
    EXPECT_EQ(item["usage"]["flavor"], "gpu/nvidia/A100-80G");
    EXPECT_GE(item["usage"]["wallSeconds"].get<double>(), 0.0);
  }
  EXPECT_EQ(ids, (std::set<std::string>{v10, v11}));
  const json& cmp = listed.body["comparison"];
  EXPECT_EQ(cmp["model"], "llama");
  EXPECT_EQ(cmp["baseline"], "1.0");
  EXPECT_EQ(cmp["versions"], json({"1.0", "1.1"}));
  ASSERT_EQ(cmp["rows"].size(), 1u) << cmp.dump();
  EXPECT_EQ(cmp["rows"][0]["dataset"], "mmlu");
  EXPECT_EQ(cmp["rows"][0]["metric"], "accuracy");
  EXPECT_DOUBLE_EQ(cmp["rows"][0]["values"][0].get<double>(), 0.81);
  EXPECT_DOUBLE_EQ(cmp["rows"][0]["values"][1].get<double>(), 0.84);
  EXPECT_NEAR(cmp["rows"][0]["deltas"][1].get<double>(), 0.03, 1e-9);
  // Another model: nothing.
  EXPECT_TRUE(server_->Client().Get("/api/v1/evaluations?model=qwen").body["items"].empty());

  // CLI: the archived results, then the versions side by side.
  std::vector<std::string> table = Cli({"get", "evaluations"});
  ASSERT_EQ(table.size(), 3u);
  EXPECT_EQ(table[0].rfind("WORKLOAD", 0), 0u) << table[0];
  for (const char* column : {"MODEL", "VERSION", "DATASET", "METRICS", "DEVICE-HOURS", "FINISHED"}) {
    EXPECT_NE(table[0].find(column), std::string::npos) << column;
  }
  // Oldest finished first; the two ran side by side on the node's two GPUs.
  for (const std::string& id : {v10, v11}) {
    bool listed_once = (table[1].find(id) != std::string::npos) != (table[2].find(id) != std::string::npos);
    EXPECT_TRUE(listed_once) << id;
  }
  EXPECT_NE(table[1].find("llama"), std::string::npos) << table[1];
  EXPECT_NE(table[1].find("mmlu"), std::string::npos) << table[1];
  std::vector<std::string> compared = Cli({"get", "evaluations", "--model", "llama"});
  ASSERT_EQ(compared.size(), 3u);
  EXPECT_EQ(compared[0], "Model llama, deltas against version 1.0");
  EXPECT_NE(compared[1].find("1.0 (baseline)"), std::string::npos) << compared[1];
  EXPECT_NE(compared[2].find("mmlu"), std::string::npos) << compared[2];
  EXPECT_NE(compared[2].find("0.81"), std::string::npos) << compared[2];
  EXPECT_NE(compared[2].find("0.84 (+0.03)"), std::string::npos) << compared[2];
  std::vector<std::string> against = Cli({"get", "evaluations", "--model", "llama", "--baseline", "1.1"});
  ASSERT_EQ(against.size(), 3u);
  EXPECT_NE(against[2].find("0.81 (-0.03)"), std::string::npos) << against[2];
  std::vector<std::string> as_json = Cli({"get", "evaluations", "--model", "llama", "-o", "json"});
  std::string text;
  for (const auto& l : as_json) text += l + "\n";
  EXPECT_EQ(json::parse(text)["comparison"]["versions"], json({"1.0", "1.1"}));

  // A member of another tenant sees none of acme's results.
  auto token = server_->Client().Post("/api/v1/tokens", json{{"user", "bea"}}.dump(), "application/json");
  ASSERT_EQ(token.status, 201) << token.text;
  cli::ApiClient bea({server_->url(), token.body["token"].get<std::string>()});
  auto theirs = bea.Get("/api/v1/evaluations?model=llama");
  ASSERT_EQ(theirs.status, 200) << theirs.text;
  EXPECT_TRUE(theirs.body["items"].empty());
  EXPECT_TRUE(theirs.body["comparison"]["rows"].empty());
}

}  // namespace
}  // namespace abacus::testing
