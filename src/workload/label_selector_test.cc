#include "workload/label_selector.h"

#include <gtest/gtest.h>

namespace abacus {
namespace {

const std::map<std::string, std::string> kLabels = {{"team", "nlp"}, {"model", "llama-3-8b"}};

bool Sel(const std::string& text, const std::map<std::string, std::string>& labels = kLabels) {
  auto s = LabelSelector::Parse(text);
  EXPECT_TRUE(s.ok()) << text << ": " << s.status().message();
  return s.ok() && s->Matches(labels);
}

TEST(LabelSelectorTest, EqualsNotEqualsExistsAndNotExists) {
  EXPECT_TRUE(Sel(""));
  EXPECT_TRUE(Sel("team=nlp"));
  EXPECT_TRUE(Sel("team==nlp"));
  EXPECT_FALSE(Sel("team=vision"));
  EXPECT_TRUE(Sel("team!=vision"));
  EXPECT_FALSE(Sel("team!=nlp"));
  EXPECT_TRUE(Sel("owner!=bob"));  // absent labels match k!=v, as in kubectl
  EXPECT_TRUE(Sel("model"));
  EXPECT_FALSE(Sel("owner"));
  EXPECT_TRUE(Sel("!owner"));
  EXPECT_FALSE(Sel("!team"));
  EXPECT_TRUE(Sel("team=nlp, model=llama-3-8b,!owner"));
  EXPECT_FALSE(Sel("team=nlp,model=other"));
}

TEST(LabelSelectorTest, MalformedNamesTheBadPart) {
  for (const char* text : {"team=nlp,", "=nlp", "team=nlp,,x", "!", "te am=nlp", "team=n=lp", "team!=", "a=b,c!d"}) {
    auto s = LabelSelector::Parse(text);
    EXPECT_FALSE(s.ok()) << text;
  }
  auto s = LabelSelector::Parse("team=nlp,=vision");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("'=vision' has no key"), std::string::npos) << s.status().message();
}

}  // namespace
}  // namespace abacus
