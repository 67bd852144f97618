#include <gtest/gtest.h>

#include "workload/documents.h"
#include "workload/workload_codec.h"

namespace abacus {
namespace {

// The first lines of a valid TrainingJob; rows append spec fields from line 7 on.
constexpr char kHead[] = R"(kind: TrainingJob
name: t
project: a/b
queue: q
spec:
  command: [x]
)";

std::string Problems(const std::string& text) {
  return ParseDocuments(text, "w.yaml").diagnostics.ToString();
}

struct MalformedRow {
  const char* what;
  std::string text;
  std::string expected;  // every diagnostic, one per line
};

TEST(WorkloadCodecTest, MalformedInputsReportExactMessagesAndLines) {
  const std::string group = "  taskGroups:\n    - name: w\n";  // lines 7-8
  const std::vector<MalformedRow> rows = {
      {"unknown top-level field", std::string(kHead) + group + "      resources: {cpu: 1, memory: 1Gi}\nowner: bob\n",
       "w.yaml:10: owner: unknown field 'owner'; allowed: kind, name, project, queue, priorityClass, labels, spec\n"},
      {"field of another kind",
       std::string(kHead) + group + "      resources: {cpu: 1, memory: 1Gi}\n  minReplicas: 2\n",
       "w.yaml:10: spec.minReplicas: unknown field 'minReplicas'; allowed: image, command, env, taskGroups, "
       "gang, maxQueueWait, mounts, envFrom, secretMounts, readOnlyRootFilesystem, checkpoint, restartPolicy, "
       "maxRuntime\n"},
      {"wrong type", std::string(kHead) + group + "      replicas: two\n      resources: {cpu: 1, memory: 1Gi}\n",
       "w.yaml:9: spec.taskGroups[0].replicas: expected an integer, got 'two'\n"},
      {"missing required field", "kind: TrainingJob\nname: t\nproject: a/b\nspec:\n  command: [x]\n"
                                 "  taskGroups: [{name: w, resources: {cpu: 1, memory: 1Gi}}]\n",
       "w.yaml:1: queue: required field is missing\n"},
      {"missing resources", std::string(kHead) + group,
       "w.yaml:8: spec.taskGroups[0].resources: required field is missing\n"},
      {"negative count",
       std::string(kHead) + group + "      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/*, count: -2}}\n",
       "w.yaml:9: spec.taskGroups[0].resources.accelerators.count: must be at least 1, got -2\n"},
      {"share above 1000",
       std::string(kHead) + group + "      resources:\n        cpu: 1\n        memory: 1Gi\n"
                                    "        accelerators: {flavor: gpu/*, share: 1500}\n",
       "w.yaml:12: spec.taskGroups[0].resources.accelerators.share: must be at most 1000, got 1500\n"},
      {"share with count 2",
       std::string(kHead) + group + "      resources:\n        cpu: 1\n        memory: 1Gi\n"
                                    "        accelerators:\n          flavor: gpu/*\n          count: 2\n"
                                    "          share: 500\n",
       "w.yaml:15: spec.taskGroups[0].resources.accelerators.share: share is allowed only with count 1 "
       "(count is 2)\n"},
      {"bad flavor pattern",
       std::string(kHead) + group + "      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: tpu/google/v5}}\n",
       "w.yaml:9: spec.taskGroups[0].resources.accelerators.flavor: invalid flavor pattern 'tpu/google/v5': "
       "bad segment 'tpu' (expected e.g. 'cpu', 'gpu/*', 'gpu/nvidia/*', 'gpu/nvidia/A100-80G')\n"},
      {"duplicate task group",
       std::string(kHead) + group + "      resources: {cpu: 1, memory: 1Gi}\n    - name: w\n"
                                    "      resources: {cpu: 1, memory: 1Gi}\n",
       "w.yaml:10: spec.taskGroups[1].name: duplicate task group name 'w' (first at spec.taskGroups[0])\n"},
      {"replicas below 1", std::string(kHead) + group + "      replicas: 0\n      resources: {cpu: 1, memory: 1Gi}\n",
       "w.yaml:9: spec.taskGroups[0].replicas: must be at least 1, got 0\n"},
      {"bad quantity", std::string(kHead) + group + "      resources: {cpu: 1, memory: 64GB}\n",
       "w.yaml:9: spec.taskGroups[0].resources.memory: invalid quantity '64GB': unknown suffix 'GB' "
       "(expected a number with an optional suffix: m, k, M, G, T, P, Ki, Mi, Gi, Ti, Pi)\n"},
      {"bad duration",
       std::string(kHead) + group + "      resources: {cpu: 1, memory: 1Gi}\n  maxRuntime: 3 days\n",
       "w.yaml:10: spec.maxRuntime: invalid duration '3 days': unknown unit at ' days' (expected e.g. "
       "90s, 30m, 1h30m, 72h, 2d)\n"},
      {"bad runtime constraint",
       std::string(kHead) + group + "      resources: {cpu: 1, memory: 1Gi}\n      runtime: [cuda=>12]\n",
       "w.yaml:10: spec.taskGroups[0].runtime[0]: invalid runtime constraint 'cuda=>12': bad operator "
       "(expected NAME OP VERSION such as cuda>=12.2; OP is one of >=, >, <=, <, ==, !=)\n"},
      {"unknown kind", "kind: TraningJob\nname: t\n",
       "w.yaml:1: kind: unknown kind 'TraningJob'; known kinds: TrainingJob, InferenceService, Experiment, "
       "Evaluation, BatchJob, Tenant, Project, Cohort, Queue, PriorityClass, Flavor, Pool, Cluster, Reservation, "
       "AdmissionPolicy, User\n"},
      {"reserved kind", "kind: PriceList\nname: p\n", "w.yaml:1: kind: kind PriceList is not supported yet\n"},
      {"task groups not a list", std::string(kHead) + "  taskGroups: {name: w}\n",
       "w.yaml:7: spec.taskGroups: expected a list, got a mapping\n"},
      {"bad topology", std::string(kHead) + group + "      resources: {cpu: 1, memory: 1Gi}\n      topology: same-rack\n",
       "w.yaml:10: spec.taskGroups[0].topology: unknown topology 'same-rack' (expected none, "
       "same-interconnect or same-numa)\n"},
      {"topology without accelerators",
       std::string(kHead) + group + "      resources: {cpu: 1, memory: 1Gi}\n      topology: same-numa\n",
       "w.yaml:10: spec.taskGroups[0].topology: topology same-numa needs accelerators\n"},
      {"bad checkpoint signal",
       std::string(kHead) + group + "      resources: {cpu: 1, memory: 1Gi}\n  checkpoint: {signal: SIGKILL}\n",
       "w.yaml:10: spec.checkpoint.signal: unknown signal 'SIGKILL' (expected SIGTERM, SIGINT, SIGUSR1, "
       "SIGUSR2, SIGHUP or SIGQUIT)\n"},
      {"min above max replicas",
       "kind: InferenceService\nname: s\nproject: a/b\nqueue: q\nspec:\n  command: [x]\n"
       "  taskGroups: [{name: s, resources: {cpu: 1, memory: 1Gi}}]\n  minReplicas: 3\n  maxReplicas: 2\n",
       "w.yaml:8: spec.minReplicas: minReplicas (3) exceeds maxReplicas (2)\n"},
      {"probe with two checks",
       "kind: InferenceService\nname: s\nproject: a/b\nqueue: q\nspec:\n  command: [x]\n"
       "  taskGroups: [{name: s, resources: {cpu: 1, memory: 1Gi}}]\n  probes:\n"
       "    readiness: {http: {port: 80}, tcp: {port: 80}}\n",
       "w.yaml:9: spec.probes.readiness: takes only one of http, tcp or exec\n"},
      {"canary percent and replicas",
       "kind: InferenceService\nname: s\nproject: a/b\nqueue: q\nspec:\n  command: [x]\n"
       "  taskGroups: [{name: s, resources: {cpu: 1, memory: 1Gi}}]\n  maxReplicas: 4\n"
       "  rollout: {version: '2', canaryPercent: 10, canaryReplicas: 1}\n",
       "w.yaml:9: spec.rollout.canaryReplicas: set canaryPercent or canaryReplicas, not both\n"},
      {"parallelism above tasks",
       "kind: BatchJob\nname: b\nproject: a/b\nqueue: q\nspec:\n  command: [x]\n"
       "  taskGroups: [{name: s, resources: {cpu: 1, memory: 1Gi}}]\n  tasks: 4\n  parallelism: 10\n",
       "w.yaml:9: spec.parallelism: parallelism (10) exceeds tasks (4)\n"},
      {"evaluation without model",
       "kind: Evaluation\nname: e\nproject: a/b\nqueue: q\nspec:\n  command: [x]\n"
       "  taskGroups: [{name: s, resources: {cpu: 1, memory: 1Gi}}]\n  modelVersion: '1'\n"
       "  dataset: d\n  resultsPath: /r\n",
       "w.yaml:6: spec.model: required field is missing\n"},
      {"experiment idle percent",
       "kind: Experiment\nname: x\nproject: a/b\nqueue: q\nspec:\n  command: [x]\n"
       "  taskGroups: [{name: s, resources: {cpu: 1, memory: 1Gi}}]\n  idle: {utilizationBelowPercent: 150}\n",
       "w.yaml:8: spec.idle.utilizationBelowPercent: must be at most 100, got 150\n"},
      {"toleration Exists with value",
       std::string(kHead) + group + "      resources: {cpu: 1, memory: 1Gi}\n"
                                    "      tolerations: [{key: k, operator: Exists, value: v}]\n",
       "w.yaml:10: spec.taskGroups[0].tolerations[0].value: a toleration with operator Exists takes no value\n"},
      {"bad project", "kind: BatchJob\nname: b\nproject: nlp\nqueue: q\nspec:\n  command: [x]\n"
                      "  taskGroups: [{name: s, resources: {cpu: 1, memory: 1Gi}}]\n  tasks: 1\n",
       "w.yaml:3: project: invalid project 'nlp': expected TENANT/PROJECT such as nlp/llm\n"},
      {"command missing without image",
       "kind: BatchJob\nname: b\nproject: a/b\nqueue: q\nspec:\n"
       "  taskGroups: [{name: s, resources: {cpu: 1, memory: 1Gi}}]\n  tasks: 1\n",
       "w.yaml:6: spec.command: required field is missing (without an image the command is what runs)\n"},
      {"YAML syntax error", "kind: TrainingJob\nname: [unclosed\n",
       "w.yaml:3: YAML syntax error: end of sequence flow not found\n"},
      // Issue 21: quantities have upper bounds, duplicate keys are errors, nesting is bounded.
      {"cpu past its limit", std::string(kHead) + group + "      resources: {cpu: 9223372036854775807m, memory: 1Gi}\n",
       "w.yaml:9: spec.taskGroups[0].resources.cpu: must be at most 10M (the limit for cpu), got "
       "9223372036854775807m\n"},
      {"memory past its limit", std::string(kHead) + group + "      resources: {cpu: 1, memory: 2Pi}\n",
       "w.yaml:9: spec.taskGroups[0].resources.memory: must be at most 1Pi (the limit for memory), got 2Pi\n"},
      {"device memory past its limit",
       std::string(kHead) + group + "      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: gpu/*, memory: 8000Ti}}\n",
       "w.yaml:9: spec.taskGroups[0].resources.accelerators.memory: must be at most 1Pi (the limit for memory), "
       "got 8000Ti\n"},
      {"duplicate key", std::string(kHead) + group + "      resources: {cpu: 1, memory: 1Gi}\nname: u\n",
       "w.yaml:10: name: duplicate key 'name'; first at line 2\n"},
      {"duplicate label", std::string(kHead) + group + "      resources: {cpu: 1, memory: 1Gi}\nlabels:\n  a: x\n  a: y\n",
       "w.yaml:12: labels.a: duplicate key 'a'; first at line 11\n"},
      // Past 32 keys a mapping's keys are hashed instead of scanned: the same error.
      {"duplicate label among many",
       [&] {
         std::string labels;
         for (int i = 0; i < 40; ++i) labels += "  k" + std::to_string(i) + ": v\n";
         return std::string(kHead) + group + "      resources: {cpu: 1, memory: 1Gi}\nlabels:\n" + labels + "  k7: again\n";
       }(),
       "w.yaml:51: labels.k7: duplicate key 'k7'; first at line 18\n"},
      {"nesting past the limit", std::string(kHead) + "  env: " + std::string(70, '[') + std::string(70, ']') + "\n",
       "w.yaml:7: nesting deeper than 64 levels (the limit)\n"},
  };
  ASSERT_GE(rows.size(), 15u);
  for (const auto& row : rows) {
    EXPECT_EQ(Problems(row.text), row.expected) << row.what << "\n" << row.text;
  }
}

// The CLI's apply skips its own parse of a file for which this is false (issue 21: a 50,000-project
// apply parsed the YAML twice); it must never be false for a file that holds a workload.
TEST(WorkloadCodecTest, TextMayNameWorkloadKindIsFalseOnlyWithoutAnyKindNameOrEscape) {
  EXPECT_FALSE(TextMayNameWorkloadKind("kind: Tenant\nname: t\n---\nkind: Project\nname: p\ntenant: t\n"));
  EXPECT_TRUE(TextMayNameWorkloadKind(kHead));
  for (const char* kind : {"TrainingJob", "InferenceService", "Experiment", "Evaluation", "BatchJob"}) {
    const std::string text = std::string("{kind: ") + kind + ", name: x}";
    EXPECT_TRUE(TextMayNameWorkloadKind(text)) << kind;
  }
  // An escape can spell a kind the text does not show: "\x54rainingJob" is TrainingJob.
  const std::string escaped = "kind: \"\\x54rainingJob\"\nname: t\nproject: a/b\nqueue: q\nspec:\n  command: [x]\n"
      "  taskGroups: [{name: w, resources: {cpu: 1, memory: 1Gi}}]\n";
  EXPECT_TRUE(TextMayNameWorkloadKind(escaped));
  ParsedDocuments parsed = ParseDocuments(escaped, "e.yaml");
  ASSERT_EQ(parsed.documents.size(), 1u) << parsed.diagnostics.ToString();
  EXPECT_NE(parsed.documents[0].workload(), nullptr);
}

TEST(WorkloadCodecTest, ReportsEveryProblemAtOnce) {
  std::string text = std::string(kHead) +
                     "  taskGroups:\n"
                     "    - name: w\n"
                     "      replicas: 0\n"
                     "      resources: {cpu: -1, memory: 1Gi, accelerators: {flavor: 'gpu/**', share: 0}}\n"
                     "  maxRuntime: soon\n"
                     "  colour: red\n";
  EXPECT_EQ(Problems(text),
            "w.yaml:12: spec.colour: unknown field 'colour'; allowed: image, command, env, taskGroups, gang, "
            "maxQueueWait, mounts, envFrom, secretMounts, readOnlyRootFilesystem, checkpoint, restartPolicy, maxRuntime\n"
            "w.yaml:9: spec.taskGroups[0].replicas: must be at least 1, got 0\n"
            "w.yaml:10: spec.taskGroups[0].resources.cpu: must be positive, got -1\n"
            "w.yaml:10: spec.taskGroups[0].resources.accelerators.flavor: invalid flavor pattern 'gpu/**': "
            "'*' may only end a segment (expected e.g. 'cpu', 'gpu/*', 'gpu/nvidia/*', 'gpu/nvidia/A100-80G')\n"
            "w.yaml:10: spec.taskGroups[0].resources.accelerators.share: must be at least 1, got 0\n"
            "w.yaml:11: spec.maxRuntime: invalid duration 'soon': expected a number at 'soon' (expected e.g. "
            "90s, 30m, 1h30m, 72h, 2d)\n");
}

TEST(WorkloadCodecTest, DefaultsDependOnKind) {
  auto parsed = ParseDocuments(
      "kind: TrainingJob\nname: t\nproject: a/b\nqueue: q\nspec:\n  command: [x]\n"
      "  taskGroups: [{name: w, resources: {cpu: 1, memory: 1Gi}}]\n---\n"
      "kind: InferenceService\nname: s\nproject: a/b\nqueue: q\nspec:\n  image: img\n"
      "  taskGroups: [{name: w, resources: {cpu: 1, memory: 1Gi}}]\n  maxReplicas: 3\n---\n"
      "kind: BatchJob\nname: b\nproject: a/b\nqueue: q\nspec:\n  command: [x]\n"
      "  taskGroups: [{name: w, resources: {cpu: 1, memory: 1Gi}}]\n  tasks: 7\n",
      "d.yaml");
  ASSERT_TRUE(parsed.diagnostics.empty()) << parsed.diagnostics.ToString();
  ASSERT_EQ(parsed.documents.size(), 3u);
  const Workload& t = *parsed.documents[0].workload();
  EXPECT_TRUE(t.spec.gang);
  EXPECT_EQ(t.priority_class, "training");
  EXPECT_EQ(t.training()->restart_policy.max_retries, 0);
  const Workload& s = *parsed.documents[1].workload();
  EXPECT_FALSE(s.spec.gang);
  EXPECT_EQ(s.priority_class, "production");
  EXPECT_EQ(s.inference()->min_replicas, 1);
  EXPECT_EQ(s.inference()->replicas, 1);
  EXPECT_EQ(s.inference()->max_replicas, 3);
  EXPECT_EQ(s.spec.task_groups[0].resources.accelerators, std::nullopt);
  const Workload& b = *parsed.documents[2].workload();
  EXPECT_EQ(b.batch()->parallelism, 7);
  EXPECT_EQ(b.TaskCount(), 7);
  EXPECT_EQ(parsed.documents[2].source.line, 18);
}

TEST(WorkloadCodecTest, JsonApiRoundTripsAndReportsFieldPaths) {
  auto w = WorkloadFromYaml(
      "kind: Experiment\nname: x\nproject: a/b\nqueue: q\nlabels: {model: m}\nspec:\n  command: [x]\n"
      "  env: {A: '1'}\n"
      "  taskGroups: [{name: s, resources: {cpu: 500m, memory: 1Gi, accelerators: {flavor: gpu/*, "
      "share: 250, memory: 10Gi}}}]\n  ttl: 1h30m\n"
      "  temporaryQuota: {resource: gpu/nvidia/T4, amount: 2, expires: 4h}\n");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  nlohmann::json j = ToJson(*w);
  EXPECT_EQ(j["spec"]["ttl"], "1h30m");
  EXPECT_EQ(j["spec"]["taskGroups"][0]["resources"]["accelerators"]["share"], 250);
  EXPECT_EQ(j["spec"]["taskGroups"][0]["resources"]["cpu"], "500m");
  auto back = WorkloadFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, *w);
  auto again = WorkloadFromYaml(ToYaml(*w));
  ASSERT_TRUE(again.ok()) << again.status().ToString() << ToYaml(*w);
  EXPECT_EQ(*again, *w);

  j["spec"]["taskGroups"][0]["replicas"] = -1;
  j["spec"]["bogus"] = true;
  auto bad = WorkloadFromJson(j);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "spec.bogus: unknown field 'bogus'; allowed: image, command, env, taskGroups, gang, "
            "maxQueueWait, mounts, envFrom, secretMounts, readOnlyRootFilesystem, ttl, idle, temporaryQuota\n"
            "spec.taskGroups[0].replicas: must be at least 1, got -1");
}

// Issue 24: a container's root filesystem is read-only on request; a plain process has none.
TEST(WorkloadCodecTest, ReadOnlyRootFilesystemRoundTripsAndNeedsAnImage) {
  const std::string spec = "kind: TrainingJob\nname: t\nproject: a/b\nqueue: q\nspec:\n";
  const std::string rest = "  readOnlyRootFilesystem: true\n  taskGroups: [{name: w, resources: {cpu: 1, memory: 1Gi}}]\n";
  auto w = WorkloadFromYaml(spec + "  image: busybox:1\n" + rest);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_TRUE(w->spec.read_only_root);
  EXPECT_EQ(ToJson(*w)["spec"]["readOnlyRootFilesystem"], true);
  auto back = WorkloadFromJson(ToJson(*w));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, *w);
  auto plain = WorkloadFromYaml(spec + "  image: busybox:1\n  taskGroups: [{name: w, resources: {cpu: 1, memory: 1Gi}}]\n");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->spec.read_only_root);
  EXPECT_FALSE(ToJson(*plain)["spec"].contains("readOnlyRootFilesystem"));
  EXPECT_EQ(Problems(spec + "  command: [x]\n" + rest),
            "w.yaml:7: spec.readOnlyRootFilesystem: needs an image (a plain process has no root filesystem of its "
            "own)\n");
}

TEST(WorkloadCodecTest, ReferencesAreCheckedAcrossDocuments) {
  const std::string org = R"(kind: Tenant
name: nlp
---
kind: Project
name: llm
tenant: nlp
---
kind: Cohort
name: research
---
kind: Queue
name: nlp-train
tenant: nlp
quotas:
  - {resource: gpu/nvidia/A100-80G, nominal: 8}
  - {resource: cpu, nominal: 64}
---
kind: Queue
name: vision-train
tenant: vision
cohort: research
quotas:
  - {resource: cpu, nominal: 64}
  - {resource: memory, nominal: 1Ti}
)";
  const std::string jobs = R"(kind: TrainingJob
name: a
project: nlp/llm
queue: nlp-train
priorityClass: best-effort
spec:
  command: [x]
  taskGroups:
    - name: w
      resources: {cpu: 1, memory: 1Gi, accelerators: {flavor: "npu/*", count: 1}}
---
kind: BatchJob
name: b
project: nlp/other
queue: vision-train
priorityClass: urgent
spec:
  command: [x]
  taskGroups: [{name: w, resources: {cpu: 1, memory: 1Gi}}]
  tasks: 1
---
kind: BatchJob
name: b
project: nlp/other
queue: ghost
spec:
  command: [x]
  taskGroups: [{name: w, resources: {cpu: 1, memory: 1Gi}}]
  tasks: 1
)";
  auto a = ParseDocuments(org, "org.yaml");
  auto b = ParseDocuments(jobs, "jobs.yaml");
  ASSERT_TRUE(a.diagnostics.empty()) << a.diagnostics.ToString();
  ASSERT_TRUE(b.diagnostics.empty()) << b.diagnostics.ToString();
  std::vector<Document> all = a.documents;
  all.insert(all.end(), b.documents.begin(), b.documents.end());
  Diagnostics diags;
  CheckDocuments(all, diags);
  EXPECT_EQ(diags.ToString(),
            "org.yaml:20: tenant: unknown tenant 'vision'\n"
            "jobs.yaml:5: priorityClass: priority class 'best-effort' runs only on borrowed capacity but "
            "queue 'nlp-train' is in no cohort\n"
            "jobs.yaml:4: queue: queue 'nlp-train' has no quota for memory\n"
            "jobs.yaml:10: spec.taskGroups[0].resources.accelerators.flavor: queue 'nlp-train' has no quota "
            "for a flavor matching 'npu/*'\n"
            "jobs.yaml:16: priorityClass: unknown priority class 'urgent'\n"
            "jobs.yaml:14: project: unknown project 'nlp/other'\n"
            "jobs.yaml:15: queue: queue 'vision-train' belongs to tenant 'vision', not to tenant 'nlp' of "
            "project nlp/other\n"
            "jobs.yaml:23: name: duplicate workload 'b' in project nlp/other (first defined at "
            "jobs.yaml:12)\n"
            "jobs.yaml:24: project: unknown project 'nlp/other'\n"
            "jobs.yaml:25: queue: unknown queue 'ghost'\n");
}

// Probe report §3: a submitter who may not see another tenant's queue or project is told
// exactly what a missing one gets, never the owner; one who sees both keeps the detail.
TEST(WorkloadCodecTest, AReferenceToAHiddenQueueOrProjectReadsAsAMissingOne) {
  const std::string org =
      "kind: Tenant\nname: t1\n---\nkind: Project\nname: p1\ntenant: t1\n---\nkind: Tenant\nname: t2\n---\n"
      "kind: Project\nname: p3\ntenant: t2\n---\nkind: Queue\nname: q1\ntenant: t1\nquotas:\n  - {resource: cpu, "
      "nominal: 8}\n  - {resource: memory, nominal: 8Gi}\n---\nkind: Queue\nname: q2\ntenant: t2\nquotas:\n  - "
      "{resource: gpu/nvidia/A100-80G, nominal: 4}\n";
  auto parsed = ParseDocuments(org, "org.yaml");
  ASSERT_TRUE(parsed.diagnostics.empty()) << parsed.diagnostics.ToString();
  TenancyConfig config;
  Diagnostics org_diags;
  AddToTenancyConfig(parsed.documents, config, org_diags);
  ASSERT_TRUE(org_diags.empty()) << org_diags.ToString();
  ReferenceVisible t1_only = [](std::string_view, const std::string&, const std::string& tenant) {
    return tenant == "t1";
  };
  // The diagnostics of a job in `project` on `queue`, `name` written NAME.
  auto check = [&](const std::string& project, const std::string& queue, const std::string& name,
                   const ReferenceVisible& visible) {
    auto job = ParseDocuments("kind: BatchJob\nname: j\nproject: " + project + "\nqueue: " + queue +
                                  "\nspec:\n  command: [x]\n  tasks: 1\n  taskGroups: [{name: w, resources: {cpu: 1, "
                                  "memory: 1Gi}}]\n",
                              "job.yaml");
    EXPECT_TRUE(job.diagnostics.empty()) << job.diagnostics.ToString();
    Diagnostics diags;
    CheckWorkloadReferences(*job.documents.at(0).workload(), job.documents[0].source, config, diags, visible);
    std::string text = diags.ToString();
    for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 4)) {
      text.replace(at, name.size(), "NAME");
    }
    EXPECT_EQ(text.find("belongs to tenant 't2'"), std::string::npos) << text;
    return text;
  };
  EXPECT_EQ(check("t1/p1", "q2", "q2", t1_only), "job.yaml:4: queue: unknown queue 'NAME'\n");
  EXPECT_EQ(check("t1/p1", "q2", "q2", t1_only), check("t1/p1", "ghost", "ghost", t1_only));
  EXPECT_EQ(check("t2/p3", "q1", "t2/p3", t1_only), check("t2/none", "q1", "t2/none", t1_only));
  EXPECT_EQ(check("t2/p3", "q2", "t2/p3", t1_only), check("t2/none", "q2", "t2/none", t1_only));
  // Seeing both (an admin; the server itself): the owner is named.
  Diagnostics all;
  auto job = ParseDocuments("kind: BatchJob\nname: j\nproject: t1/p1\nqueue: q2\nspec:\n  command: [x]\n  tasks: 1\n"
                            "  taskGroups: [{name: w, resources: {cpu: 1, memory: 1Gi}}]\n",
                            "job.yaml");
  CheckWorkloadReferences(*job.documents.at(0).workload(), job.documents[0].source, config, all);
  EXPECT_NE(all.ToString().find("belongs to tenant 't2'"), std::string::npos) << all.ToString();
}

}  // namespace
}  // namespace abacus

namespace abacus {
namespace {

// A task group's placement rules (issue 24): decoded, round-tripped, and every mistake named with
// file:line, field and what was expected.
TEST(WorkloadCodecTest, PlacementRulesRoundTripAndReportMistakes) {
  auto w = WorkloadFromYaml(
      "kind: InferenceService\nname: app-82\nproject: a/b\nqueue: q\nspec:\n  command: [x]\n  replicas: 4\n"
      "  taskGroups: [{name: s, resources: {cpu: 1, memory: 1Gi},\n"
      "    placement: {maxPerNode: 2, spread: [{topologyKey: zone, maxSkew: 1}, {topologyKey: node}],\n"
      "                antiAffinity: [{service: batch-etl}]}}]\n");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  const PlacementSpec& p = w->spec.task_groups[0].placement;
  EXPECT_EQ(p.max_per_node, 2);
  ASSERT_EQ(p.spread.size(), 2u);
  EXPECT_EQ(p.spread[0].topology_key, "zone");
  EXPECT_EQ(p.spread[1].max_skew, 1);
  EXPECT_EQ(p.anti_affinity, std::vector<std::string>{"batch-etl"});
  auto back = WorkloadFromJson(ToJson(*w));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, *w);

  const std::string group = "  taskGroups:\n    - name: w\n      resources: {cpu: 1, memory: 1Gi}\n";  // lines 7-9
  EXPECT_EQ(Problems(std::string(kHead) + group + "      placement: {maxPerNode: 0, color: red}\n"),
            "w.yaml:10: spec.taskGroups[0].placement.color: unknown field 'color'; allowed: maxPerNode, spread, antiAffinity\n"
            "w.yaml:10: spec.taskGroups[0].placement.maxPerNode: must be at least 1, got 0\n");
  EXPECT_EQ(Problems(std::string(kHead) + group + "      placement:\n        spread: [{maxSkew: 0}]\n"),
            "w.yaml:11: spec.taskGroups[0].placement.spread[0].topologyKey: required field is missing\n"
            "w.yaml:11: spec.taskGroups[0].placement.spread[0].maxSkew: must be at least 1, got 0\n");
  EXPECT_EQ(Problems(std::string(kHead) + group + "      placement:\n        antiAffinity: [{service: 'Bad Name'}]\n"),
            "w.yaml:11: spec.taskGroups[0].placement.antiAffinity[0].service: invalid name 'Bad Name': use 1-63 "
            "characters of a-z, 0-9, '-', '_' or '.', starting and ending with a letter or digit\n");
  // The rules the generic trace reader shares (SpreadKeyProblem, ParseExtendedRequest).
  EXPECT_EQ(Problems(std::string(kHead) + group + "      placement:\n        spread: [{topologyKey: zone}, {topologyKey: zone}]\n"),
            "w.yaml:11: spec.taskGroups[0].placement.spread[1].topologyKey: 'zone' is spread over twice; keep one entry\n");
  const std::string extended = "  taskGroups:\n    - name: w\n      resources: {cpu: 1, memory: 1Gi, extended: {rdma/hca: 0}}\n";
  EXPECT_EQ(Problems(std::string(kHead) + extended),
            "w.yaml:9: spec.taskGroups[0].resources.extended: rdma/hca: must be positive, got 0\n");
}

}  // namespace
}  // namespace abacus

namespace abacus {
namespace {

// Issue 24: autoscaling on what the gateway observes, and the drain before a replica stops.
TEST(WorkloadCodecTest, ServiceGatewayTargetsAndDrainSecondsDecodeWithDefaultsAndRoundTrip) {
  const std::string head =
      "kind: InferenceService\nname: s\nproject: a/b\nqueue: q\nspec:\n  image: img\n"
      "  taskGroups: [{name: w, resources: {cpu: 1, memory: 1Gi}}]\n  minReplicas: 1\n  maxReplicas: 6\n";
  auto w = WorkloadFromYaml(head + "  autoscaling: {minReplicas: 1, target: {requestsPerSecond: 50}}\n");
  ASSERT_FALSE(w.ok());  // minReplicas belongs to the spec
  w = WorkloadFromYaml(head + "  autoscaling: {target: {requestsPerSecond: 50}}\n");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  const InferenceSpec& s = *w->inference();
  EXPECT_EQ(s.autoscaling->metric, kRequestsPerSecond);
  EXPECT_EQ(s.autoscaling->target.ToString(), "50");
  EXPECT_EQ(s.autoscaling->stabilization_seconds, 60);  // the defaults
  EXPECT_EQ(s.autoscaling->cooldown_seconds, 300);
  EXPECT_EQ(s.drain_seconds, 5);
  nlohmann::json j = ToJson(*w);
  EXPECT_EQ(j["spec"]["autoscaling"]["target"]["requestsPerSecond"], "50");
  EXPECT_FALSE(j["spec"].contains("drainSeconds"));  // the default is not written
  EXPECT_EQ(*WorkloadFromJson(j), *w);

  w = WorkloadFromYaml(head + "  drainSeconds: 0\n  autoscaling: {target: {p99LatencyMs: 200}, cooldownSeconds: 0}\n");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_EQ(w->inference()->autoscaling->metric, kP99LatencyMs);
  EXPECT_EQ(w->inference()->drain_seconds, 0);
  EXPECT_EQ(*WorkloadFromYaml(ToYaml(*w)), *w);

  // Mistakes name the field.
  auto problem = [&](const std::string& extra) {
    auto r = WorkloadFromYaml(head + extra);
    return r.ok() ? std::string("accepted") : r.status().message();
  };
  EXPECT_NE(problem("  autoscaling: {target: {requestsPerSecond: 50, p99LatencyMs: 200}}\n")
                .find("spec.autoscaling.target: takes exactly one of requestsPerSecond or p99LatencyMs"),
            std::string::npos);
  EXPECT_NE(problem("  autoscaling: {target: {rps: 50}}\n").find("spec.autoscaling.target.rps: unknown field"),
            std::string::npos);
  EXPECT_NE(problem("  autoscaling: {target: {requestsPerSecond: 0}}\n").find("spec.autoscaling.target.requestsPerSecond"),
            std::string::npos);
  EXPECT_NE(problem("  autoscaling: {metric: qps, target: {requestsPerSecond: 5}}\n").find("spec.autoscaling.metric"),
            std::string::npos);
  EXPECT_NE(problem("  drainSeconds: 5000\n").find("spec.drainSeconds: must be at most 3600"), std::string::npos);
}

}  // namespace
}  // namespace abacus
