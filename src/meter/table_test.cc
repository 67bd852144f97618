#include "meter/table.h"

#include <gtest/gtest.h>

namespace abacus::meter {
namespace {

Table Sample() {
  Table t;
  t.title = "usage";
  t.columns = {{"tenant", false}, {"deviceHours", true}, {"cost", true}};
  t.rows = {{"nlp", "40.000", "113.60"}, {"r&d, \"east\"", "2.500", ""}, {"multi\nline", "0.000", "0.00"}};
  t.notes = {"total: 42.500 device-hours"};
  return t;
}

TEST(TableTest, TextAlignsTextLeftAndNumbersRight) {
  Table t = Sample();
  t.rows.pop_back();
  EXPECT_EQ(RenderText(t),
            "usage\n"
            "tenant       deviceHours    cost\n"
            "-----------  -----------  ------\n"
            "nlp               40.000  113.60\n"
            "r&d, \"east\"        2.500\n"
            "note: total: 42.500 device-hours\n");
}

TEST(TableTest, CsvFollowsRfc4180) {
  EXPECT_EQ(RenderCsv(Sample()),
            "tenant,deviceHours,cost\r\n"
            "nlp,40.000,113.60\r\n"
            "\"r&d, \"\"east\"\"\",2.500,\r\n"
            "\"multi\nline\",0.000,0.00\r\n");
}

TEST(TableTest, JsonHasNumbersForNumericColumns) {
  auto j = TableToJson(Sample());
  EXPECT_EQ(j["columns"], nlohmann::ordered_json({"tenant", "deviceHours", "cost"}));
  EXPECT_EQ(j["rows"][0]["tenant"], "nlp");
  EXPECT_DOUBLE_EQ(j["rows"][0]["cost"].get<double>(), 113.6);
  EXPECT_TRUE(j["rows"][1]["cost"].is_null());
  EXPECT_EQ(j["notes"][0], "total: 42.500 device-hours");
}

TEST(TableTest, FormatsParse) {
  EXPECT_EQ(ParseTableFormat("table").value(), TableFormat::kText);
  EXPECT_EQ(ParseTableFormat("csv").value(), TableFormat::kCsv);
  EXPECT_EQ(ParseTableFormat("json").value(), TableFormat::kJson);
  EXPECT_FALSE(ParseTableFormat("xml").ok());
  EXPECT_EQ(RenderTable(Sample(), TableFormat::kCsv), RenderCsv(Sample()));
}

}  // namespace
}  // namespace abacus::meter
