#include "cli/output_format.h"

#include <gtest/gtest.h>

#include <sstream>

namespace abacus::cli {
namespace {

using nlohmann::json;

TEST(OutputFormatTest, ParsesTheJsonPathSubset) {
  auto p = ParseJsonPath(".placements[1].node");
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->size(), 3u);
  EXPECT_EQ((*p)[0].field, "placements");
  EXPECT_EQ((*p)[1].index, 1);
  EXPECT_EQ((*p)[2].field, "node");
  EXPECT_TRUE(ParseJsonPath("name").ok());
  EXPECT_TRUE(ParseJsonPath("{.spec.taskGroups[0].replicas}").ok());
  EXPECT_FALSE(ParseJsonPath(".items[*].name").ok());
  EXPECT_FALSE(ParseJsonPath("..name").ok());
  EXPECT_FALSE(ParseJsonPath(".a[").ok());
  EXPECT_NE(ParseJsonPath(".a?b").status().message().find("unexpected '?'"), std::string::npos);
}

TEST(OutputFormatTest, ParsesFormats) {
  EXPECT_EQ(ParseGetFormat("wide")->kind, GetFormat::Kind::kWide);
  EXPECT_EQ(ParseGetFormat("name")->kind, GetFormat::Kind::kName);
  auto f = ParseGetFormat("custom-columns=NAME:.name,NODE:.placements[0].node");
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_EQ(f->columns.size(), 2u);
  EXPECT_EQ(f->columns[1].header, "NODE");
  auto bad = ParseGetFormat("custom-columns=NAME:.name,NODE");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("column 2 'NODE'"), std::string::npos) << bad.status().message();
  auto unknown = ParseGetFormat("jsonpath={.name}");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("expected table, wide, name, json, yaml or custom-columns"),
            std::string::npos);
}

TEST(OutputFormatTest, CustomColumnsPrintValuesAndNone) {
  json items = json::parse(R"([{"name":"a","placements":[{"node":"n1"}],"requeues":2,"labels":{"x":"y"}},
                                {"name":"b","placements":[]}])");
  auto f = ParseGetFormat("custom-columns=NAME:.name,NODE:.placements[0].node,REQ:.requeues,L:.labels");
  ASSERT_TRUE(f.ok());
  std::ostringstream out;
  PrintCustomColumns(out, items, f->columns);
  EXPECT_EQ(out.str(),
            "NAME  NODE    REQ     L\n"
            "a     n1      2       {\"x\":\"y\"}\n"
            "b     <none>  <none>  <none>\n");
}

TEST(OutputFormatTest, NamesAreKindSlashName) {
  std::ostringstream out;
  PrintNames(out, "workload", json::parse(R"([{"name":"a"},{"name":"b"}])"));
  PrintNames(out, "project", json::parse(R"([{"name":"llm","tenant":"nlp"}])"));
  PrintNames(out, "device", json::parse(R"([{"node":"n1","index":3}])"));
  EXPECT_EQ(out.str(), "workload/a\nworkload/b\nproject/nlp/llm\ndevice/n1/3\n");
}

}  // namespace
}  // namespace abacus::cli
