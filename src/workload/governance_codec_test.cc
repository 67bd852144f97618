#include <gtest/gtest.h>

#include "tenancy/yaml_json.h"
#include "workload/documents.h"
#include "workload/governance_codec.h"
#include "workload/utf8.h"
#include "workload/yaml_guard.h"
#include "workload/workload_codec.h"

namespace abacus {
namespace {

constexpr char kPolicy[] = R"(kind: AdmissionPolicy
name: nlp-default
tenants: [nlp, vision]
spec:
  images:
    allowedRegistries: [registry.local, "registry.local:5000"]
    requireImage: true
    requireDigestFor: [production]
  mounts:
    - {pathPrefix: /data/nlp, access: read-only}
    - {pathPrefix: /scratch/nlp, access: read-write}
  network: internal
  maxResources: {cpu: 256, memory: 2Ti, devices: 64}
  pools: [train-a100, infer-a10]
)";

constexpr char kUser[] = R"(kind: User
name: alice
displayName: Alice Liu
email: alice@example.com
roles:
  - {role: tenant-admin, tenant: nlp}
  - {role: member, project: vision/cv}
  - {role: viewer}
)";

std::string Errors(const std::string& yaml) {
  auto parsed = ParseDocuments(yaml, "g.yaml");
  return parsed.diagnostics.ToString();
}

TEST(GovernanceCodecTest, PolicyDecodesAndRoundTrips) {
  auto parsed = ParseDocuments(kPolicy, "p.yaml");
  ASSERT_TRUE(parsed.diagnostics.empty()) << parsed.diagnostics.ToString();
  EXPECT_TRUE(parsed.documents.empty());
  ASSERT_EQ(parsed.governance.size(), 1u);
  EXPECT_EQ(parsed.governance[0].kind(), "AdmissionPolicy");
  EXPECT_EQ(parsed.governance[0].name(), "nlp-default");
  EXPECT_EQ(parsed.governance[0].source.line, 1);
  const auto& p = std::get<AdmissionPolicy>(parsed.governance[0].object);
  EXPECT_EQ(p.tenants, (std::vector<std::string>{"nlp", "vision"}));
  ASSERT_TRUE(p.allowed_registries.has_value());
  EXPECT_EQ(p.allowed_registries->size(), 2u);
  EXPECT_TRUE(p.require_image);
  EXPECT_EQ(p.require_digest_for, std::vector<std::string>{"production"});
  ASSERT_TRUE(p.mounts.has_value());
  EXPECT_EQ((*p.mounts)[1], (MountRule{"/scratch/nlp", true}));
  EXPECT_EQ(p.network, NetworkClass::kInternal);
  EXPECT_EQ(p.max_resources.memory->ToString(), "2Ti");
  EXPECT_EQ(p.pools.size(), 2u);
  EXPECT_TRUE(p.AppliesTo("vision"));
  EXPECT_FALSE(p.AppliesTo("cv"));

  auto back = GovernanceObjectFromJson(ToPlainJson(EncodeAdmissionPolicy(p)));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(std::get<AdmissionPolicy>(*back), p);
  auto again = ParseDocuments(EmitYaml(EncodeAdmissionPolicy(p)), "again.yaml");
  ASSERT_EQ(again.governance.size(), 1u) << again.diagnostics.ToString();
  EXPECT_EQ(std::get<AdmissionPolicy>(again.governance[0].object), p);
}

TEST(GovernanceCodecTest, EmptySectionsRoundTrip) {
  AdmissionPolicy p;
  p.name = "deny-mounts";
  p.mounts = std::vector<MountRule>{};
  p.allowed_registries = std::vector<std::string>{};
  auto back = GovernanceObjectFromJson(ToPlainJson(EncodeAdmissionPolicy(p)));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(std::get<AdmissionPolicy>(*back), p);
  AdmissionPolicy bare;
  bare.name = "bare";
  auto bare_back = GovernanceObjectFromJson(ToPlainJson(EncodeAdmissionPolicy(bare)));
  ASSERT_TRUE(bare_back.ok()) << bare_back.status().ToString();
  EXPECT_EQ(std::get<AdmissionPolicy>(*bare_back), bare);
}

TEST(GovernanceCodecTest, UserDecodesAndRoundTrips) {
  auto parsed = ParseDocuments(std::string(kPolicy) + "---\n" + kUser, "g.yaml");
  ASSERT_TRUE(parsed.diagnostics.empty()) << parsed.diagnostics.ToString();
  ASSERT_EQ(parsed.governance.size(), 2u);
  EXPECT_EQ(parsed.governance[1].kind(), "User");
  const auto& u = std::get<UserSpec>(parsed.governance[1].object);
  ASSERT_EQ(u.roles.size(), 3u);
  EXPECT_EQ(u.roles[0].ToString(), "tenant-admin of nlp");
  EXPECT_EQ(u.roles[1].ToString(), "member of vision/cv");
  EXPECT_EQ(u.roles[2].ToString(), "viewer");
  auto back = GovernanceObjectFromJson(ToPlainJson(EncodeUserSpec(u)));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(std::get<UserSpec>(*back), u);
}

TEST(GovernanceCodecTest, ProblemsAreReportedAtTheirLines) {
  EXPECT_EQ(Errors("kind: AdmissionPolicy\nname: p\nspec:\n  network: public\n"),
            "g.yaml:4: spec.network: unknown network class 'public' (expected isolated, internal or internet)\n");
  EXPECT_EQ(Errors("kind: AdmissionPolicy\nname: p\nspec:\n  mounts:\n    - {pathPrefix: data/../etc, access: rw}\n"),
            "g.yaml:5: spec.mounts[0].pathPrefix: must be an absolute path, got 'data/../etc'\n"
            "g.yaml:5: spec.mounts[0].access: expected read-only or read-write, got 'rw'\n");
  EXPECT_EQ(Errors("kind: AdmissionPolicy\nname: p\nspec:\n  images: {allowedRegistries: [\"Docker Hub\"]}\n"),
            "g.yaml:4: spec.images.allowedRegistries[0]: invalid registry 'Docker Hub' (expected a lower-case host, "
            "optionally :port)\n");
  EXPECT_EQ(Errors("kind: AdmissionPolicy\nname: p\nspec:\n  colour: red\n").find("unknown field 'colour'") !=
                std::string::npos,
            true);
  EXPECT_EQ(Errors("kind: User\nname: bob\nroles:\n  - {role: member}\n"),
            "g.yaml:4: roles[0]: member needs a project (tenant/project)\n");
  EXPECT_EQ(Errors("kind: User\nname: bob\nroles:\n  - {role: agent, node: n1}\n"),
            "g.yaml:4: roles[0].role: agent is a node credential (abacus agent --token), not a user role\n");
  EXPECT_EQ(Errors("kind: User\nname: bob\nroles:\n  - {role: root}\n"),
            "g.yaml:4: roles[0].role: unknown role 'root' (expected admin, tenant-admin, member, viewer or agent)\n");
  EXPECT_EQ(Errors("kind: User\nname: bob\nroles: []\n"), "g.yaml:3: roles: needs at least one role\n");
  EXPECT_EQ(Errors("kind: User\nname: bob\nroles:\n  - {role: admin, tenant: nlp}\n"),
            "g.yaml:4: roles[0]: admin holds everywhere; it takes no tenant, project or node\n");
}

TEST(GovernanceCodecTest, SpecObjectFromJsonPointsAtTheGovernanceDecoder) {
  auto r = SpecObjectFromJson(nlohmann::json{{"kind", "User"}, {"name", "x"}});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("GovernanceObjectFromJson"), std::string::npos);
  EXPECT_FALSE(GovernanceObjectFromJson(nlohmann::json{{"kind", "Queue"}}).ok());
}

TEST(MountsTest, WorkloadMountsDecodeEncodeAndValidate) {
  const std::string base =
      "kind: BatchJob\nname: b\nproject: nlp/llm\nqueue: q\nspec:\n  command: [x]\n  tasks: 1\n"
      "  taskGroups:\n    - name: t\n      resources: {cpu: 1, memory: 1Gi}\n";
  auto w = WorkloadFromYaml(base + "  mounts:\n    - {path: /data/nlp, mountPath: /data}\n"
                                   "    - {path: /scratch/nlp/run, readOnly: false}\n");
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  ASSERT_EQ(w->spec.mounts.size(), 2u);
  EXPECT_EQ(w->spec.mounts[0], (DataMount{"/data/nlp", "/data", true}));
  EXPECT_EQ(w->spec.mounts[1], (DataMount{"/scratch/nlp/run", "", false}));
  auto back = WorkloadFromJson(ToJson(*w));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, *w);
  auto none = WorkloadFromYaml(base);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(ToJson(*none)["spec"].contains("mounts"));

  auto bad = WorkloadFromYaml(base + "  mounts:\n    - {path: /data/../etc}\n    - {mountPath: /x}\n", "w.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "w.yaml:12: spec.mounts[0].path: must not contain '..' segments, got '/data/../etc'\n"
            "w.yaml:13: spec.mounts[1].path: required field is missing");
}

TEST(MountsTest, PathChecks) {
  EXPECT_TRUE(CheckMountPath("/").ok());
  EXPECT_TRUE(CheckMountPath("/data/nlp").ok());
  EXPECT_FALSE(CheckMountPath("").ok());
  EXPECT_FALSE(CheckMountPath("data").ok());
  EXPECT_FALSE(CheckMountPath("/data/").ok());
  EXPECT_FALSE(CheckMountPath("/data//x").ok());
  EXPECT_FALSE(CheckMountPath("/data/./x").ok());
  EXPECT_TRUE(PathWithin("/data/nlp", "/data/nlp"));
  EXPECT_TRUE(PathWithin("/data/nlp/x", "/data/nlp"));
  EXPECT_FALSE(PathWithin("/data/nlp2", "/data/nlp"));
  EXPECT_FALSE(PathWithin("/data", "/data/nlp"));
  EXPECT_TRUE(PathWithin("/anything", "/"));
}

}  // namespace
}  // namespace abacus

namespace abacus {
namespace {

TEST(Utf8Test, InvalidUtf8IsRefusedBeforeDecoding) {
  EXPECT_FALSE(FindInvalidUtf8("plain ascii, 中文, émoji 🙂").has_value());
  EXPECT_EQ(FindInvalidUtf8("ab\x8d"), 2u);          // stray continuation byte
  EXPECT_EQ(FindInvalidUtf8("\xc0\xaf"), 0u);        // overlong '/'
  EXPECT_EQ(FindInvalidUtf8("x\xed\xa0\x80"), 1u);   // surrogate
  EXPECT_EQ(FindInvalidUtf8("\xf4\x90\x80\x80"), 0u);  // above U+10FFFF
  EXPECT_EQ(FindInvalidUtf8("\xe4\xb8"), 0u);        // truncated
  // Found by workload_yaml_fuzz: an invalid byte inside a command string used to decode, then
  // make ToJson throw.
  auto parsed = ParseDocuments("kind: BatchJob\nname: b\nspec:\n  command: [\"a\x8d\"]\n", "w.yaml");
  EXPECT_TRUE(parsed.documents.empty());
  EXPECT_EQ(parsed.diagnostics.ToString(), "w.yaml:4: text is not valid UTF-8 (byte 43)\n");
  EXPECT_FALSE(WorkloadFromYaml("kind: BatchJob\n\xff", "w.yaml").ok());
}

}  // namespace
}  // namespace abacus

namespace abacus {
namespace {

TEST(YamlGuardTest, StrayFlowEntryDoesNotHangLoadAll) {
  // Found by workload_yaml_fuzz: yaml-cpp 0.7's LoadAll loops forever on these.
  for (const char* text : {",", ",--\n---", "kind: Tenant\nname: t\n---\n  ,\n", "  ,\n"}) {
    EXPECT_TRUE(FindYamlLoadAllLoop(text).has_value()) << text;
    auto parsed = ParseDocuments(text, "w.yaml");
    ASSERT_EQ(parsed.diagnostics.size(), 1u) << text;
    EXPECT_NE(parsed.diagnostics.items()[0].message.find("unexpected ','"), std::string::npos);
  }
  EXPECT_EQ(FindYamlLoadAllLoop("kind: Tenant\nname: t\n---\n  ,\n"), 4);
  for (const char* text : {"", "---\n---\n---\n", "a, b", "kind: Tenant\nname: t\n", "[a,", "x: [1, 2]\n---\n- a\n"}) {
    EXPECT_FALSE(FindYamlLoadAllLoop(text).has_value()) << text;
  }
}

}  // namespace
}  // namespace abacus
