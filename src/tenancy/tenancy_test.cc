#include <gtest/gtest.h>

#include "tenancy/tenancy_codec.h"
#include "tenancy/tenancy_config.h"
#include "tenancy/yaml_json.h"

namespace abacus {
namespace {

using std::chrono::hours;

template <typename T, typename Decode>
std::optional<T> DecodeText(const std::string& text, Decode decode, Diagnostics* diags) {
  SpecContext ctx("t.yaml", diags);
  return decode(YAML::Load(text), ctx);
}

TEST(PriorityClassTest, DefaultsFollowTheDesign) {
  const auto& d = DefaultPriorityClasses();
  ASSERT_EQ(d.size(), 7u);
  std::vector<std::pair<std::string, int32_t>> expected = {
      {"system-critical", 1000}, {"production", 900}, {"high", 700},      {"training", 500},
      {"evaluation", 400},       {"experiment", 300}, {"best-effort", 100}};
  for (size_t i = 0; i < d.size(); ++i) {
    EXPECT_EQ(d[i].name, expected[i].first);
    EXPECT_EQ(d[i].value, expected[i].second);
  }
  EXPECT_FALSE(FindDefaultPriorityClass("system-critical")->preemptible);
  EXPECT_FALSE(FindDefaultPriorityClass("production")->preemptible);
  EXPECT_TRUE(FindDefaultPriorityClass("training")->preemptible);
  const PriorityClass* be = FindDefaultPriorityClass("best-effort");
  EXPECT_TRUE(be->preemptible);
  EXPECT_TRUE(be->borrowed_only);
  EXPECT_FALSE(be->can_preempt);
  EXPECT_EQ(FindDefaultPriorityClass("nope"), nullptr);
}

TEST(PriorityClassTest, AgingRaisesPriorityUpToTheCeiling) {
  const PriorityClass& t = *FindDefaultPriorityClass("training");  // 12h, +100, ceiling 700
  EXPECT_EQ(t.EffectivePriority(Duration(0)), 500);
  EXPECT_EQ(t.EffectivePriority(hours(11)), 500);
  EXPECT_EQ(t.EffectivePriority(hours(12)), 600);
  EXPECT_EQ(t.EffectivePriority(hours(25)), 700);
  EXPECT_EQ(t.EffectivePriority(hours(1000)), 700);
  EXPECT_EQ(FindDefaultPriorityClass("production")->EffectivePriority(hours(1000)), 900);
}

TEST(TenancyCodecTest, QueueRoundTripsThroughYamlAndJson) {
  const std::string text = R"(kind: Queue
name: nlp-train
tenant: nlp
cohort: research
weight: 1.5
queueingStrategy: StrictFIFO
quotas:
  - {resource: gpu/nvidia/H100-80G, nominal: 16, borrowingLimit: 8, lendingLimit: 4}
  - {resource: cpu, nominal: 256}
  - {resource: memory, nominal: 2Ti, lendingLimit: 0}
)";
  Diagnostics diags;
  auto q = DecodeText<Queue>(text, DecodeQueue, &diags);
  ASSERT_TRUE(q) << diags.ToString();
  EXPECT_EQ(q->weight_milli, 1500);
  EXPECT_EQ(q->queueing_strategy, QueueingStrategy::kStrictFifo);
  ASSERT_EQ(q->quotas.size(), 3u);
  EXPECT_EQ(q->quotas[0].resource.Name(), "gpu/nvidia/H100-80G");
  EXPECT_EQ(q->quotas[0].nominal.milli(), 16000);
  EXPECT_EQ(q->quotas[0].borrowing_limit->milli(), 8000);
  EXPECT_EQ(q->quotas[0].lending_limit->milli(), 4000);
  EXPECT_FALSE(q->quotas[1].borrowing_limit.has_value());
  EXPECT_FALSE(q->quotas[1].lending_limit.has_value());
  EXPECT_EQ(LedgerAmount(q->quotas[1].resource, q->quotas[1].nominal), 256000);  // millicores
  EXPECT_EQ(LedgerAmount(q->quotas[2].resource, q->quotas[2].nominal), int64_t{2} << 40);
  EXPECT_EQ(q->quotas[2].lending_limit->milli(), 0);
  EXPECT_NE(q->FindQuota(QuotaResource::Cpu()), nullptr);

  auto again = DecodeText<Queue>(EmitYaml(EncodeQueue(*q)), DecodeQueue, &diags);
  ASSERT_TRUE(again) << diags.ToString();
  EXPECT_EQ(*again, *q);
  SpecContext ctx("", &diags);
  const nlohmann::json plain = ToPlainJson(EncodeQueue(*q));
  auto from_json = DecodeQueue(SpecNode(plain), ctx);
  ASSERT_TRUE(from_json) << diags.ToString();
  EXPECT_EQ(*from_json, *q);
}

TEST(TenancyCodecTest, EveryConfigKindRoundTrips) {
  Diagnostics diags;
  auto check = [&](const std::string& text, auto decode, auto encode) {
    auto first = DecodeText<typename decltype(decode(YAML::Node(), std::declval<SpecContext&>()))::value_type>(
        text, decode, &diags);
    ASSERT_TRUE(first) << text << diags.ToString();
    auto second = DecodeText<typename decltype(first)::value_type>(EmitYaml(encode(*first)), decode, &diags);
    ASSERT_TRUE(second) << EmitYaml(encode(*first)) << diags.ToString();
    EXPECT_EQ(*first, *second);
  };
  check("kind: Tenant\nname: nlp\ndisplayName: NLP\npools: [a, b]\nlabels: {cc: '42'}\n", DecodeTenant,
        EncodeTenant);
  check("kind: Project\nname: llm\ntenant: nlp\ndescription: d\n", DecodeProject, EncodeProject);
  check("kind: Cohort\nname: c\nparent: root\nquotas: [{resource: cpu, nominal: 1}]\n", DecodeCohort,
        EncodeCohort);
  check("kind: PriorityClass\nname: urgent\nvalue: 800\npreemptible: false\nmaxQueueWait: 90m\n"
        "agingStep: 50\nceiling: 850\n",
        DecodePriorityClass, EncodePriorityClass);
  check("kind: Flavor\nname: gpu/nvidia/T4\nweight: 0.5\n", DecodeFlavorConfig, EncodeFlavorConfig);
  check("kind: Pool\nname: p\ncluster: dc1\npurpose: inference\ntenants: [a]\n", DecodePoolConfig,
        EncodePoolConfig);
  EXPECT_TRUE(diags.empty()) << diags.ToString();
}

TEST(TenancyCodecTest, ReportsEveryQueueProblem) {
  Diagnostics diags;
  auto q = DecodeText<Queue>(R"(kind: Queue
name: q
tenant: t
weight: 0
mode: fast
queueingStrategy: FIFO
quotas:
  - {resource: gpu/*, nominal: 4}
  - {resource: cpu, nominal: 4, lendingLimit: 8}
  - {resource: cpu, nominal: -1}
  - {resource: memory, nominal: 1Gi, borrowingLimit: 1Gi}
)",
                             DecodeQueue, &diags);
  EXPECT_FALSE(q);
  EXPECT_EQ(diags.ToString(),
            "t.yaml:5: mode: unknown field 'mode'; allowed: kind, name, tenant, cohort, weight, "
            "queueingStrategy, quotas, description, clusters, preferredClusters, reclaimWithinNominal\n"
            "t.yaml:4: weight: must be positive, got 0\n"
            "t.yaml:6: queueingStrategy: unknown queueing strategy 'FIFO' (expected StrictFIFO or "
            "BestEffortFIFO)\n"
            "t.yaml:8: quotas[0].resource: invalid quota resource 'gpu/*': quotas name one exact "
            "flavor, not a pattern\n"
            "t.yaml:9: quotas[1].lendingLimit: lendingLimit (8) exceeds nominal (4)\n"
            "t.yaml:10: quotas[2].nominal: must not be negative, got -1\n"
            "t.yaml:10: quotas[2].resource: duplicate quota for 'cpu' (first at quotas[1])\n");
}

TEST(TenancyCodecTest, BorrowingNeedsACohortAndAgingNeedsLimits) {
  Diagnostics diags;
  EXPECT_FALSE(DecodeText<Queue>("kind: Queue\nname: q\ntenant: t\nquotas:\n"
                                 "  - {resource: cpu, nominal: 4, borrowingLimit: 2}\n",
                                 DecodeQueue, &diags));
  EXPECT_FALSE(DecodeText<PriorityClass>("kind: PriorityClass\nname: p\nvalue: 10\nagingStep: 5\n"
                                         "ceiling: 5\n",
                                         DecodePriorityClass, &diags));
  EXPECT_EQ(diags.ToString(),
            "t.yaml:5: quotas[0].borrowingLimit: borrowingLimit needs a cohort to borrow from; set "
            "cohort or remove it\n"
            "t.yaml:4: agingStep: agingStep needs maxQueueWait (how long before each step)\n"
            "t.yaml:5: ceiling: ceiling (5) is below value (10)\n");
}

SourceLocation At(int line) { return SourceLocation{"org.yaml", line, {}}; }

Cohort MakeCohort(std::string name, std::string parent) {
  Cohort c;
  c.name = std::move(name);
  c.parent = std::move(parent);
  return c;
}

TEST(TenancyConfigTest, DetectsCohortCyclesAndUnknownParents) {
  TenancyConfig config;
  ASSERT_TRUE(config.AddCohort(MakeCohort("root", ""), At(1)).ok());
  ASSERT_TRUE(config.AddCohort(MakeCohort("a", "b"), At(2)).ok());
  ASSERT_TRUE(config.AddCohort(MakeCohort("b", "c"), At(3)).ok());
  ASSERT_TRUE(config.AddCohort(MakeCohort("c", "a"), At(4)).ok());
  ASSERT_TRUE(config.AddCohort(MakeCohort("leaf", "a"), At(5)).ok());
  ASSERT_TRUE(config.AddCohort(MakeCohort("orphan", "missing"), At(6)).ok());
  ASSERT_TRUE(config.AddCohort(MakeCohort("ok", "root"), At(7)).ok());
  Diagnostics diags;
  config.CheckReferences(diags);
  EXPECT_EQ(diags.ToString(),
            "org.yaml:2: parent: cohort cycle: a -> b -> c -> a\n"
            "org.yaml:6: parent: unknown parent cohort 'missing'\n");
  EXPECT_EQ(*config.CohortChain("ok"), (std::vector<std::string>{"ok", "root"}));
  EXPECT_EQ(config.CohortChain("leaf").status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(config.CohortChain("nope").status().code(), StatusCode::kNotFound);
}

TEST(TenancyConfigTest, ChecksCrossReferencesAndDuplicates) {
  TenancyConfig config;
  ASSERT_TRUE(config.AddTenant(Tenant{"nlp", "", {"gpu-pool"}, {}, {}}, At(1)).ok());
  Status dup = config.AddTenant(Tenant{"nlp", "", {}, {}, {}}, At(9));
  EXPECT_EQ(dup.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(dup.message(), "duplicate Tenant 'nlp' (first defined at org.yaml:1)");
  ASSERT_TRUE(config.AddProject(Project{"vision", "det", "", {}}, At(2)).ok());
  Queue q;
  q.name = "q";
  q.tenant = "nlp";
  q.cohort = "nowhere";
  q.quotas.push_back(Quota{QuotaResource::Devices(*Flavor::Parse("gpu/nvidia/T4")), Quantity::FromMilli(1000), {}, {}});
  SourceLocation loc = At(3);
  loc.fields["quotas[0].resource"] = 5;
  ASSERT_TRUE(config.AddQueue(q, loc).ok());
  ASSERT_TRUE(config.AddCohort(MakeCohort("research", ""), At(4)).ok());
  ASSERT_TRUE(config.AddFlavor(FlavorConfig{*Flavor::Parse("gpu/nvidia/A100-80G"), 2500, ""}, At(6)).ok());
  ASSERT_TRUE(config.AddPool(PoolConfig{"other", "dc1", PoolPurpose::kTraining, {"ghost"}, ""}, At(7)).ok());
  Diagnostics diags;
  config.CheckReferences(diags);
  EXPECT_EQ(diags.ToString(),
            "org.yaml:1: pools[0]: unknown pool 'gpu-pool'\n"
            "org.yaml:2: tenant: unknown tenant 'vision'\n"
            "org.yaml:3: cohort: unknown cohort 'nowhere'\n"
            "org.yaml:5: quotas[0].resource: unknown flavor 'gpu/nvidia/T4' (no Flavor document "
            "defines it)\n"
            "org.yaml:7: tenants[0]: unknown tenant 'ghost'\n");
  EXPECT_EQ(config.FlavorWeightMilli(*Flavor::Parse("gpu/nvidia/A100-80G")), 2500);
  EXPECT_EQ(config.FlavorWeightMilli(*Flavor::Parse("gpu/nvidia/T4")), 1000);
  EXPECT_NE(config.FindPriorityClass("training"), nullptr);
  EXPECT_NE(config.FindProject("vision/det"), nullptr);
}

TEST(TenancyConfigTest, PartialSetsSkipChecksOfAbsentKinds) {
  TenancyConfig config;
  Queue q;
  q.name = "q";
  q.tenant = "defined-elsewhere";
  q.cohort = "also-elsewhere";
  ASSERT_TRUE(config.AddQueue(q).ok());
  Diagnostics diags;
  config.CheckReferences(diags);
  EXPECT_TRUE(diags.empty()) << diags.ToString();
}

TEST(ProjectRefTest, SplitsTenantAndProject) {
  auto p = ParseProjectRef("nlp/llm");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->first, "nlp");
  EXPECT_EQ(p->second, "llm");
  EXPECT_FALSE(ParseProjectRef("nlp").ok());
  EXPECT_FALSE(ParseProjectRef("a/b/c").ok());
  EXPECT_FALSE(ParseProjectRef("NLP/llm").ok());
}

}  // namespace
}  // namespace abacus
