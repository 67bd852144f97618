#include "common/json_writer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace abacus {
namespace {

TEST(JsonWriterTest, StringsAreEscapedByteForByteAsDumpDoes) {
  // Every byte below 0x80 (NUL, controls, quote and backslash included) and valid UTF-8 of 2, 3
  // and 4 bytes: the same text as nlohmann::json's dump().
  std::string all;
  for (int c = 0; c < 0x80; ++c) all += static_cast<char>(c);
  all += "\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x98\x80 \x7f end";
  for (const std::string& s : {all, std::string(), std::string("plain"), std::string("\"\\\"\\"),
                               std::string("tab\tnew\nline\r\x01\x1f")}) {
    std::string out;
    AppendJsonString(out, s);
    EXPECT_EQ(out, nlohmann::json(s).dump()) << s;
    EXPECT_EQ(nlohmann::json::parse(out).get<std::string>(), s);
  }
}

TEST(JsonWriterTest, AnObjectIsTheTextOfTheSameValueDumped) {
  JsonWriter w;
  w.Begin().String("a", "x\"y").Int("b", -9223372036854775807 - 1).Object("c").String("d", "").Int("e", 0).End();
  w.Int("f", 42).End();
  nlohmann::json same = {{"a", "x\"y"},
                         {"b", INT64_MIN},
                         {"c", {{"d", ""}, {"e", 0}}},
                         {"f", 42}};
  EXPECT_EQ(w.Take(), same.dump());
}

}  // namespace
}  // namespace abacus
