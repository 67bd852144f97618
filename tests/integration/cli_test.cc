// The client verbs as real processes against a real server: apply, submit, get, describe,
// explain, cancel, logs, scale with -o table|json|yaml, and their exit codes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include <fstream>

#include "server_process.h"

namespace abacus::testing {
namespace {

using nlohmann::json;

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<ServerProcess>(dir_.path());
    env_ = {"ABACUS_SERVER=" + server_->url(), "ABACUS_TOKEN=" + server_->token()};
  }
  CliResult Run(const std::vector<std::string>& args) { return RunCli(args, env_); }

  TempDir dir_;
  std::unique_ptr<ServerProcess> server_;
  std::vector<std::string> env_;
};

TEST_F(CliTest, ApplySubmitGetExplainCancel) {
  auto applied = Run({"apply", "-f", SourcePath("examples/org.yaml")});
  ASSERT_EQ(applied.code, 0) << applied.err;
  EXPECT_NE(applied.out.find("Queue/nlp-train created"), std::string::npos) << applied.out;

  // A node for the training job: two H100 nodes of 8 in one NVLink domain each.
  for (const char* name : {"h100-a", "h100-b"}) {
    json node = H100Node(name);
    ASSERT_EQ(server_->Client().Post("/api/v1/nodes", node.dump(), "application/json").status, 201);
  }

  auto submitted = Run({"submit", "-f", SourcePath("examples/workloads/training.yaml"), "-f",
                        SourcePath("examples/workloads/training-npu.yaml")});
  ASSERT_EQ(submitted.code, 0) << submitted.err;
  EXPECT_NE(submitted.out.find("TrainingJob/llama-ft submitted to queue nlp-train"), std::string::npos);

  ASSERT_TRUE(WaitFor([&] {
    auto r = Run({"get", "workloads", "llama-ft", "-o", "json"});
    return r.code == 0 && json::parse(r.out)["state"] == "Admitted";
  }));

  auto table = Run({"get", "workloads"});
  ASSERT_EQ(table.code, 0);
  EXPECT_EQ(table.out.rfind("ID ", 0), 0u) << table.out;
  EXPECT_NE(table.out.find("pangu-pretrain"), std::string::npos);
  EXPECT_NE(table.out.find("on h100-a,h100-b"), std::string::npos) << table.out;

  auto as_json = Run({"get", "workloads", "-o", "json"});
  ASSERT_EQ(as_json.code, 0);
  EXPECT_EQ(json::parse(as_json.out)["items"].size(), 2u);

  auto as_yaml = Run({"get", "queues", "nlp-train", "-o", "yaml"});
  ASSERT_EQ(as_yaml.code, 0) << as_yaml.err;
  EXPECT_EQ(YAML::Load(as_yaml.out)["name"].as<std::string>(), "nlp-train");

  for (const char* kind : {"nodes", "devices", "queues", "tenants", "flavors"}) {
    auto r = Run({"get", kind});
    EXPECT_EQ(r.code, 0) << kind << ": " << r.err;
    EXPECT_FALSE(r.out.empty()) << kind;
  }

  auto explain = Run({"explain", "pangu-pretrain"});
  ASSERT_EQ(explain.code, 0) << explain.err;
  EXPECT_NE(explain.out.find("Pending"), std::string::npos) << explain.out;
  EXPECT_NE(explain.out.find("npu/huawei/Ascend910B"), std::string::npos) << explain.out;

  auto describe = Run({"describe", "workload", "llama-ft"});
  ASSERT_EQ(describe.code, 0) << describe.err;
  EXPECT_NE(describe.out.find("Events:"), std::string::npos);
  EXPECT_NE(describe.out.find("Placed"), std::string::npos);

  auto logs = Run({"logs", "llama-ft"});
  EXPECT_EQ(logs.code, 1);
  EXPECT_NE(logs.err.find("no logs: no task"), std::string::npos) << logs.err;

  auto scale = Run({"scale", "llama-ft", "--replicas", "3"});
  EXPECT_EQ(scale.code, 1) << scale.out;

  auto cancel = Run({"cancel", "llama-ft"});
  EXPECT_EQ(cancel.code, 0) << cancel.err;
  auto twice = Run({"cancel", "llama-ft"});
  EXPECT_EQ(twice.code, 1);
  // Said plainly (the probe of 2026-12-07: "illegal workload transition Cancelled -> Cancelled").
  EXPECT_NE(twice.err.find("workload llama-ft (wl-"), std::string::npos) << twice.err;
  EXPECT_NE(twice.err.find(") is already Cancelled: nothing to cancel"), std::string::npos) << twice.err;

  // Several names at once (the probe of 2026-12-07: "The following arguments were not
  // expected"): each is cancelled, and one that fails does not stop the others.
  for (const char* name : {"one", "two"}) {
    auto ran = Run({"run", name, "--project", "nlp/llm", "--queue", "nlp-train", "--cpu", "1", "--memory", "1Gi", "--", "sleep", "60"});
    ASSERT_EQ(ran.code, 0) << name << ": " << ran.err;
  }
  auto several = Run({"cancel", "one", "nosuch", "two"});
  EXPECT_EQ(several.code, 1) << several.out << several.err;
  EXPECT_NE(several.out.find("(one) cancelled"), std::string::npos) << several.out;
  EXPECT_NE(several.out.find("(two) cancelled"), std::string::npos) << several.out;
  EXPECT_NE(several.err.find("nosuch"), std::string::npos) << several.err;
}

// Issue 20.13: work that can never run is stored, and the submit answer says so at once, in the
// scheduler's words, rather than only after the next cycle (the CLI prints it as a warning).
TEST_F(CliTest, SubmitWarnsAtOnceWhenWorkCanNeverRun) {
  ASSERT_EQ(Run({"apply", "-f", SourcePath("examples/org.yaml")}).code, 0);
  for (const char* name : {"h100-a", "h100-b"}) {
    json node = H100Node(name);
    ASSERT_EQ(server_->Client().Post("/api/v1/nodes", node.dump(), "application/json").status, 201);
  }
  // A job that fits says nothing; once it is admitted a cycle has seen the nodes and queues.
  auto fits = Run({"submit", "-f", SourcePath("examples/workloads/training.yaml")});
  ASSERT_EQ(fits.code, 0) << fits.err;
  EXPECT_EQ(fits.err.find("warning"), std::string::npos) << fits.err;
  ASSERT_TRUE(WaitFor([&] {
    auto r = Run({"get", "workloads", "llama-ft", "-o", "json"});
    return r.code == 0 && json::parse(r.out)["state"] == "Admitted";
  }));

  // More NPUs than queue nlp-npu could ever hold: stored, and warned.
  auto npu = Run({"submit", "-f", SourcePath("examples/workloads/training-npu.yaml")});
  ASSERT_EQ(npu.code, 0) << npu.err;
  EXPECT_NE(npu.out.find("TrainingJob/pangu-pretrain submitted to queue nlp-npu"), std::string::npos) << npu.out;
  EXPECT_NE(npu.err.find("warning: pangu-pretrain: NeverFits: needs 32 npu/huawei/Ascend910B, at most 16 can ever "
                         "be free to queue nlp-npu"),
            std::string::npos)
      << npu.err;

  // A runtime no node has: the answer (JSON) carries the same words the cycle's explain gives.
  std::string text = ReadFile(SourcePath("examples/workloads/training.yaml"));
  text.replace(text.find("name: llama-ft"), 14, "name: needs-cuda-13");
  text.replace(text.find("cuda>=12.2"), 10, "cuda>=13.0");
  const std::string path = dir_.path() + "/cuda13.yaml";
  std::ofstream(path) << text;
  auto cuda = Run({"submit", "-f", path, "-o", "json"});
  ASSERT_EQ(cuda.code, 0) << cuda.err;
  json item = json::parse(cuda.out)["items"][0];
  ASSERT_TRUE(item.contains("warnings")) << cuda.out;
  const std::string warning = item["warnings"][0];
  EXPECT_EQ(warning.rfind("NeverFits: ", 0), 0u) << warning;
  EXPECT_NE(warning.find("no node has cuda>=13.0: 2 have 12.4"), std::string::npos) << warning;
  // The cycle then says the same, word for word: one rule (sched), run at submit and in the loop.
  const std::string words = warning.substr(std::string("NeverFits: ").size());
  ASSERT_TRUE(WaitFor([&] {
    auto r = Run({"explain", "needs-cuda-13"});
    return r.code == 0 && r.out.find("NeverFits: never fits: " + words) != std::string::npos;
  })) << words << "\n" << Run({"explain", "needs-cuda-13"}).out;
}

TEST_F(CliTest, ClustersAndTemporaryQuotaDecisions) {
  ASSERT_EQ(Run({"apply", "-f", SourcePath("examples/org.yaml")}).code, 0);
  // The example experiment asks 2 A100s for 4 h; nlp approves up to 1 at once: while it waits
  // (no node yet) its request waits for an admin.
  ASSERT_EQ(Run({"submit", "-f", SourcePath("examples/workloads/experiment.yaml")}).code, 0);
  ASSERT_TRUE(WaitFor([&] {
    auto r = Run({"get", "workloads", "ablation-notebook", "-o", "json"});
    if (r.code != 0) return false;
    json quota = json::parse(r.out).value("controllerState", json::object()).value("quota", json::object());
    return quota.value("status", "") == "Pending";
  }));
  auto approved = Run({"approve", "ablation-notebook"});
  ASSERT_EQ(approved.code, 0) << approved.err;
  EXPECT_NE(approved.out.find("approved"), std::string::npos) << approved.out;
  auto again = Run({"reject", "ablation-notebook"});
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.err.find("already approved"), std::string::npos) << again.err;
  // A node in cluster dc1 (declared in examples/org.yaml): listed with its location.
  json node = {{"name", "a100-x"}, {"cluster", "dc1"}, {"pool", "general"}, {"cpu", "64"}, {"memory", "256Gi"},
               {"devices", {{{"index", 0}, {"flavor", "gpu/nvidia/A100-80G"}, {"memory", "80Gi"}}}}};
  ASSERT_EQ(server_->Client().Post("/api/v1/nodes", node.dump(), "application/json").status, 201);
  auto clusters = Run({"get", "clusters"});
  ASSERT_EQ(clusters.code, 0) << clusters.err;
  EXPECT_EQ(clusters.out.rfind("NAME ", 0), 0u) << clusters.out;
  EXPECT_NE(clusters.out.find("cn-hangzhou-b"), std::string::npos) << clusters.out;
  EXPECT_NE(clusters.out.find("gpu/nvidia/A100-80G"), std::string::npos) << clusters.out;
}

TEST_F(CliTest, ExitCodesAndConfigResolution) {
  // 2: usage.
  EXPECT_EQ(Run({"get", "gizmos"}).code, 2);
  EXPECT_EQ(Run({"submit", "-f", "/nonexistent.yaml"}).code, 2);
  // 1: the server said no (validation errors printed as FILE:LINE).
  auto invalid = RunCli({"submit", "-f", "-"}, env_, "kind: TrainingJob\nname: x\nqueue: q\nspec: {}\n");
  EXPECT_EQ(invalid.code, 1);
  EXPECT_NE(invalid.err.find("error: stdin:"), std::string::npos) << invalid.err;
  // 3: unreachable.
  EXPECT_EQ(Run({"get", "nodes", "--server", "http://127.0.0.1:1"}).code, 3);
  // Flags beat the environment: a wrong --token is refused (401 → 1).
  EXPECT_EQ(Run({"get", "nodes", "--token", "wrong"}).code, 1);
  // The config file, when neither flag nor environment is given.
  std::string config = dir_.path() + "/client.yaml";
  std::ofstream(config) << "server: " << server_->url() << "\ntokenFile: " << dir_.path() << "/admin.token\n";
  auto from_file = RunCli({"get", "nodes"}, {"ABACUS_CONFIG=" + config});
  EXPECT_EQ(from_file.code, 0) << from_file.err;
}

}  // namespace
}  // namespace abacus::testing
