#include "govern/admission.h"

#include <gtest/gtest.h>

#include "workload/documents.h"
#include "workload/workload_codec.h"

namespace abacus::govern {
namespace {

constexpr char kDigest[] = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

// A TrainingJob of tenant nlp: `extra_spec` lines are added under spec (two-space indent).
Workload Job(const std::string& image, const std::string& extra_spec = "", const std::string& priority = "training",
             int replicas = 1) {
  std::string yaml =
      "kind: TrainingJob\nname: ft\nproject: nlp/llm\nqueue: nlp-train\npriorityClass: " + priority +
      "\nspec:\n" + (image.empty() ? "  command: [python3]\n" : "  image: " + image + "\n") + extra_spec +
      "  taskGroups:\n    - name: worker\n      replicas: " + std::to_string(replicas) +
      "\n      resources: {cpu: 8, memory: 32Gi, accelerators: {flavor: gpu/nvidia/A100, count: 4}}\n";
  auto w = WorkloadFromYaml(yaml, "w.yaml");
  EXPECT_TRUE(w.ok()) << w.status().ToString() << "\n" << yaml;
  return w.ok() ? *w : Workload{};
}

std::vector<AdmissionPolicy> Policies(const std::string& yaml) {
  auto parsed = ParseDocuments(yaml, "p.yaml");
  EXPECT_TRUE(parsed.diagnostics.empty()) << parsed.diagnostics.ToString();
  std::vector<AdmissionPolicy> out;
  for (const auto& d : parsed.governance) out.push_back(std::get<AdmissionPolicy>(d.object));
  return out;
}

std::string Denial(const Workload& w, const std::vector<AdmissionPolicy>& p, const std::string& tenant = "nlp") {
  auto r = EvaluateAdmission(w, tenant, p);
  if (r.ok()) return "admitted";
  EXPECT_EQ(r.status().code(), StatusCode::kPermissionDenied);
  return r.status().message();
}

const char kRegistries[] =
    "kind: AdmissionPolicy\nname: nlp-default\ntenants: [nlp]\nspec:\n"
    "  images: {allowedRegistries: [registry.local], requireDigestFor: [production]}\n";

TEST(ImageRefTest, SplitsRegistryRepositoryTagAndDigest) {
  auto r = ParseImageRef("registry.local:5000/nlp/llama:1.4@" + std::string(kDigest));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->registry, "registry.local:5000");
  EXPECT_EQ(r->repository, "nlp/llama");
  EXPECT_EQ(r->tag, "1.4");
  EXPECT_EQ(r->digest, kDigest);
  EXPECT_EQ(ParseImageRef("ubuntu:22.04")->registry, "docker.io");
  EXPECT_EQ(ParseImageRef("library/ubuntu")->registry, "docker.io");
  EXPECT_EQ(ParseImageRef("localhost/x")->registry, "localhost");
  EXPECT_EQ(ParseImageRef("Registry.Local/x")->registry, "registry.local");
  EXPECT_FALSE(ParseImageRef("").ok());
  EXPECT_FALSE(ParseImageRef("x@sha256:abc").ok());
  EXPECT_FALSE(ParseImageRef("x@md5:0123456789abcdef0123456789abcdef").ok());
  EXPECT_FALSE(ParseImageRef("registry.local/").ok());
  EXPECT_FALSE(ParseImageRef("registry.local/UPPER").ok());
  EXPECT_FALSE(ParseImageRef("x:").ok());
}

TEST(AdmissionTest, AllowedRegistryAcceptsAndOthersAreRefusedNamingTheRule) {
  auto p = Policies(kRegistries);
  EXPECT_EQ(Denial(Job("registry.local/nlp/llama:1.4"), p), "admitted");
  EXPECT_EQ(Denial(Job("docker.io/library/ubuntu:22.04"), p),
            "policy nlp-default: image registry docker.io is not allowed for tenant nlp (allowed: registry.local)");
  EXPECT_EQ(Denial(Job("ubuntu:22.04"), p),
            "policy nlp-default: image registry docker.io is not allowed for tenant nlp (allowed: registry.local)");
  // A policy of another tenant does not apply.
  EXPECT_EQ(Denial(Job("ubuntu:22.04"), p, "vision"), "admitted");
  EXPECT_NE(Denial(Job("registry.local/Bad"), p).find("invalid repository"), std::string::npos);
}

TEST(AdmissionTest, ProductionPriorityNeedsADigest) {
  auto p = Policies(kRegistries);
  EXPECT_EQ(Denial(Job("registry.local/nlp/serve:2", "", "production"), p),
            "policy nlp-default: priority class production requires an image pinned by digest (image@sha256:…), got "
            "'registry.local/nlp/serve:2'");
  EXPECT_EQ(Denial(Job("registry.local/nlp/serve:2@" + std::string(kDigest), "", "production"), p), "admitted");
  EXPECT_EQ(Denial(Job("registry.local/nlp/serve:2", "", "training"), p), "admitted");
  EXPECT_NE(Denial(Job("", "", "production"), p).find("spec.image is empty"), std::string::npos);
}

TEST(AdmissionTest, RequireImageRefusesPlainProcesses) {
  auto p = Policies("kind: AdmissionPolicy\nname: images-only\nspec:\n  images: {requireImage: true}\n");
  EXPECT_EQ(Denial(Job(""), p),
            "policy images-only: workloads of tenant nlp must run an image (spec.image is empty)");
  EXPECT_EQ(Denial(Job("anything/at:all"), p), "admitted");
  EXPECT_EQ(Denial(Job(""), {}), "admitted");  // no policy: no rule
}

TEST(AdmissionTest, MountsMustLieUnderAnAllowedPrefixWithTheRightAccess) {
  auto p = Policies(
      "kind: AdmissionPolicy\nname: data\ntenants: [nlp]\nspec:\n  mounts:\n"
      "    - {pathPrefix: /data/nlp, access: read-only}\n"
      "    - {pathPrefix: /scratch/nlp, access: read-write}\n");
  auto mount = [](const std::string& path, bool ro) {
    return "  mounts:\n    - {path: " + path + ", readOnly: " + (ro ? "true" : "false") + "}\n";
  };
  EXPECT_EQ(Denial(Job("r/x", mount("/data/nlp/corpus", true)), p), "admitted");
  EXPECT_EQ(Denial(Job("r/x", mount("/data/nlp", true)), p), "admitted");
  EXPECT_EQ(Denial(Job("r/x", mount("/scratch/nlp/run1", false)), p), "admitted");
  EXPECT_EQ(Denial(Job("r/x", mount("/data/nlp/corpus", false)), p),
            "policy data: mount /data/nlp/corpus may only be read-only for tenant nlp (/data/nlp is read-only); set "
            "readOnly: true");
  EXPECT_EQ(Denial(Job("r/x", mount("/data/nlp2", true)), p),
            "policy data: mount /data/nlp2 is not allowed for tenant nlp (allowed: /data/nlp (read-only), "
            "/scratch/nlp (read-write))");
  EXPECT_NE(Denial(Job("r/x", mount("/etc", true)), p).find("mount /etc is not allowed"), std::string::npos);
  auto none = Policies("kind: AdmissionPolicy\nname: no-mounts\nspec:\n  mounts: []\n");
  EXPECT_EQ(Denial(Job("r/x", mount("/data", true)), none),
            "policy no-mounts: mount /data is not allowed for tenant nlp (allowed: none)");
  EXPECT_EQ(Denial(Job("r/x"), none), "admitted");
}

TEST(AdmissionTest, MaximumResourcesPerWorkload) {
  auto p = Policies("kind: AdmissionPolicy\nname: caps\nspec:\n  maxResources: {cpu: 32, memory: 128Gi, devices: 16}\n");
  EXPECT_EQ(Denial(Job("r/x", "", "training", 4), p), "admitted");  // 32 cpu, 128Gi, 16 devices
  EXPECT_EQ(Denial(Job("r/x", "", "training", 5), p),
            "policy caps: workload needs cpu 40 in all, above the maximum 32");
  auto gpus = Policies("kind: AdmissionPolicy\nname: gpus\nspec:\n  maxResources: {devices: 6}\n");
  EXPECT_EQ(Denial(Job("r/x", "", "training", 2), gpus),
            "policy gpus: workload needs 8 devices in all, above the maximum 6");
  auto mem = Policies("kind: AdmissionPolicy\nname: mem\nspec:\n  maxResources: {memory: 64Gi}\n");
  EXPECT_EQ(Denial(Job("r/x", "", "training", 3), mem),
            "policy mem: workload needs memory 96Gi in all, above the maximum 64Gi");
}

TEST(AdmissionTest, FootprintCountsServiceMaxReplicasBatchParallelismAndShares) {
  auto svc = WorkloadFromYaml(
      "kind: InferenceService\nname: s\nproject: nlp/llm\nqueue: q\nspec:\n  image: r/x\n"
      "  replicas: 2\n  minReplicas: 1\n  maxReplicas: 5\n  taskGroups:\n    - name: server\n"
      "      resources: {cpu: 2, memory: 1Gi, accelerators: {flavor: gpu/*, count: 1, share: 250}}\n");
  ASSERT_TRUE(svc.ok()) << svc.status().ToString();
  WorkloadFootprint f = FootprintOf(*svc);
  EXPECT_EQ(f.cpu_milli, 10'000);
  EXPECT_EQ(f.memory_bytes, 5LL << 30);
  EXPECT_EQ(f.device_milli, 1250);
  auto batch = WorkloadFromYaml(
      "kind: BatchJob\nname: b\nproject: nlp/llm\nqueue: q\nspec:\n  command: [x]\n  tasks: 100\n"
      "  parallelism: 10\n  taskGroups:\n    - name: t\n      resources: {cpu: 1, memory: 1Gi}\n");
  ASSERT_TRUE(batch.ok()) << batch.status().ToString();
  EXPECT_EQ(FootprintOf(*batch).cpu_milli, 10'000);
}

TEST(AdmissionTest, PoolsConfineTheTenantAndIntersectAcrossPolicies) {
  auto p = Policies(
      "kind: AdmissionPolicy\nname: nlp-pools\ntenants: [nlp]\nspec:\n  pools: [train-a100, infer-a10]\n"
      "---\nkind: AdmissionPolicy\nname: global\nspec:\n  pools: [train-a100, test]\n  network: internet\n"
      "---\nkind: AdmissionPolicy\nname: nlp-net\ntenants: [nlp]\nspec:\n  network: internal\n");
  auto ok = EvaluateAdmission(Job("r/x"), "nlp", p);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->pools, std::vector<std::string>{"train-a100"});
  EXPECT_EQ(ok->network, NetworkClass::kInternal);
  EXPECT_EQ(ok->policies, (std::vector<std::string>{"nlp-pools", "global", "nlp-net"}));

  Workload selects = Job("r/x");
  selects.spec.task_groups[0].node_selector[std::string(kPoolLabel)] = "experiments";
  EXPECT_EQ(Denial(selects, p),
            "policy nlp-pools: pool experiments is not allowed for tenant nlp (allowed: train-a100, infer-a10)");
  selects.spec.task_groups[0].node_selector[std::string(kPoolLabel)] = "infer-a10";
  EXPECT_EQ(Denial(selects, p), "policy global: pool infer-a10 is not allowed for tenant nlp (allowed: train-a100, test)");

  auto disjoint = Policies(
      "kind: AdmissionPolicy\nname: a\nspec:\n  pools: [x]\n---\nkind: AdmissionPolicy\nname: b\nspec:\n  pools: [y]\n");
  EXPECT_EQ(Denial(Job("r/x"), disjoint), "policy b: its pools (y) share none with policy a (x)");

  auto vision = EvaluateAdmission(Job("r/x"), "vision", p);
  ASSERT_TRUE(vision.ok());
  EXPECT_EQ(vision->pools, (std::vector<std::string>{"train-a100", "test"}));
  EXPECT_EQ(vision->network, NetworkClass::kInternet);
  EXPECT_FALSE(EvaluateAdmission(Job("r/x"), "other", {}).value().network.has_value());
}

TEST(AdmissionTest, InferenceReservationPoolIsChecked) {
  auto svc = WorkloadFromYaml(
      "kind: InferenceService\nname: s\nproject: nlp/llm\nqueue: q\nspec:\n  image: r/x\n"
      "  reservation: {reserved: true, pool: infer-h100}\n  taskGroups:\n    - name: server\n"
      "      resources: {cpu: 2, memory: 1Gi}\n");
  ASSERT_TRUE(svc.ok()) << svc.status().ToString();
  auto p = Policies("kind: AdmissionPolicy\nname: pools\nspec:\n  pools: [infer-a10]\n");
  EXPECT_EQ(Denial(*svc, p), "policy pools: pool infer-h100 is not allowed for tenant nlp (allowed: infer-a10)");
}

// The probe of 2026-12-07: any member could name system-critical (non-preemptible) and "an
// admin cannot even forbid it". spec.priorityClasses is the tenant's allow-list; it reads and
// writes back as it was given.
TEST(AdmissionTest, PriorityClassesAllowedForATenant) {
  const std::string yaml =
      "kind: AdmissionPolicy\nname: nlp-classes\ntenants: [nlp]\nspec:\n  priorityClasses: [training, experiment]\n";
  auto policies = Policies(yaml);
  ASSERT_EQ(policies.size(), 1u);
  EXPECT_EQ(Denial(Job("", "", "training"), policies), "admitted");
  EXPECT_EQ(Denial(Job("", "", "system-critical"), policies),
            "policy nlp-classes: priority class system-critical is not allowed for tenant nlp (allowed: "
            "training, experiment)");
  EXPECT_EQ(Denial(Job("", "", "system-critical"), policies, "vision"), "admitted");  // another tenant
  auto bad = ParseDocuments("kind: AdmissionPolicy\nname: x\nspec:\n  priorityClasses: [Not A Name]\n", "p.yaml");
  EXPECT_FALSE(bad.diagnostics.empty());
}

TEST(AdmissionTest, FirstFailingPolicyIsNamed) {
  auto p = Policies(std::string(kRegistries) +
                    "---\nkind: AdmissionPolicy\nname: caps\nspec:\n  maxResources: {cpu: 1}\n");
  EXPECT_NE(Denial(Job("ubuntu"), p).find("policy nlp-default:"), std::string::npos);
  EXPECT_NE(Denial(Job("registry.local/x"), p).find("policy caps:"), std::string::npos);
}

TEST(AdmissionTest, SecretsRuleNamesTheSecretAndTheQueue) {
  const std::string refs =
      "  env:\n    - {name: DB_PASSWORD, secretRef: {secret: db-creds, key: password}}\n"
      "  envFrom: [{secret: hf-token}]\n  secretMounts: [{secret: aws-root, path: aws}]\n";
  Workload w = Job("registry.local/x:1", refs);
  ASSERT_EQ(w.spec.SecretNames(), (std::vector<std::string>{"aws-root", "db-creds", "hf-token"}));
  const std::string policy = "kind: AdmissionPolicy\nname: p\ntenants: [nlp]\nspec:\n  secrets:\n";
  EXPECT_EQ(Denial(w, Policies(policy + "    allowed: [db-creds, \"hf-*\"]\n")),
            "policy p: rule secrets.allowed: secret aws-root may not be referenced by work of queue nlp-train "
            "(allowed: db-creds, hf-*)");
  EXPECT_EQ(Denial(w, Policies(policy + "    allowed: [db-creds, \"hf-*\", aws-root]\n")), "admitted");
  // Another queue's rule does not cover this work; [] forbids every secret of the queues it covers.
  EXPECT_EQ(Denial(w, Policies(policy + "    queues: [other]\n    allowed: []\n")), "admitted");
  EXPECT_NE(Denial(w, Policies(policy + "    queues: [nlp-train]\n    allowed: []\n")).find("allowed: none"),
            std::string::npos);
  EXPECT_EQ(Denial(Job("registry.local/x:1"), Policies(policy + "    allowed: []\n")), "admitted");
}

}  // namespace
}  // namespace abacus::govern
