#include "common/nesting.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>

namespace abacus {
namespace {

std::string Repeat(std::string_view s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// The depth yaml-cpp builds, walked without recursion limits (small inputs only).
int YamlDepth(const YAML::Node& n) {
  if (!n.IsMap() && !n.IsSequence()) return 0;
  int deepest = 0;
  for (const auto& item : n) {
    if (n.IsMap()) {
      deepest = std::max(deepest, YamlDepth(item.second));
    } else {
      deepest = std::max(deepest, YamlDepth(item));
    }
  }
  return deepest + 1;
}

TEST(JsonNesting, DeepBodyIsRefusedAtItsLine) {
  std::string deep = "{\"a\":\n" + Repeat("[", 100000) + Repeat("]", 100000) + "}";
  EXPECT_EQ(FindJsonNestingOverflow(deep), 2);
  auto parsed = ParseJsonBody(deep);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.status().message().find("nesting deeper than 64 levels (the limit)"), std::string::npos);
  EXPECT_NE(parsed.status().message().find("line 2"), std::string::npos);
}

TEST(JsonNesting, ExactlyTheLimitPasses) {
  EXPECT_EQ(FindJsonNestingOverflow(Repeat("[", 64) + Repeat("]", 64)), 0);
  EXPECT_EQ(FindJsonNestingOverflow(Repeat("[", 65) + Repeat("]", 65)), 1);
}

TEST(JsonNesting, BracketsInStringsDoNotCount) {
  std::string s = "{\"cmd\": \"" + Repeat("[{", 200) + "\\\"" + Repeat("[", 100) + "\"}";
  EXPECT_EQ(FindJsonNestingOverflow(s), 0);
  auto parsed = ParseJsonBody(s);
  ASSERT_TRUE(parsed.ok());
  EXPECT_TRUE(parsed->is_object());
}

TEST(JsonNesting, InvalidJsonIsLeftToTheParser) {
  JsonTextProblem problem;
  nlohmann::json j = ParseJsonChecked("{not json", &problem);
  EXPECT_TRUE(j.is_discarded());
  EXPECT_TRUE(problem.message.empty());  // the scan found nothing; the parser refused it
}

// A request body that is not JSON is refused where it is parsed, with its line and column and
// what the parser expected, never handed on as a discarded value a route might take for "no
// fields" (a cancel with a malformed body once cancelled with no reason).
TEST(JsonSyntax, ARequestBodyThatIsNotJsonIsRefusedAtItsLine) {
  auto parsed = ParseJsonBody("{\"reason\": \"ok\",\n \"x\": tru}");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(parsed.status().message().rfind("request body: line 2: not valid JSON at column ", 0), 0u)
      << parsed.status().message();
  EXPECT_NE(parsed.status().message().find("invalid literal"), std::string::npos) << parsed.status().message();
  for (std::string_view body : {"", "   ", "{", "[1,]", "{\"a\" 1}", "nul", "\"unterminated"}) {
    auto refused = ParseJsonBody(body);
    EXPECT_FALSE(refused.ok()) << "'" << body << "'";
  }
}

// The parser's message names what it read last; the answer does not echo the caller's bytes.
TEST(JsonSyntax, TheMessageDoesNotEchoTheBody) {
  auto parsed = ParseJsonBody("{\"a\": SECRETVALUE}");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message().find("SECRET"), std::string::npos) << parsed.status().message();
  EXPECT_EQ(parsed.status().message().find("last read"), std::string::npos) << parsed.status().message();
  JsonTextProblem problem = JsonSyntaxProblem("[1,\n2,\n\n SECRET]");
  EXPECT_EQ(problem.line, 4);
  EXPECT_EQ(problem.message.find("SECRET"), std::string::npos) << problem.message;
  EXPECT_EQ(JsonSyntaxProblem("{\"valid\": true}").line, 0);
  EXPECT_TRUE(JsonSyntaxProblem("{\"valid\": true}").message.empty());
}

TEST(JsonDuplicateKeys, RefusedWithTheRepeatsLine) {
  constexpr char kBody[] = "{\"kind\": \"Queue\",\n \"quotas\": [{\"cpu\": 1,\n  \"memory\": 2,\n  \"cpu\": 3}]}";
  JsonTextProblem problem;
  nlohmann::json j = ParseJsonChecked(kBody, &problem);
  EXPECT_TRUE(j.is_discarded());
  EXPECT_EQ(problem.line, 4);
  EXPECT_EQ(problem.message, "duplicate key 'cpu'");
  auto body = ParseJsonBody(kBody);
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().message(), "request body: line 4: duplicate key 'cpu'");
}

TEST(JsonDuplicateKeys, SameKeyInSiblingObjectsIsFine) {
  auto body = ParseJsonBody(R"([{"name": "a", "x": {"name": 1}}, {"name": "b", "s": "name:"}])");
  ASSERT_TRUE(body.ok());
  EXPECT_EQ((*body)[1]["name"], "b");
}

// The keys the text writes are counted outside strings: colons and escaped quotes inside keys and
// values count for nothing, and a repeat deep inside an array is still found.
TEST(JsonDuplicateKeys, CountedOutsideStringsAndFoundDeep) {
  EXPECT_TRUE(ParseJsonBody(R"({"a\":b": "c:d", "e": [{"f": "\"g\":"}]})").ok());
  auto body = ParseJsonBody("{\"a\\\":b\": 1,\n \"c\": [[{\"d\": 2,\n \"d\": 3}]]}");
  ASSERT_FALSE(body.ok());
  EXPECT_EQ(body.status().message(), "request body: line 3: duplicate key 'd'");
}

TEST(YamlNesting, FlowNestingIsCounted) {
  EXPECT_EQ(FindYamlNestingOverflow("kind: Tenant\nname: x\nlabels: " + Repeat("[", 100000)), 3);
  EXPECT_EQ(FindYamlNestingOverflow(Repeat("{a: ", 70) + "1" + Repeat("}", 70)), 1);
}

TEST(YamlNesting, CompactSequencesAreCounted) {
  // "- - - - x": one line, one level per dash.
  EXPECT_EQ(FindYamlNestingOverflow("a:\n  " + Repeat("- ", 100000) + "x\n"), 2);
}

TEST(YamlNesting, IndentedMappingsAreCounted) {
  std::string deep;
  for (int i = 0; i < 80; ++i) deep += std::string(static_cast<size_t>(i), ' ') + "k:\n";
  EXPECT_EQ(FindYamlNestingOverflow(deep), 65);
  YAML::Node n = YAML::Load(deep);
  EXPECT_EQ(YamlDepth(n), 80);
}

TEST(YamlNesting, ListsUnderKeysAtTheSameColumnAreCounted) {
  // "k:" then "- " at the key's column: the list is a level of its own.
  std::string deep;
  for (int i = 0; i < 40; ++i) deep += std::string(static_cast<size_t>(2 * i), ' ') + "- k:\n";
  deep += std::string(80, ' ') + "- x\n";
  EXPECT_GT(FindYamlNestingOverflow(deep), 0);
  EXPECT_EQ(FindYamlNestingOverflow(deep, 200), 0);
}

TEST(YamlNesting, RealDocumentsPass) {
  constexpr char kWorkload[] = R"yaml(kind: TrainingJob
name: llama-ft   # a comment with [[[[ brackets
project: nlp/llm
queue: nlp-train
spec:
  command: ["python3", "-c", "print('[[[[{{{{')"]
  env: {A: "x[", B: 'it''s [ok'}
  script: |
    if [[ -f x ]]; then [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[
    fi
  taskGroups:
    - name: worker
      replicas: 2
      resources:
        cpu: 16
        accelerators: {flavor: "gpu/nvidia/*", count: 8, memory: 40Gi}
      topology: same-interconnect
  note: >
    {{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{
---
kind: Queue
name: q
quotas:
- {resource: cpu, nominal: 64}
- resource: memory
  nominal: 256Gi
)yaml";
  EXPECT_EQ(FindYamlNestingOverflow(kWorkload), 0);
  EXPECT_EQ(FindYamlNestingOverflow(kWorkload, 6), 0);  // the deepest: spec.taskGroups[0].resources.accelerators
  EXPECT_GT(FindYamlNestingOverflow(kWorkload, 4), 0);
}

TEST(YamlNesting, JsonTextReadsAsYaml) {
  // A line that is only a flow collection also counts as a block level: one more than yaml-cpp builds.
  EXPECT_EQ(FindYamlNestingOverflow("{\"a\": [1, {\"b\": \"]]]]\"}]}", 4), 0);
  EXPECT_EQ(FindYamlNestingOverflow("{\"a\": [1, {\"b\": [[\"]]]]\"]]}]}", 3), 1);
}

}  // namespace
}  // namespace abacus
