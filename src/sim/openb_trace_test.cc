#include "sim/openb_trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

namespace abacus::sim {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kTraceDir = std::string(ABACUS_SOURCE_DIR) + "/../shared/traces/openb";

#define SKIP_WITHOUT_TRACE()                                                                  \
  do {                                                                                        \
    if (!std::filesystem::is_directory(kTraceDir)) {                                          \
      GTEST_SKIP() << "openb trace not found at " << kTraceDir << " (shared/ beside the clone)"; \
    }                                                                                         \
  } while (0)

constexpr std::string_view kPodHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";

// ---- The real trace. ----

TEST(OpenbTraceFiles, NodeListsMatchTheReadme) {
  SKIP_WITHOUT_TRACE();
  auto all = ReadOpenbNodes(kTraceDir + "/openb_node_list_all_node.csv");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->rows.size(), 1523u);
  EXPECT_EQ(all->skipped_rows, 0u);

  auto gpu = ReadOpenbNodes(kTraceDir + "/openb_node_list_gpu_node.csv");
  ASSERT_TRUE(gpu.ok()) << gpu.status().ToString();
  ASSERT_EQ(gpu->rows.size(), 1213u);
  std::map<std::string, int64_t> by_model;
  int64_t total = 0;
  for (const TraceNode& n : gpu->rows) {
    EXPECT_GT(n.gpus, 0) << n.name;
    by_model[n.model] += n.gpus;
    total += n.gpus;
  }
  EXPECT_EQ(total, 6212);
  const std::map<std::string, int64_t> expected = {{"G2", 4392},     {"T4", 842},      {"G3", 312}, {"P100", 265},
                                                   {"V100M32", 204}, {"V100M16", 195}, {"A10", 2}};
  EXPECT_EQ(by_model, expected);
  EXPECT_EQ(gpu->rows[0], (TraceNode{"openb-node-0000", 64000, 262144, 2, "P100"}));
  EXPECT_EQ(all->rows[0], (TraceNode{"openb-node-0000", 32000, 262144, 0, ""}));
  for (const auto& [model, count] : by_model) {
    auto flavor = OpenbModelFlavor(model);
    EXPECT_TRUE(flavor.ok()) << model;
  }
}

struct PodFileCase {
  const char* file;
  size_t pods;
  size_t cpu_only, sharing, one_gpu, multi_gpu;
};

TEST(OpenbTraceFiles, EveryPodListLoadsWithItsShapeCounts) {
  SKIP_WITHOUT_TRACE();
  const PodFileCase cases[] = {
      {"cpu0", 7064, 0, 3078, 3911, 75},           {"cpu037", 7336, 272, 3078, 3911, 75},
      {"cpu050", 7439, 375, 3078, 3911, 75},       {"cpu072", 7608, 544, 3078, 3911, 75},
      {"cpu100", 7853, 789, 3078, 3911, 75},       {"cpu200", 8832, 1768, 3078, 3911, 75},
      {"cpu235", 9240, 2176, 3078, 3911, 75},      {"cpu250", 9420, 2356, 3078, 3911, 75},
      {"cpu300", 10094, 3030, 3078, 3911, 75},     {"default", 8152, 1088, 3078, 3911, 75},
      {"gpushare100", 8152, 1088, 7064, 0, 0},     {"gpushare20", 8152, 1088, 2324, 4653, 87},
      {"gpushare40", 8152, 1088, 4001, 3001, 62},  {"gpushare60", 8152, 1088, 5233, 1801, 30},
      {"gpushare80", 8152, 1088, 6279, 768, 17},   {"gpuspec05", 8152, 1088, 3078, 3911, 75},
      {"gpuspec10", 8152, 1088, 3078, 3911, 75},   {"gpuspec20", 8152, 1088, 3078, 3911, 75},
      {"gpuspec25", 8152, 1088, 3078, 3911, 75},   {"gpuspec33", 8152, 1088, 3078, 3911, 75},
      {"multigpu20", 8324, 1088, 3078, 3911, 247}, {"multigpu30", 8508, 1088, 3078, 3911, 431},
      {"multigpu40", 8746, 1088, 3078, 3911, 669}, {"multigpu50", 9061, 1088, 3078, 3911, 984},
  };
  for (const PodFileCase& c : cases) {
    SCOPED_TRACE(c.file);
    auto pods = ReadOpenbPods(kTraceDir + "/openb_pod_list_" + c.file + ".csv");
    ASSERT_TRUE(pods.ok()) << pods.status().ToString();
    EXPECT_EQ(pods->rows.size(), c.pods);
    EXPECT_EQ(pods->skipped_rows, 0u);
    const bool multigpu = std::string_view(c.file).starts_with("multigpu");
    EXPECT_EQ(pods->layout, multigpu ? PodLayout::kResource : PodLayout::kFull);
    size_t cpu_only = 0, sharing = 0, one = 0, multi = 0;
    for (const TracePod& p : pods->rows) {
      if (p.num_gpu == 0) {
        ++cpu_only;
      } else if (p.shares_gpu()) {
        ++sharing;
      } else if (p.num_gpu == 1) {
        ++one;
      } else {
        ++multi;
      }
      for (const std::string& model : p.gpu_spec) EXPECT_TRUE(OpenbModelFlavor(model).ok()) << model;
    }
    EXPECT_EQ(cpu_only, c.cpu_only);
    EXPECT_EQ(sharing, c.sharing);
    EXPECT_EQ(one, c.one_gpu);
    EXPECT_EQ(multi, c.multi_gpu);
  }
}

TEST(OpenbTraceFiles, DefaultPodsCarryTimesQosAndSpecs) {
  SKIP_WITHOUT_TRACE();
  auto pods = ReadOpenbPods(kTraceDir + "/openb_pod_list_default.csv");
  ASSERT_TRUE(pods.ok()) << pods.status().ToString();
  const TracePod& first = pods->rows[0];
  EXPECT_EQ(first.name, "openb-pod-0000");
  EXPECT_EQ(first.cpu_milli, 12000);
  EXPECT_EQ(first.memory_mib, 16384);
  EXPECT_EQ(first.num_gpu, 1);
  EXPECT_EQ(first.gpu_milli, 1000);
  EXPECT_TRUE(first.gpu_spec.empty());
  EXPECT_EQ(first.qos, TraceQos::kLS);
  EXPECT_EQ(first.phase, "Running");
  EXPECT_EQ(first.creation_time, 0);
  EXPECT_EQ(first.scheduled_time, 0);
  EXPECT_EQ(first.duration(), 12537496);
  EXPECT_EQ(pods->rows[1].gpu_milli, 460);
  EXPECT_TRUE(pods->rows[1].shares_gpu());

  std::map<TraceQos, int> qos;
  int never_scheduled = 0;
  for (const TracePod& p : pods->rows) {
    ++qos[p.qos];
    never_scheduled += p.scheduled_time ? 0 : 1;
    ASSERT_TRUE(p.duration().has_value()) << p.name;
    EXPECT_GE(*p.duration(), 0) << p.name;
  }
  EXPECT_EQ(qos[TraceQos::kLS], 4647);
  EXPECT_EQ(qos[TraceQos::kBE], 3398);
  EXPECT_EQ(qos[TraceQos::kBurstable], 100);
  EXPECT_EQ(qos[TraceQos::kGuaranteed], 7);
  EXPECT_GT(never_scheduled, 0);
  // openb-pod-0061 stayed Pending: no scheduled_time.
  EXPECT_EQ(pods->rows[61].name, "openb-pod-0061");
  EXPECT_EQ(pods->rows[61].phase, "Pending");
  EXPECT_FALSE(pods->rows[61].scheduled_time.has_value());
}

TEST(OpenbTraceFiles, RepeatedModelsInGpuSpecAreKeptOnce) {
  SKIP_WITHOUT_TRACE();
  auto pods = ReadOpenbPods(kTraceDir + "/openb_pod_list_gpuspec05.csv");
  ASSERT_TRUE(pods.ok()) << pods.status().ToString();
  const TracePod& p = pods->rows[2182];  // "V100M16|V100M32|V100M32" in the file
  EXPECT_EQ(p.name, "openb-pod-2182");
  EXPECT_EQ(p.gpu_spec, (std::vector<std::string>{"V100M16", "V100M32"}));
}

TEST(OpenbTraceFiles, FiveColumnLayoutHasNoTimes) {
  SKIP_WITHOUT_TRACE();
  auto pods = ReadOpenbPods(kTraceDir + "/openb_pod_list_multigpu50.csv");
  ASSERT_TRUE(pods.ok()) << pods.status().ToString();
  const TracePod& first = pods->rows[0];
  EXPECT_EQ(first.name, "openb-pod-0000");
  EXPECT_EQ(first.gpu_milli, 1000);
  EXPECT_TRUE(first.phase.empty());
  EXPECT_FALSE(first.creation_time.has_value());
  EXPECT_FALSE(first.duration().has_value());
}

TEST(OpenbTraceFiles, MissingFileIsNotFound) {
  auto nodes = ReadOpenbNodes("/nonexistent/openb_node_list_gpu_node.csv");
  ASSERT_FALSE(nodes.ok());
  EXPECT_EQ(nodes.status().code(), StatusCode::kNotFound);
}

// ---- Strict parsing, in memory. ----

struct BadRowCase {
  std::string row;
  std::string expected;  // prefix of the error after "t.csv:2: "
};

TEST(OpenbPodParse, MalformedRowsStopWithFileLineAndColumn) {
  const BadRowCase cases[] = {
      {"p,1,2,1,500,,LS,Running,0,10", "expected 11 columns, found 10"},
      {"p,1x,2,1,500,,LS,Running,0,10,0", "cpu_milli: expected an integer, found '1x'"},
      {"p,,2,1,500,,LS,Running,0,10,0", "cpu_milli: missing value"},
      {"p,1,-2,1,500,,LS,Running,0,10,0", "memory_mib: must not be negative"},
      {"p,1,2,1,1001,,LS,Running,0,10,0", "gpu_milli: value 1001 exceeds 1000"},
      {"p,1,2,2,500,,LS,Running,0,10,0", "gpu_milli: a GPU share (500 < 1000) needs num_gpu = 1"},
      {"p,1,2,0,500,,LS,Running,0,10,0", "gpu_milli: must be 0 when num_gpu is 0"},
      {"p,1,2,1,0,,LS,Running,0,10,0", "gpu_milli: must be 1..1000"},
      {"p,1,2,1,500,,Gold,Running,0,10,0", "qos: unknown QoS 'Gold'"},
      {"p,1,2,1,500,,LS,Sleeping,0,10,0", "pod_phase: unknown phase 'Sleeping'"},
      {"p,1,2,1,500,T4|,LS,Running,0,10,0", "gpu_spec: empty GPU model"},
      {"p,1,2,1,500,T4||P100,LS,Running,0,10,0", "gpu_spec: invalid GPU model ''"},
      {"p,1,2,1,500,T 4,LS,Running,0,10,0", "gpu_spec: invalid GPU model 'T 4'"},
      {"p,1,2,1,500,,LS,Running,20,10,0", "deletion_time: deletion_time 10 is before creation_time 20"},
      {"p,1,2,1,500,,LS,Running,0,10,x", "scheduled_time: expected an integer, found 'x'"},
      {"p,1,2,1,99999999999,,LS,Running,0,10,0", "gpu_milli: value 99999999999 exceeds 1000"},
      {"p,1,2,1,500,,LS,Running,0,99999999999999999999,0", "deletion_time: integer '99999999999999999999' is out of range"},
      {",1,2,1,500,,LS,Running,0,10,0", "name: missing pod name"},
      {"\"p\",1,2,1,500,,LS,Running,0,10,0", "quoted fields are not supported"},
  };
  for (const BadRowCase& c : cases) {
    SCOPED_TRACE(c.row);
    const std::string text = std::string(kPodHeader) + c.row + "\n";
    auto pods = ParseOpenbPods(text, "t.csv");
    ASSERT_FALSE(pods.ok());
    EXPECT_EQ(pods.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(pods.status().message(), StartsWith("t.csv:2: " + c.expected));
  }
}

TEST(OpenbPodParse, DuplicateNamesPointAtTheFirst) {
  const std::string text = std::string(kPodHeader) +
                           "p,1,2,1,500,,LS,Running,0,10,0\n"
                           "p,1,2,1,500,,LS,Running,0,10,0\n";
  auto pods = ParseOpenbPods(text, "t.csv");
  ASSERT_FALSE(pods.ok());
  EXPECT_EQ(pods.status().message(), "t.csv:3: name: duplicate pod 'p' (first on line 2)");
}

TEST(OpenbPodParse, SkipBadRowsCountsAndKeepsTheFirstDiagnostics) {
  std::string text = std::string(kPodHeader);
  text += "a,1,2,1,500,,LS,Running,0,10,0\n";
  for (int i = 0; i < 5; ++i) text += "bad" + std::to_string(i) + ",1,2,1,5000,,LS,Running,0,10,0\n";
  text += "b,1000,2048,8,1000,V100M16|V100M32,BE,Pending,5,9,\n";
  TraceReadOptions options;
  options.skip_bad_rows = true;
  options.max_diagnostics = 2;
  auto pods = ParseOpenbPods(text, "t.csv", options);
  ASSERT_TRUE(pods.ok()) << pods.status().ToString();
  ASSERT_EQ(pods->rows.size(), 2u);
  EXPECT_EQ(pods->skipped_rows, 5u);
  ASSERT_EQ(pods->diagnostics.size(), 2u);
  EXPECT_EQ(pods->diagnostics[0].ToString(), "t.csv:3: gpu_milli: value 5000 exceeds 1000");
  EXPECT_EQ(pods->diagnostics[1].line, 4);
  const TracePod& b = pods->rows[1];
  EXPECT_EQ(b.num_gpu, 8);
  EXPECT_EQ(b.gpu_spec, (std::vector<std::string>{"V100M16", "V100M32"}));
  EXPECT_EQ(b.qos, TraceQos::kBE);
  EXPECT_EQ(b.duration(), 4);
  EXPECT_FALSE(b.scheduled_time.has_value());
}

TEST(OpenbPodParse, HeaderPicksTheLayout) {
  auto five = ParseOpenbPods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\r\np,1,2,1,250\r\n", "t.csv");
  ASSERT_TRUE(five.ok()) << five.status().ToString();
  EXPECT_EQ(five->layout, PodLayout::kResource);
  ASSERT_EQ(five->rows.size(), 1u);
  EXPECT_EQ(five->rows[0].gpu_milli, 250);

  auto eleven_as_five = ParseOpenbPods("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1,2,1,250,,LS\n", "t.csv");
  ASSERT_FALSE(eleven_as_five.ok());
  EXPECT_THAT(eleven_as_five.status().message(), HasSubstr("t.csv:2: expected 5 columns, found 7"));

  auto bad = ParseOpenbPods("name,cpu,memory\n", "t.csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), StartsWith("t.csv:1: unexpected header 'name,cpu,memory'"));

  auto empty = ParseOpenbPods("", "t.csv");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(), StartsWith("t.csv:1: empty file"));

  // A header with only the 11 columns and no rows is an empty, valid list.
  auto none = ParseOpenbPods(kPodHeader, "t.csv");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->rows.empty());
}

TEST(OpenbNodeParse, MalformedRows) {
  const BadRowCase cases[] = {
      {"n,1000,2048,2,", "model: missing GPU model on a node with GPUs"},
      {"n,1000,2048,0,T4", "model: GPU model 'T4' on a node without GPUs"},
      {"n,1000,2048,-1,T4", "gpu: must not be negative"},
      {"n,1000,2048,2", "expected 5 columns, found 4"},
      {",1000,2048,2,T4", "sn: missing node name"},
      {"n,1e3,2048,2,T4", "cpu_milli: expected an integer, found '1e3'"},
  };
  for (const BadRowCase& c : cases) {
    SCOPED_TRACE(c.row);
    auto nodes = ParseOpenbNodes("sn,cpu_milli,memory_mib,gpu,model\n" + c.row + "\n", "n.csv");
    ASSERT_FALSE(nodes.ok());
    EXPECT_THAT(nodes.status().message(), StartsWith("n.csv:2: " + c.expected));
  }
  auto good = ParseOpenbNodes("\xEF\xBB\xBFsn,cpu_milli,memory_mib,gpu,model\nn,96000,786432,8,G2\n\n", "n.csv");
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  ASSERT_EQ(good->rows.size(), 1u);
  EXPECT_EQ(good->rows[0], (TraceNode{"n", 96000, 786432, 8, "G2"}));
}

// ---- Mapping to Abacus vocabulary. ----

TEST(OpenbMapping, ModelsBecomeFlavors) {
  const std::pair<const char*, const char*> cases[] = {
      {"T4", "gpu/nvidia/T4"},           {"P100", "gpu/nvidia/P100"}, {"V100M16", "gpu/nvidia/V100M16"},
      {"V100M32", "gpu/nvidia/V100M32"}, {"A10", "gpu/nvidia/A10"},   {"G1", "gpu/alibaba/G1"},
      {"G2", "gpu/alibaba/G2"},          {"G3", "gpu/alibaba/G3"},
  };
  for (const auto& [model, flavor] : cases) {
    auto f = OpenbModelFlavor(model);
    ASSERT_TRUE(f.ok()) << model;
    EXPECT_EQ(f->name(), flavor);
  }
  auto unknown = OpenbModelFlavor("H100");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("unknown openb GPU model 'H100'"));
}

TEST(OpenbMapping, QosBecomesPriorityClass) {
  EXPECT_EQ(OpenbPriorityClass(TraceQos::kLS), "production");
  EXPECT_EQ(OpenbPriorityClass(TraceQos::kGuaranteed), "high");
  EXPECT_EQ(OpenbPriorityClass(TraceQos::kBurstable), "training");
  EXPECT_EQ(OpenbPriorityClass(TraceQos::kBE), "best-effort");
  EXPECT_EQ(TraceQosName(TraceQos::kBurstable), "Burstable");
}

}  // namespace
}  // namespace abacus::sim
