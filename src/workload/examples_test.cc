// Every spec file under examples/ (org.yaml and workloads/) must validate with no problem, on
// its own and together.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "tenancy/yaml_json.h"
#include "workload/documents.h"
#include "workload/workload_codec.h"

namespace abacus {
namespace {

namespace fs = std::filesystem;

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<fs::path> ExampleFiles() {
  fs::path root = fs::path(ABACUS_SOURCE_DIR) / "examples";
  std::vector<fs::path> files = {root / "org.yaml"};
  for (const auto& e : fs::directory_iterator(root / "workloads")) {
    if (e.path().extension() == ".yaml") files.push_back(e.path());
  }
  std::sort(files.begin() + 1, files.end());
  return files;
}

TEST(ExamplesTest, EveryExampleFileValidates) {
  auto files = ExampleFiles();
  ASSERT_GE(files.size(), 8u);
  std::vector<Document> all;
  std::set<std::string> kinds;
  for (const auto& f : files) {
    ParsedDocuments parsed = ParseDocuments(Read(f), f.string());
    EXPECT_TRUE(parsed.diagnostics.empty()) << parsed.diagnostics.ToString();
    EXPECT_FALSE(parsed.documents.empty()) << f;
    Diagnostics alone;
    CheckDocuments(parsed.documents, alone);
    EXPECT_TRUE(alone.empty()) << alone.ToString();
    for (auto& d : parsed.documents) {
      kinds.insert(std::string(d.kind()));
      all.push_back(std::move(d));
    }
  }
  Diagnostics together;
  CheckDocuments(all, together);
  EXPECT_TRUE(together.empty()) << together.ToString();
  for (const char* k : {"TrainingJob", "InferenceService", "Experiment", "Evaluation", "BatchJob",
                        "Tenant", "Project", "Cohort", "Queue", "PriorityClass", "Flavor", "Pool"}) {
    EXPECT_EQ(kinds.count(k), 1u) << "no example of " << k;
  }
}

TEST(ExamplesTest, EveryExampleRoundTripsThroughYamlAndJson) {
  for (const auto& f : ExampleFiles()) {
    ParsedDocuments parsed = ParseDocuments(Read(f), f.string());
    ASSERT_TRUE(parsed.diagnostics.empty()) << parsed.diagnostics.ToString();
    std::vector<SpecObject> objects;
    for (const auto& d : parsed.documents) objects.push_back(d.object);
    // YAML: emit all documents, read them back.
    std::string yaml = ToYaml(objects);
    ParsedDocuments again = ParseDocuments(yaml, "again.yaml");
    ASSERT_TRUE(again.diagnostics.empty()) << again.diagnostics.ToString() << yaml;
    ASSERT_EQ(again.documents.size(), objects.size());
    for (size_t i = 0; i < objects.size(); ++i) {
      EXPECT_TRUE(again.documents[i].object == objects[i]) << f << " document " << i << "\n" << yaml;
      // JSON: ToJson then FromJson is the identity, and so is JSON text.
      nlohmann::json j = ToJson(objects[i]);
      auto back = SpecObjectFromJson(nlohmann::json::parse(j.dump()));
      ASSERT_TRUE(back.ok()) << back.status().ToString() << j.dump(2);
      EXPECT_TRUE(*back == objects[i]) << j.dump(2);
      EXPECT_EQ(ToJson(*back), j);
      // The store's form (plain JSON, built directly) holds what the ordered form holds.
      if (const auto* w = std::get_if<Workload>(&objects[i])) {
        EXPECT_EQ(ToJson(*w), ToPlainJson(EncodeWorkload(*w))) << f << " document " << i;
      }
    }
  }
}

TEST(ExamplesTest, TrainingExampleMatchesTheDesign) {
  auto parsed = ParseDocuments(Read(fs::path(ABACUS_SOURCE_DIR) / "examples/workloads/training.yaml"), "t");
  ASSERT_EQ(parsed.documents.size(), 1u);
  const Workload* w = parsed.documents[0].workload();
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->kind(), WorkloadKind::kTrainingJob);
  EXPECT_EQ(w->project, "nlp/llm");
  EXPECT_EQ(w->tenant(), "nlp");
  EXPECT_TRUE(w->spec.gang);
  ASSERT_EQ(w->spec.task_groups.size(), 1u);
  const TaskGroup& g = w->spec.task_groups[0];
  EXPECT_EQ(g.replicas, 2);
  EXPECT_EQ(g.resources.cpu.milli(), 16000);
  EXPECT_EQ(g.resources.memory.CeilUnits(), int64_t{64} << 30);
  EXPECT_EQ(g.resources.accelerators->flavor.text(), "gpu/nvidia/*");
  EXPECT_EQ(g.resources.accelerators->count, 8);
  EXPECT_EQ(g.topology, TopologyPolicy::kSameInterconnect);
  EXPECT_EQ(w->training()->checkpoint->signal, "SIGUSR1");
  EXPECT_EQ(w->training()->checkpoint->grace_seconds, 120);
  EXPECT_EQ(w->training()->restart_policy.max_retries, 3);
  EXPECT_EQ(*w->training()->max_runtime, std::chrono::hours(72));
  EXPECT_EQ(w->TaskCount(), 2);
  EXPECT_EQ(parsed.documents[0].source.LineOf("spec.maxRuntime"), 23);
}

}  // namespace
}  // namespace abacus
