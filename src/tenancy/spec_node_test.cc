#include "tenancy/spec_node.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "tenancy/tenancy_codec.h"
#include "tenancy/yaml_reader.h"

namespace abacus {
namespace {

// The same document as YAML and as JSON.
constexpr char kYaml[] = R"(kind: Queue
name: q1
count: 12
big: 18446744073709551615
ratio: 1.5
hex: 0x1F
quoted: "12"
flag: true
word: yes
nothing: null
list: [a, 2, false]
map: {x: 1, y: two}
)";
constexpr char kJson[] = R"({"kind":"Queue","name":"q1","count":12,"big":18446744073709551615,"ratio":1.5,
  "hex":"0x1F","quoted":"12","flag":true,"word":"yes","nothing":null,"list":["a",2,false],
  "map":{"x":1,"y":"two"}})";

TEST(SpecNodeTest, JsonReadsAsTheYamlItWouldConvertTo) {
  YAML::Node yaml_doc = YAML::Load(kYaml);
  nlohmann::json json_doc = nlohmann::json::parse(kJson);
  for (const SpecNode& doc : {SpecNode(yaml_doc), SpecNode(json_doc)}) {
    SCOPED_TRACE(doc.Line() > 0 ? "yaml" : "json");
    ASSERT_TRUE(doc.IsMap());
    EXPECT_EQ(doc.size(), 12u);
    EXPECT_EQ(doc["kind"].Scalar(), "Queue");
    EXPECT_EQ(doc["count"].AsInt(), 12);
    EXPECT_EQ(doc["count"].Scalar(), "12");
    EXPECT_FALSE(doc["big"].AsInt().has_value());  // beyond a signed 64-bit integer
    EXPECT_FALSE(doc["ratio"].AsInt().has_value());
    EXPECT_EQ(doc["ratio"].Scalar(), "1.5");
    EXPECT_EQ(doc["hex"].AsInt(), 31);
    EXPECT_EQ(doc["quoted"].AsInt(), 12);
    EXPECT_EQ(doc["flag"].AsBool(), true);
    EXPECT_EQ(doc["flag"].Scalar(), "true");
    EXPECT_EQ(doc["word"].AsBool(), true);
    EXPECT_FALSE(doc["kind"].AsBool().has_value());
    EXPECT_TRUE(doc["nothing"].IsDefined());
    EXPECT_TRUE(doc["nothing"].IsNull());
    EXPECT_FALSE(doc["nothing"].IsScalar());
    EXPECT_FALSE(doc["absent"].IsDefined());
    EXPECT_TRUE(doc["absent"].IsNull());
    SpecNode list = doc["list"];
    ASSERT_TRUE(list.IsSequence());
    ASSERT_EQ(list.size(), 3u);
    EXPECT_EQ(list[0].Scalar(), "a");
    EXPECT_EQ(list[1].AsInt(), 2);
    EXPECT_EQ(list[2].AsBool(), false);
    EXPECT_FALSE(list[3].IsDefined());
    EXPECT_FALSE(list["x"].IsDefined());  // a list has no keys
    SpecNode map = doc["map"];
    auto entries = map.Entries();
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0].first.Scalar(), "x");
    EXPECT_EQ(entries[0].second.AsInt(), 1);
    EXPECT_EQ(entries[1].first.Scalar(), "y");
    EXPECT_EQ(entries[1].second.Scalar(), "two");
    EXPECT_FALSE(map[0].IsDefined());  // a mapping has no items
    EXPECT_TRUE(doc["kind"].Entries().empty());
  }
}

TEST(SpecNodeTest, LinesComeFromYamlOnly) {
  YAML::Node yaml_doc = YAML::Load(kYaml);
  nlohmann::json json_doc = nlohmann::json::parse(kJson);
  EXPECT_EQ(SpecNode(yaml_doc)["count"].Line(), 3);
  EXPECT_EQ(SpecNode(json_doc)["count"].Line(), 0);
  EXPECT_EQ(SpecNode().Line(), 0);
}

TEST(SpecNodeTest, DecodersReportTheSameProblemsForYamlAndJson) {
  // Wrong types, an unknown field and a missing one: the messages match, lines aside.
  const char* yaml = "kind: Queue\nname: q1\ntenant: [t]\nweight: heavy\ncolour: red\n";
  nlohmann::json json = {{"kind", "Queue"}, {"name", "q1"}, {"tenant", {"t"}}, {"weight", "heavy"}, {"colour", "red"}};
  Diagnostics from_yaml, from_json;
  SpecContext yctx("q.yaml", &from_yaml);
  SpecContext jctx("q.yaml", &from_json);
  YAML::Node ydoc = YAML::Load(yaml);
  EXPECT_FALSE(DecodeQueue(SpecNode(ydoc), yctx).has_value());
  EXPECT_FALSE(DecodeQueue(SpecNode(json), jctx).has_value());
  ASSERT_GT(from_yaml.size(), 0u);
  ASSERT_EQ(from_yaml.size(), from_json.size());
  std::vector<std::string> yaml_messages, json_messages;
  for (const auto& d : from_yaml.items()) yaml_messages.push_back(d.field + ": " + d.message);
  for (const auto& d : from_json.items()) json_messages.push_back(d.field + ": " + d.message);
  std::sort(yaml_messages.begin(), yaml_messages.end());
  std::sort(json_messages.begin(), json_messages.end());
  EXPECT_EQ(yaml_messages, json_messages);
}

}  // namespace
}  // namespace abacus
