// `kind: Secret` documents (workload/secret_doc.h): both shapes read into the body that
// POST /api/v1/secrets takes, and every problem is reported without the value.
#include "workload/secret_doc.h"

#include <gtest/gtest.h>

#include "workload/documents.h"

namespace abacus {
namespace {

using nlohmann::json;

constexpr char kValue[] = "sentinel-value-9d1c";

ParsedDocuments Parse(const std::string& text) {
  RegisterSecretKind();
  return ParseDocuments(text, "s.yaml");
}

TEST(SecretDocTest, KubernetesShapeReadsIntoTheCreateBody) {
  auto p = Parse(std::string("kind: Secret\nmetadata: {name: db-creds, tenant: acme, project: ml}\n"
                             "stringData: {password: ") + kValue + "}\ndata: {blob: aGVsbG8=}\n");
  ASSERT_TRUE(p.diagnostics.empty()) << p.diagnostics.ToString();
  ASSERT_EQ(p.extensions.size(), 1u);
  EXPECT_EQ(p.extensions[0].kind, "Secret");
  EXPECT_EQ(p.extensions[0].name, "db-creds");
  const json& j = p.extensions[0].object;
  EXPECT_EQ(j.value("project", ""), "acme/ml");
  EXPECT_EQ(j.value("tenant", ""), "acme");
  EXPECT_EQ(j["stringData"].value("password", ""), kValue);
  EXPECT_EQ(j["data"].value("blob", ""), "aGVsbG8=");
}

TEST(SecretDocTest, AnUnknownKindsMessageListsTheRegisteredKindsToo) {
  const std::string message = Parse("kind: Secrets\nname: x\n").diagnostics.ToString();
  EXPECT_NE(message.find("s.yaml:1: kind: unknown kind 'Secrets'; known kinds: TrainingJob,"), std::string::npos)
      << message;
  EXPECT_NE(message.find(", User, Secret"), std::string::npos) << message;
  EXPECT_NE(Parse("name: x\n").diagnostics.ToString().find(", User, Secret"), std::string::npos);
}

TEST(SecretDocTest, TopLevelNamesAndATenantSecret) {
  auto p = Parse("kind: Secret\nname: hf-token\ntenant: acme\nstringData: {token: x}\n---\n"
                 "kind: Secret\nname: p\nproject: acme/ml\nstringData: {k: v}\n");
  ASSERT_TRUE(p.diagnostics.empty()) << p.diagnostics.ToString();
  ASSERT_EQ(p.extensions.size(), 2u);
  EXPECT_EQ(p.extensions[0].object.value("tenant", ""), "acme");
  EXPECT_FALSE(p.extensions[0].object.contains("project"));
  EXPECT_EQ(p.extensions[1].object.value("project", ""), "acme/ml");
  EXPECT_EQ(p.extensions[1].object.value("tenant", ""), "acme");
}

TEST(SecretDocTest, ProblemsNameFieldsAndKeysNeverAValue) {
  const std::string bad_base64 = std::string("%%") + kValue;
  auto p = Parse("kind: Secret\nmetadata: {name: a}\nstringData: {k: v}\n---\n"                       // no scope
                 "kind: Secret\nmetadata: {name: b, tenant: acme, project: beta/ml}\nstringData: {k: v}\n---\n"
                 "kind: Secret\nmetadata: {name: c, tenant: acme}\ndata: {k: '" + bad_base64 + "'}\n---\n"
                 "kind: Secret\nmetadata: {name: d, tenant: acme}\nstringData: {'bad/key': " + kValue + "}\n---\n"
                 "kind: Secret\nmetadata: {name: e, tenant: acme}\n---\n"                               // no keys
                 "kind: Secret\nmetadata: {name: f, tenant: acme}\nname: f\nstringData: {k: v}\n---\n"
                 "kind: Secret\nmetadata: {name: g, tenant: acme}\nstringData: {k: " + kValue + "}\n"
                 "data: {k: aGVsbG8=}\n---\n"
                 "kind: Secret\nmetadata: {name: h, tenant: acme}\nstringData: {k: v}\ntype: Opaque\n");
  EXPECT_TRUE(p.extensions.empty());
  const std::string text = p.diagnostics.ToString();
  EXPECT_EQ(text.find(kValue), std::string::npos) << text;
  for (const std::string want :
       {"s.yaml:2: metadata.tenant: give the secret's tenant", "project beta/ml is not in tenant acme",
        "value of key 'k' is not valid base64", "key 'bad/key' must be 1-253 of [A-Za-z0-9._-]",
        "a secret needs at least one key", "give it under metadata (metadata.name)", "key 'k' is in both data and stringData",
        "unknown field 'type'"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << " is not in:\n" << text;
  }
}

}  // namespace
}  // namespace abacus
