// The rules of updating a workload that exists (workload_update.h): the diff, what may change,
// the version a service's new template gets, revisions and rollback targets.
#include "server/workload_update.h"

#include <gtest/gtest.h>

#include "workload/documents.h"

namespace abacus::server {
namespace {

using nlohmann::json;

constexpr char kService[] = R"(kind: InferenceService
name: chat
project: a/serve
queue: qa
priorityClass: production
labels: {version: v1}
spec:
  image: registry/chat:1
  command: ["serve"]
  taskGroups:
    - name: server
      resources: {cpu: 1, memory: 1Gi}
  replicas: 2
  minReplicas: 1
  maxReplicas: 4
)";

Workload Parse(const std::string& text) {
  ParsedDocuments parsed = ParseDocuments(text, "t.yaml");
  EXPECT_TRUE(parsed.diagnostics.empty()) << parsed.diagnostics.ToString();
  EXPECT_EQ(parsed.documents.size(), 1u);
  return std::get<Workload>(parsed.documents.at(0).object);
}

WorkloadRecord Record(const std::string& text) {
  WorkloadRecord r;
  r.id = "wl-1";
  r.spec = Parse(text);
  r.submitted = FromMicros(1'000'000);
  return r;
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  size_t at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

TEST(WorkloadUpdateTest, DiffListsDottedPathsWithBothSides) {
  json diff = DocumentDiff(json::parse(R"({"a": 1, "spec": {"image": "x", "env": {"K": "1"}}})"),
                           json::parse(R"({"a": 1, "spec": {"image": "y", "env": {"K": "1", "L": "2"}}})"));
  EXPECT_EQ(diff, json::parse(R"([{"path": "spec.env.L", "from": null, "to": "2"},
                                  {"path": "spec.image", "from": "x", "to": "y"}])"));
}

TEST(WorkloadUpdateTest, ImmutableFieldsAreNamedAndNothingIsChanged) {
  WorkloadRecord r = Record(kService);
  std::vector<std::string> immutable;
  std::string changed = Replace(Replace(kService, "queue: qa", "queue: qb"), "cpu: 1,", "cpu: 2,");
  auto plan = PlanUpdate(r, Parse(changed), "bob", FromMicros(2'000'000), &immutable);
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(immutable, (std::vector<std::string>{"queue", "spec.taskGroups"}));
  EXPECT_NE(plan.status().message().find("immutable field(s) changed: queue, spec.taskGroups"), std::string::npos);
}

TEST(WorkloadUpdateTest, ANewServiceImageWithoutAVersionIsNamedAndBecomesARevision) {
  WorkloadRecord r = Record(kService);
  auto plan = PlanUpdate(r, Parse(Replace(kService, "chat:1", "chat:2")), "bob", FromMicros(2'000'000), nullptr);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  EXPECT_EQ(plan->revision, 2);
  ASSERT_TRUE(plan->next.inference()->rollout);
  EXPECT_EQ(plan->next.inference()->rollout->version, "r2");
  ASSERT_EQ(plan->revisions.size(), 2u);
  EXPECT_EQ(plan->revisions[0].version, "v1");  // the submission
  EXPECT_EQ(plan->revisions[0].image, "registry/chat:1");
  EXPECT_EQ(plan->revisions[1].version, "r2");
  EXPECT_EQ(plan->revisions[1].image, "registry/chat:2");
  EXPECT_EQ(plan->revisions[1].by, "bob");
  // Rolling back goes to revision 1's template and version.
  r.spec = plan->next;
  r.revisions = plan->revisions;
  auto back = RollbackTarget(r, 0);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->spec.image, "registry/chat:1");
  EXPECT_EQ(back->inference()->rollout->version, "v1");
  PlacementRecord old_replica;
  old_replica.version = "v1";
  ASSERT_NE(TemplateForTask(r, old_replica), nullptr);
  EXPECT_EQ(TemplateForTask(r, old_replica)->image, "registry/chat:1");  // v1's replicas keep v1's image
}

TEST(WorkloadUpdateTest, ReplicasAloneMakeNoRevisionAndTheSameDocumentChangesNothing) {
  WorkloadRecord r = Record(kService);
  auto same = PlanUpdate(r, Parse(kService), "bob", FromMicros(2'000'000), nullptr);
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE(same->diff.empty());
  EXPECT_EQ(same->revision, 0);
  auto scaled = PlanUpdate(r, Parse(Replace(kService, "replicas: 2", "replicas: 3")), "bob", FromMicros(2'000'000),
                           nullptr);
  ASSERT_TRUE(scaled.ok());
  EXPECT_EQ(scaled->diff.size(), 1u);
  EXPECT_EQ(scaled->revision, 1);  // still the submission's template
  EXPECT_EQ(RollbackTarget(r, 0).status().code(), StatusCode::kFailedPrecondition);
}

// The check an update makes before it resolves anything the proposed document names (probe
// report §3): a changed queue or project is immutable, the same answer whatever it names.
TEST(WorkloadUpdateTest, AChangedQueueOrProjectIsImmutableWhateverItNames) {
  Workload current = Parse(kService);
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"queue: qa", "queue: another-tenants"},
                                 {"queue: qa", "queue: missing"},
                                 {"project: a/serve", "project: b/theirs"}}) {
    std::vector<std::string> immutable;
    Status st = CheckMutable(current, Parse(Replace(kService, from, to)), &immutable);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << to;
    std::string field = from.substr(0, from.find(':'));
    EXPECT_EQ(immutable, std::vector<std::string>{field}) << to;
    EXPECT_EQ(st.message().find(to.substr(to.find(' ') + 1)), std::string::npos) << st.message();
  }
  std::vector<std::string> none;
  EXPECT_TRUE(CheckMutable(current, Parse(Replace(kService, "chat:1", "chat:2")), &none).ok());
  EXPECT_TRUE(none.empty());
}

}  // namespace
}  // namespace abacus::server
