#include "model/version.h"

#include <gtest/gtest.h>

namespace abacus {
namespace {

Version V(std::string_view s) {
  auto v = Version::Parse(s);
  EXPECT_TRUE(v.ok()) << s << ": " << v.status().ToString();
  return v.ok() ? *v : Version();
}

TEST(VersionTest, ParsesNumbersAndSuffix) {
  Version v = V("8.0.RC1");
  EXPECT_EQ(v.numbers(), (std::vector<int64_t>{8, 0}));
  EXPECT_EQ(v.suffix(), "RC1");
  EXPECT_EQ(V("535.104.05").numbers(), (std::vector<int64_t>{535, 104, 5}));
  EXPECT_EQ(V("12.4rc2").suffix(), "rc2");
  EXPECT_EQ(V("v6.1").numbers(), (std::vector<int64_t>{6, 1}));
  EXPECT_EQ(V("6.1.0-beta").suffix(), "beta");
  EXPECT_EQ(V(" 12.2 ").text(), "12.2");
}

TEST(VersionTest, RejectsNonNumeric) {
  for (const char* bad : {"", "abc", "RC1", ".5", "v"}) {
    auto v = Version::Parse(bad);
    EXPECT_FALSE(v.ok()) << bad;
    if (!v.ok()) {
      EXPECT_EQ(v.status().code(), StatusCode::kInvalidArgument);
    }
  }
  EXPECT_EQ(Version::Parse("abc").status().message(),
            "invalid version 'abc': expected dotted numbers such as 12.2, 535.104.05 or 8.0.RC1");
}

TEST(VersionTest, OrdersNumericallyWithPreReleasesFirst) {
  EXPECT_LT(V("12.2"), V("12.10"));
  EXPECT_EQ(V("12"), V("12.0.0"));
  EXPECT_LT(V("8.0.RC1"), V("8.0"));
  EXPECT_LT(V("8.0.RC2"), V("8.0.RC10"));
  EXPECT_LT(V("8.0.RC3"), V("8.0.1"));
  EXPECT_GT(V("535.104.05"), V("535"));
  EXPECT_EQ(V("8.0.rc1"), V("8.0.RC1"));
}

TEST(VersionConstraintTest, ParsesEveryOperator) {
  struct Row {
    const char* text;
    VersionConstraint::Op op;
    const char* canonical;
  };
  for (const Row& r : std::vector<Row>{{"cuda>=12.2", VersionConstraint::Op::kGe, "cuda>=12.2"},
                                       {"cann > 8.0", VersionConstraint::Op::kGt, "cann>8.0"},
                                       {"rocm<=6.1", VersionConstraint::Op::kLe, "rocm<=6.1"},
                                       {"driver<550", VersionConstraint::Op::kLt, "driver<550"},
                                       {"cuda==12.4", VersionConstraint::Op::kEq, "cuda==12.4"},
                                       {"cann!=8.0.RC1", VersionConstraint::Op::kNe, "cann!=8.0.RC1"}}) {
    auto c = VersionConstraint::Parse(r.text);
    ASSERT_TRUE(c.ok()) << r.text << ": " << c.status().ToString();
    EXPECT_EQ(c->op(), r.op) << r.text;
    EXPECT_EQ(c->ToString(), r.canonical);
  }
}

TEST(VersionConstraintTest, RejectsMalformedWithClearMessages) {
  const std::string form =
      " (expected NAME OP VERSION such as cuda>=12.2; OP is one of >=, >, <=, <, ==, !=)";
  struct Row {
    const char* text;
    std::string message;
  };
  for (const Row& r : std::vector<Row>{
           {"cuda", "invalid runtime constraint 'cuda': no operator" + form},
           {">=12", "invalid runtime constraint '>=12': missing runtime name" + form},
           {"cuda>>12", "invalid runtime constraint 'cuda>>12': bad operator" + form},
           {"cuda=12", "invalid runtime constraint 'cuda=12': bad operator" + form},
           {"cuda>=", "invalid runtime constraint 'cuda>=': missing version" + form},
           {"cdua>=12", "invalid runtime constraint 'cdua>=12': unknown runtime 'cdua' (known: cann, cuda, driver, rocm)"},
           {"cuda>=x", "invalid runtime constraint 'cuda>=x': invalid version 'x': expected dotted numbers such as 12.2, 535.104.05 or 8.0.RC1"},
       }) {
    auto c = VersionConstraint::Parse(r.text);
    ASSERT_FALSE(c.ok()) << r.text;
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(c.status().message(), r.message);
  }
}

TEST(VersionConstraintTest, MatchesNamedVersions) {
  std::map<std::string, std::string> node = {
      {"cuda", "12.4"}, {"driver", "535.104.05"}, {"cann", "8.0.RC1"}};
  auto m = [&](const char* text) { return VersionConstraint::Parse(text)->Matches(node); };
  EXPECT_TRUE(m("cuda>=12.2"));
  EXPECT_FALSE(m("cuda>=12.5"));
  EXPECT_TRUE(m("cuda>12.3"));
  EXPECT_TRUE(m("cuda<13"));
  EXPECT_TRUE(m("cuda<=12.4"));
  EXPECT_TRUE(m("cuda==12.4.0"));
  EXPECT_TRUE(m("cuda!=12.3"));
  EXPECT_TRUE(m("driver>=535"));
  EXPECT_FALSE(m("driver>=550"));
  // A constraint without a suffix ignores the actual version's suffix.
  EXPECT_TRUE(m("cann>=8.0"));
  EXPECT_TRUE(m("cann==8.0"));
  // A constraint with a suffix uses the pre-release ordering.
  EXPECT_TRUE(m("cann>=8.0.RC1"));
  EXPECT_FALSE(m("cann>=8.0.RC2"));
  EXPECT_TRUE(m("cann<8.0.RC2"));
  // Missing runtime never matches, whatever the operator.
  EXPECT_FALSE(m("rocm>=6.0"));
  EXPECT_FALSE(m("rocm!=6.0"));
  EXPECT_FALSE(VersionConstraint::Parse("cuda>=12")->Matches({{"cuda", "garbage"}}));
  EXPECT_TRUE(MatchesAll({*VersionConstraint::Parse("cuda>=12.2"), *VersionConstraint::Parse("driver>=535")}, node));
  EXPECT_FALSE(MatchesAll({*VersionConstraint::Parse("cuda>=12.2"), *VersionConstraint::Parse("rocm>=6")}, node));
  EXPECT_TRUE(MatchesAll({}, node));
}

}  // namespace
}  // namespace abacus
