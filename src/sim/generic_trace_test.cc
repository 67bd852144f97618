#include "sim/generic_trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace abacus::sim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::string kExamples = std::string(ABACUS_SOURCE_DIR) + "/examples/traces";

Quantity Q(std::string_view text) { return *Quantity::Parse(text); }

TEST(DeviceSpec, ParsesKindVendorModelCountMemory) {
  auto d = ParseDeviceSpec("gpu:nvidia:A100-80G:8:80Gi");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->flavor.name(), "gpu/nvidia/A100-80G");
  EXPECT_EQ(d->count, 8);
  EXPECT_EQ(d->memory, Q("80Gi"));
  auto npu = ParseDeviceSpec("npu:huawei:Ascend910B:8");
  ASSERT_TRUE(npu.ok());
  EXPECT_EQ(npu->flavor.kind(), DeviceKind::kNpu);
  EXPECT_FALSE(npu->memory.has_value());
}

TEST(DeviceSpec, RejectsMalformedSpecs) {
  const std::pair<const char*, const char*> cases[] = {
      {"gpu:nvidia:A100", "expected KIND:VENDOR:MODEL:COUNT[:MEMORY]"},
      {"gpu:nvidia:A100:8:80Gi:x", "expected KIND:VENDOR:MODEL:COUNT[:MEMORY]"},
      {"cpu:intel:x:8", "kind must be gpu or npu"},
      {"gpu:NVIDIA:A100:8", "invalid device spec 'gpu:NVIDIA:A100:8'"},
      {"gpu:nvidia:A100:0", "COUNT must be 1..1024"},
      {"gpu:nvidia:A100:eight", "COUNT must be 1..1024"},
      {"gpu:nvidia:A100:8:lots", "MEMORY"},
      {"gpu:nvidia:A100:8:0", "MEMORY must be a positive number of bytes"},
  };
  for (const auto& [spec, message] : cases) {
    auto d = ParseDeviceSpec(spec);
    ASSERT_FALSE(d.ok()) << spec;
    EXPECT_THAT(d.status().message(), HasSubstr(message)) << spec;
  }
}

TEST(GenericTraceExample, YamlAndCsvFormsHoldTheSameTrace) {
  auto yaml = LoadGenericTrace(kExamples + "/small-cluster.yaml");
  ASSERT_TRUE(yaml.ok()) << yaml.status().ToString();
  auto csv = LoadGenericTrace(kExamples + "/small-cluster");
  ASSERT_TRUE(csv.ok()) << csv.status().ToString();
  EXPECT_EQ(yaml->nodes, csv->nodes);
  EXPECT_EQ(yaml->workloads, csv->workloads);

  ASSERT_EQ(yaml->nodes.size(), 9u);
  ASSERT_EQ(yaml->workloads.size(), 20u);
  int npu_nodes = 0, gpu_nodes = 0, cpu_nodes = 0;
  for (const GenericTraceNode& n : yaml->nodes) {
    if (n.devices.empty()) {
      ++cpu_nodes;
    } else if (n.devices[0].flavor.kind() == DeviceKind::kNpu) {
      ++npu_nodes;
    } else {
      ++gpu_nodes;
    }
  }
  EXPECT_EQ(npu_nodes, 2);
  EXPECT_EQ(gpu_nodes, 5);
  EXPECT_EQ(cpu_nodes, 2);

  const GenericTraceNode& npu = yaml->nodes[0];
  EXPECT_EQ(npu.name, "npu-910b-01");
  EXPECT_EQ(npu.cluster, "bj");
  EXPECT_EQ(npu.pool, "npu");
  EXPECT_EQ(npu.labels, (std::map<std::string, std::string>{{"rack", "r1"}, {"zone", "a"}}));
  EXPECT_EQ(npu.cpu.milli(), 192000);
  EXPECT_EQ(npu.memory.CeilUnits(), int64_t{1536} << 30);
  ASSERT_EQ(npu.devices.size(), 1u);
  EXPECT_EQ(npu.devices[0].flavor.name(), "npu/huawei/Ascend910B");
  EXPECT_EQ(npu.devices[0].count, 8);
  EXPECT_EQ(npu.devices[0].memory, Q("64Gi"));
  EXPECT_EQ(yaml->nodes[3].labels.at("nvlink"), "true");  // quoted "zone=b,nvlink=true" in the CSV

  const GenericTraceWorkload& llama = yaml->workloads[0];
  EXPECT_EQ(llama.name, "llama-pretrain");
  EXPECT_EQ(llama.kind, GenericWorkloadKind::kTrainingJob);
  EXPECT_EQ(llama.tenant, "nlp");
  EXPECT_EQ(llama.queue, "nlp-train");
  EXPECT_EQ(llama.priority_class, "training");
  EXPECT_EQ(llama.submit_s, 0);
  EXPECT_EQ(llama.duration_s, 36000);
  EXPECT_EQ(llama.replicas, 2);
  EXPECT_EQ(llama.cpu, Q("96"));
  EXPECT_EQ(llama.memory, Q("768Gi"));
  ASSERT_TRUE(llama.accelerator.has_value());
  EXPECT_EQ(llama.accelerator->text(), "npu/huawei/Ascend910B");
  EXPECT_EQ(llama.accelerator_count, 8);
  EXPECT_EQ(llama.share_milli, 1000);
  EXPECT_EQ(llama.device_memory, Q("64Gi"));
  EXPECT_TRUE(llama.gang);  // TrainingJob default

  const GenericTraceWorkload& chat = yaml->workloads[1];
  EXPECT_EQ(chat.kind, GenericWorkloadKind::kInferenceService);
  EXPECT_FALSE(chat.duration_s.has_value());
  EXPECT_FALSE(chat.gang);

  const GenericTraceWorkload& embed = yaml->workloads[2];
  EXPECT_EQ(embed.share_milli, 250);
  EXPECT_EQ(embed.accelerator_count, 1);

  const GenericTraceWorkload& etl = yaml->workloads[9];
  EXPECT_EQ(etl.kind, GenericWorkloadKind::kBatchJob);
  EXPECT_FALSE(etl.accelerator.has_value());
  EXPECT_EQ(etl.accelerator_count, 0);
  EXPECT_TRUE(etl.priority_class.empty());
  EXPECT_EQ(yaml->workloads[18].cpu.milli(), 500);

  EXPECT_EQ(yaml->workloads[16].name, "distill-small");
  EXPECT_FALSE(yaml->workloads[16].gang);  // explicit false beats the TrainingJob default

  // Every kind appears.
  for (auto kind : {GenericWorkloadKind::kTrainingJob, GenericWorkloadKind::kInferenceService,
                    GenericWorkloadKind::kExperiment, GenericWorkloadKind::kEvaluation, GenericWorkloadKind::kBatchJob}) {
    EXPECT_TRUE(std::any_of(yaml->workloads.begin(), yaml->workloads.end(),
                            [&](const GenericTraceWorkload& w) { return w.kind == kind; }))
        << GenericWorkloadKindName(kind);
  }
}

TEST(GenericTraceExample, LinesPointIntoTheFiles) {
  auto csv = LoadGenericTrace(kExamples + "/small-cluster");
  ASSERT_TRUE(csv.ok()) << csv.status().ToString();
  EXPECT_EQ(csv->nodes[0].line, 3);  // after a comment and the header
  EXPECT_EQ(csv->workloads[0].line, 3);
  auto yaml = LoadGenericTrace(kExamples + "/small-cluster.yaml");
  ASSERT_TRUE(yaml.ok());
  EXPECT_EQ(yaml->nodes[0].line, 4);
}

TEST(GenericTraceLoad, RejectsUnknownPaths) {
  auto txt = LoadGenericTrace("/tmp/trace.txt");
  ASSERT_FALSE(txt.ok());
  EXPECT_THAT(txt.status().message(), HasSubstr("expected a .yaml/.yml file or a folder"));
  auto missing = LoadGenericTrace("/nonexistent/trace.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

constexpr std::string_view kNodesHeader = "name,cluster,pool,labels,cpu,memory,devices\n";
constexpr std::string_view kGpuNode = "g1,c,p,,64,256Gi,gpu:nvidia:T4:4:16Gi\n";
constexpr std::string_view kWorkloadsHeader =
    "name,kind,tenant,queue,priorityClass,submit,duration,replicas,cpu,memory,accelerator,count,share,deviceMemory,"
    "gang\n";

Status CsvWorkloadError(const std::string& row) {
  auto trace = ParseGenericTraceCsv(std::string(kNodesHeader) + std::string(kGpuNode), "n.csv",
                                    std::string(kWorkloadsHeader) + row + "\n", "w.csv");
  return trace.status();
}

TEST(GenericTraceCsv, WorkloadErrorsNameFileLineAndColumn) {
  const std::pair<const char*, const char*> cases[] = {
      {"w,TrainingJob,t,q,,0,10,1,1,1Gi,gpu/nvidia/T4,1,,,", ""},  // valid
      {"w,Job,t,q,,0,10,1,1,1Gi,,,,,", "w.csv:2: kind: unknown kind 'Job'"},
      {"w,,t,q,,0,10,1,1,1Gi,,,,,", "w.csv:2: kind: required workload kind is missing"},
      {"w,BatchJob,t,q,,,10,1,1,1Gi,,,,,", "w.csv:2: submit: required seconds is missing"},
      {"w,BatchJob,t,q,,-5,10,1,1,1Gi,,,,,", "w.csv:2: submit: -5 is out of range"},
      {"w,BatchJob,t,q,,1h,10,1,1,1Gi,,,,,", "w.csv:2: submit: expected a whole number of seconds, found '1h'"},
      {"w,BatchJob,t,q,,0,10,0,1,1Gi,,,,,", "w.csv:2: replicas: 0 is out of range"},
      {"w,BatchJob,t,q,,0,10,1,lots,1Gi,,,,,", "w.csv:2: cpu: "},
      {"w,BatchJob,t,q,,0,10,1,1,100m,,,,,", "w.csv:2: memory: '100m' is not a whole number of bytes"},
      {"w,BatchJob,t,q,High,0,10,1,1,1Gi,,,,,", "w.csv:2: priorityClass: invalid priority class 'High'"},
      {"w,BatchJob,t q,q,,0,10,1,1,1Gi,,,,,", "w.csv:2: tenant: invalid name 't q'"},
      {"w,BatchJob,t,q,,0,10,1,1,1Gi,,2,,,", "w.csv:2: count: given without an accelerator flavor pattern"},
      {"w,BatchJob,t,q,,0,10,1,1,1Gi,gpu/nvidia/T4,2,500,,", "w.csv:2: share: a share (500 < 1000 milli-device) needs count 1"},
      {"w,BatchJob,t,q,,0,10,1,1,1Gi,gpu/nvidia/T4,1,1500,,", "w.csv:2: share: 1500 is out of range (1..1000)"},
      {"w,BatchJob,t,q,,0,10,1,1,1Gi,gpu/amd/*,1,,,", "w.csv:2: accelerator: 'gpu/amd/*' matches no device"},
      {"w,BatchJob,t,q,,0,10,1,1,1Gi,*,1,,,", "w.csv:2: accelerator: '*' selects the cpu flavor"},
      {"w,BatchJob,t,q,,0,10,1,1,1Gi,gpu/nvidia/T4,1,,0,", "w.csv:2: deviceMemory: '0' must be positive"},
      {"w,BatchJob,t,q,,0,10,1,1,1Gi,,,,,yes", "w.csv:2: gang: expected true or false, found 'yes'"},
      {"w,BatchJob,t,q,,0,10,1,1,1Gi,,,,", "w.csv:2: expected 15 columns, found 14"},
      {"\"w,BatchJob,t,q,,0,10,1,1,1Gi,,,,,", "w.csv:2: unterminated quoted field"},
  };
  for (const auto& [row, expected] : cases) {
    SCOPED_TRACE(row);
    const Status status = CsvWorkloadError(row);
    if (std::string_view(expected).empty()) {
      EXPECT_TRUE(status.ok()) << status.ToString();
    } else {
      ASSERT_FALSE(status.ok());
      EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
      EXPECT_THAT(status.message(), HasSubstr(expected));
    }
  }
}

TEST(GenericTraceCsv, CollectsEveryProblem) {
  const std::string nodes = std::string(kNodesHeader) + std::string(kGpuNode) +
                            "g1,c,p,,64,256Gi,\n"          // duplicate
                            "g2,c,p,zone,0,256Gi,tpu:google:v5:4\n";  // bad label, cpu, device
  const std::string workloads = std::string(kWorkloadsHeader) +
                                "w,BatchJob,t,q,,0,10,1,1,1Gi,,,,,\n"
                                "w,BatchJob,t,q,,0,10,1,1,1Gi,,,,,\n";
  auto trace = ParseGenericTraceCsv(nodes, "n.csv", workloads, "w.csv");
  ASSERT_FALSE(trace.ok());
  const std::string m = trace.status().message();
  EXPECT_THAT(m, HasSubstr("n.csv:3: name: duplicate node 'g1' (first on line 2)"));
  EXPECT_THAT(m, HasSubstr("n.csv:4: labels: invalid label 'zone': expected KEY=VALUE"));
  EXPECT_THAT(m, HasSubstr("n.csv:4: cpu: '0' must be positive"));
  EXPECT_THAT(m, HasSubstr("n.csv:4: devices: invalid device spec 'tpu:google:v5:4': kind must be gpu or npu"));
  EXPECT_THAT(m, HasSubstr("w.csv:3: name: duplicate workload 'w' (first on line 2)"));
}

TEST(GenericTraceCsv, HeaderProblems) {
  auto unknown = ParseGenericTraceCsv("name,cpu,memory,gpus\n", "n.csv", kWorkloadsHeader, "w.csv");
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(), HasSubstr("n.csv:1: gpus: unknown column"));
  auto twice = ParseGenericTraceCsv(kNodesHeader, "n.csv", "name,kind,submit,kind\n", "w.csv");
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(twice.status().message(), HasSubstr("w.csv:1: kind: column given twice"));
  auto empty = ParseGenericTraceCsv("# only a comment\n", "n.csv", kWorkloadsHeader, "w.csv");
  ASSERT_FALSE(empty.ok());
  EXPECT_THAT(empty.status().message(), HasSubstr("n.csv:1: empty file: expected a header row"));
  // Columns in any order, optional ones left out.
  auto minimal = ParseGenericTraceCsv("memory,cpu,name\n1Gi,1,n\n", "n.csv", "submit,kind,name\n5,BatchJob,w\n", "w.csv");
  ASSERT_TRUE(minimal.ok()) << minimal.status().ToString();
  EXPECT_EQ(minimal->nodes[0].cluster, "default");
  EXPECT_EQ(minimal->workloads[0].submit_s, 5);
  EXPECT_EQ(minimal->workloads[0].queue, "default");
  EXPECT_EQ(minimal->workloads[0].replicas, 1);
}

TEST(GenericTraceYaml, ErrorsNameFileLineAndPath) {
  const std::string text =
      "nodes:\n"
      "  - name: n1\n"
      "    cpu: 8\n"
      "    memory: 32Gi\n"
      "    devices: [\"gpu:nvidia:T4:2\"]\n"
      "    colour: red\n"
      "  - name: n2\n"
      "    memory: 32Gi\n"
      "workloads:\n"
      "  - name: w1\n"
      "    kind: Experiment\n"
      "    submit: 10\n"
      "    accelerators: {flavor: \"gpu/*\", count: 1, share: 2000}\n"
      "  - name: w2\n"
      "    kind: BatchJob\n"
      "    submit: 10\n"
      "    accelerators: {flavor: \"gpu/*\", size: 1}\n"
      "  - name: w3\n"
      "    kind: BatchJob\n"
      "    submit: [1, 2]\n";
  auto trace = ParseGenericTraceYaml(text, "t.yaml");
  ASSERT_FALSE(trace.ok());
  const std::string m = trace.status().message();
  EXPECT_THAT(m, HasSubstr("t.yaml:6: nodes[0].colour: unknown field"));
  EXPECT_THAT(m, HasSubstr("t.yaml:7: nodes[1].cpu: required quantity is missing"));
  EXPECT_THAT(m, HasSubstr("t.yaml:13: workloads[0].accelerators.share: 2000 is out of range (1..1000)"));
  EXPECT_THAT(m, HasSubstr("t.yaml:17: workloads[1].accelerators.size: unknown field"));
  EXPECT_THAT(m, HasSubstr("t.yaml:20: workloads[2].submit: expected a scalar"));
  EXPECT_THAT(m, Not(HasSubstr("submit: required")));  // reported once, as not a scalar
}

// Spread, anti-affinity and extended resources (issue 24) read the same from both forms.
TEST(GenericTracePlacement, YamlAndCsvReadSpreadAntiAffinityAndExtended) {
  auto yaml = ParseGenericTraceYaml(
      "nodes:\n"
      "  - {name: n1, cpu: 8, memory: 32Gi, labels: {zone: a, rack: r1}, extended: {rdma/hca: 4, ephemeral-storage: 2Ti}}\n"
      "workloads:\n"
      "  - {name: a, kind: InferenceService, submit: 0, spread: [{topologyKey: zone, maxSkew: 1}, {topologyKey: rack, maxSkew: 2}],\n"
      "     antiAffinity: [b], extended: {rdma/hca: 1, ephemeral-storage: 100Gi}}\n"
      "  - {name: b, kind: BatchJob, submit: 0, spread: [{topologyKey: node}], antiAffinity: [{service: a}]}\n",
      "t.yaml");
  ASSERT_TRUE(yaml.ok()) << yaml.status().ToString();
  auto csv = ParseGenericTraceCsv("name,cpu,memory,labels,extended\n"
                                  "n1,8,32Gi,\"zone=a;rack=r1\",\"rdma/hca=4;ephemeral-storage=2Ti\"\n",
                                  "nodes.csv",
                                  "name,kind,submit,spread,antiAffinity,extended\n"
                                  "a,InferenceService,0,zone:1;rack:2,b,\"rdma/hca=1;ephemeral-storage=100Gi\"\n"
                                  "b,BatchJob,0,node,a,\n",
                                  "workloads.csv");
  ASSERT_TRUE(csv.ok()) << csv.status().ToString();
  EXPECT_EQ(yaml->nodes, csv->nodes);
  EXPECT_EQ(yaml->workloads, csv->workloads);
  EXPECT_EQ(yaml->nodes[0].extended, (std::map<std::string, int64_t>{{"ephemeral-storage", int64_t{2} << 40}, {"rdma/hca", 4}}));
  const GenericTraceWorkload& a = yaml->workloads[0];
  ASSERT_EQ(a.spread.size(), 2u);
  EXPECT_EQ(a.spread[0], (SpreadConstraint{"zone", 1}));
  EXPECT_EQ(a.spread[1], (SpreadConstraint{"rack", 2}));
  EXPECT_EQ(a.anti_affinity, std::vector<std::string>{"b"});
  EXPECT_EQ(a.extended, (std::map<std::string, int64_t>{{"ephemeral-storage", int64_t{100} << 30}, {"rdma/hca", 1}}));
  EXPECT_EQ(yaml->workloads[1].spread, (std::vector<SpreadConstraint>{SpreadConstraint{"node", 1}}));  // maxSkew 1 by default
  EXPECT_EQ(yaml->workloads[1].anti_affinity, std::vector<std::string>{"a"});
}

TEST(GenericTracePlacement, CsvErrorsUseTheSpecRules) {
  auto csv = ParseGenericTraceCsv("name,cpu,memory,labels,extended\n"
                                  "n1,8,32Gi,zone=a,rdma/hca=4\n"
                                  "n2,8,32Gi,zone=b,RDMA=1\n"
                                  "n3,8,32Gi,zone=b,rdma/hca=-1\n",
                                  "nodes.csv",
                                  "name,kind,submit,spread,antiAffinity,extended\n"
                                  "a,BatchJob,0,zone:0,b,rdma/hca=0\n"
                                  "b,BatchJob,0,zone:1;zone:2,Bad Name,gpu/x=1\n"
                                  "c,BatchJob,0,zonee:1,nobody,licence=1\n"
                                  "d,BatchJob,0,:1,,rdma/hca=1.5\n",
                                  "workloads.csv");
  ASSERT_FALSE(csv.ok());
  const std::string m = csv.status().message();
  EXPECT_THAT(m, HasSubstr("nodes.csv:3: extended: invalid resource name 'RDMA'"));
  EXPECT_THAT(m, HasSubstr("nodes.csv:4: extended: rdma/hca: amount '-1' is negative"));
  EXPECT_THAT(m, HasSubstr("workloads.csv:2: spread: maxSkew of 'zone' must be a whole number 1..100000, found '0'"));
  EXPECT_THAT(m, HasSubstr("workloads.csv:2: extended: rdma/hca: must be positive, got 0"));
  EXPECT_THAT(m, HasSubstr("workloads.csv:3: spread: 'zone' is spread over twice; keep one entry"));
  EXPECT_THAT(m, HasSubstr("workloads.csv:3: antiAffinity: invalid workload name 'Bad Name'"));
  EXPECT_THAT(m, HasSubstr("workloads.csv:3: extended: invalid resource name 'gpu/x': a device flavor"));
  EXPECT_THAT(m, HasSubstr("workloads.csv:4: spread: no node in the trace has label 'zonee'"));
  EXPECT_THAT(m, HasSubstr("workloads.csv:4: extended: no node in the trace declares 'licence'"));
  EXPECT_THAT(m, HasSubstr("workloads.csv:4: antiAffinity: 'nobody' names no workload in the trace"));
  EXPECT_THAT(m, HasSubstr("workloads.csv:5: spread: expected a node label key (zone, rack, abacus.io/nvlink-domain) or node"));
  EXPECT_THAT(m, HasSubstr("workloads.csv:5: extended: rdma/hca: amount '1.5' is not a whole number"));
}

TEST(GenericTracePlacement, YamlErrorsNameLineAndPath) {
  auto yaml = ParseGenericTraceYaml(
      "nodes:\n"
      "  - {name: n1, cpu: 8, memory: 32Gi, labels: {zone: a}, extended: [rdma]}\n"
      "workloads:\n"
      "  - name: a\n"
      "    kind: BatchJob\n"
      "    submit: 0\n"
      "    spread:\n"
      "      - {topologyKey: zone, skew: 1}\n"
      "      - zone\n"
      "    antiAffinity: a\n"
      "    extended: {rdma/hca: [1]}\n",
      "t.yaml");
  ASSERT_FALSE(yaml.ok());
  const std::string m = yaml.status().message();
  EXPECT_THAT(m, HasSubstr("t.yaml:2: nodes[0].extended: expected a map of resource amounts (rdma/hca: 1)"));
  EXPECT_THAT(m, HasSubstr("t.yaml:8: workloads[0].spread[0].skew: unknown field (expected topologyKey or maxSkew)"));
  EXPECT_THAT(m, HasSubstr("t.yaml:9: workloads[0].spread[1]: expected {topologyKey, maxSkew}"));
  EXPECT_THAT(m, HasSubstr("t.yaml:10: workloads[0].antiAffinity: expected a list of workload names"));
  EXPECT_THAT(m, HasSubstr("t.yaml:11: workloads[0].extended.rdma/hca: expected a scalar value"));
}

TEST(GenericTraceYaml, SyntaxAndShapeErrors) {
  auto syntax = ParseGenericTraceYaml("nodes: [\n", "t.yaml");
  ASSERT_FALSE(syntax.ok());
  EXPECT_THAT(syntax.status().message(), HasSubstr("t.yaml:"));
  auto list = ParseGenericTraceYaml("- a\n- b\n", "t.yaml");
  ASSERT_FALSE(list.ok());
  EXPECT_THAT(list.status().message(), HasSubstr("expected a map with 'nodes' and 'workloads'"));
  auto missing = ParseGenericTraceYaml("nodes: []\n", "t.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("t.yaml:1: workloads: required list is missing"));
  auto extra = ParseGenericTraceYaml("nodes: []\nworkloads: []\njobs: []\n", "t.yaml");
  ASSERT_FALSE(extra.ok());
  EXPECT_THAT(extra.status().message(), HasSubstr("t.yaml:3: jobs: unknown field"));
  auto labels = ParseGenericTraceYaml("nodes:\n  - {name: n, cpu: 1, memory: 1Gi, labels: [a]}\nworkloads: []\n", "t.yaml");
  ASSERT_FALSE(labels.ok());
  EXPECT_THAT(labels.status().message(), HasSubstr("nodes[0].labels: expected a map of label values"));
  auto empty_lists = ParseGenericTraceYaml("nodes: []\nworkloads: []\n", "t.yaml");
  ASSERT_TRUE(empty_lists.ok()) << empty_lists.status().ToString();
}

}  // namespace
}  // namespace abacus::sim
