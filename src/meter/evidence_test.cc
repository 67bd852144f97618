#include "meter/evidence.h"

#include <gtest/gtest.h>

#include "meter/meter_test_util.h"

namespace abacus::meter {
namespace {

using namespace scenario;  // NOLINT: the scenario helpers

class EvidenceTest : public ::testing::Test {
 protected:
  EvidenceTest() {
    d_.inventory = {{"east", "default", kA100, 2, 8, 8}, {"east", "default", kT4, 1, 4, 3}};
    // Both nodes existed through the whole window.
    d_.capacity = {{"gpu-1", kA100, 8, T(1, 0), std::nullopt, NodeCondition::kUp},
                   {"gpu-2", kT4, 4, T(1, 0), std::nullopt, NodeCondition::kUp}};
    d_.quotas = {{"nlp-train", "nlp", "research", kA100, 4000, std::nullopt},
                 {"vision-exp", "vision", "research", kA100, 4000, std::nullopt}};
    d_.intervals = ScenarioIntervals();
    WorkloadSummary w;
    w.id = "train-a";
    w.kind = "TrainingJob";
    w.queue = "nlp-train";
    w.flavor = kA100;
    w.submitted = T(1, 7);
    w.admitted = T(1, 8);
    w.finished = T(2, 2);
    w.state = "Succeeded";
    d_.workloads.push_back(w);
    d_.preemptions = {{T(1, 16), "Reclaim", "train-a", "nlp", "nlp-train", kA100, 4000, "eval-b", "vision-exp"}};
    for (int dev = 0; dev < 4; ++dev) {
      for (int h = 8; h < 16; ++h) d_.samples.push_back({"gpu-1", dev, T(1, h), dev < 2 && h >= 12 ? 0.01 : 0.9});
    }
    for (int h = 10; h < 14; ++h) d_.samples.push_back({"gpu-2", 0, T(1, h), 0.0});
    d_.shortages = {{"svc-1", "chat", "vision", "vision-serve", kT4, 3, 1, T(1, 10), T(1, 12)}};
    d_.audit = {{T(1, 14), "user alice", "cancel", "workload", "notebook"},
                {T(1, 16), "scheduler", "preempt", "workload", "train-a"},
                {T(1, 17), "user bob", "apply", "queue", "nlp-train"},
                {T(1, 18), "user carol", "create", "workload", "x"}};
    d_.prices = ScenarioPrices();
    in_ = d_.Input(ScenarioWindow(), std::chrono::hours(1));
    in_.title = "POC <east> & co";
  }

  EvidenceData d_;
  EvidenceInput in_;
};

TEST_F(EvidenceTest, MarkdownHasEverySectionAndTheNumbers) {
  std::string md = RenderEvidence(in_, EvidenceFormat::kMarkdown);
  EXPECT_TRUE(md.starts_with("# POC <east> & co\n")) << md.substr(0, 80);
  for (const char* title : {"Resource inventory", "Queues, quotas, use and borrowing",
                            "Submissions and scheduling results", "Utilization", "Queue waits",
                            "Failures by reason", "Reclaim and preemption actions", "Inference shortages",
                            "Manual interventions", "Audit chain"}) {
    EXPECT_NE(md.find(std::string("\n## ") + title + "\n"), std::string::npos) << title;
  }
  EXPECT_NE(md.find("| east | default | gpu/nvidia/A100-80G | 2 | 8 | 8 |"), std::string::npos);
  EXPECT_NE(md.find("- **Cost**: 131.96 USD\n"), std::string::npos);
  EXPECT_NE(md.find("- **Manual interventions**: 2\n"), std::string::npos);
  // A100: 8 devices × 48h = 384 capacity; 42 allocated (10.9%); 34 measured; busy
  // (2×8h×0.9 + 2×(4h×0.9 + 4h×0.01)) / 34 = 63.8%; idle 8 + 2.
  EXPECT_NE(md.find("| gpu/nvidia/A100-80G | 8 | 384.000 | 42.000 | 10.9 | 34.000 | 63.8 | 10.000 |"),
            std::string::npos)
      << md;
  // nlp-train used 40 of 4 × 48 = 192 nominal device-hours.
  EXPECT_NE(md.find("| nlp-train | nlp | research | gpu/nvidia/A100-80G | 4 | 40.000 | 20.8 |"), std::string::npos);
  EXPECT_NE(md.find("| Reclaim | nlp-train | 1 | 4 |"), std::string::npos);
  EXPECT_NE(md.find("| cancel | workload | 1 |"), std::string::npos);
  EXPECT_NE(md.find("verified: 4 entries, chain intact"), std::string::npos);
}

TEST_F(EvidenceTest, HtmlIsSelfContainedWithInlineSvgCharts) {
  std::string html = RenderEvidence(in_, EvidenceFormat::kHtml);
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  EXPECT_NE(html.find("<h1>POC &lt;east&gt; &amp; co</h1>"), std::string::npos);
  EXPECT_NE(html.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(html.find("Devices by flavor"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  size_t urls = 0, svg_ns = 0;
  for (size_t p = html.find("http"); p != std::string::npos; p = html.find("http", p + 1)) ++urls;
  for (size_t p = html.find("http://www.w3.org/2000/svg"); p != std::string::npos;
       p = html.find("http://www.w3.org/2000/svg", p + 1)) {
    ++svg_ns;
  }
  EXPECT_EQ(urls, svg_ns);  // the SVG namespace is the only URL
  EXPECT_TRUE(html.ends_with("</html>\n"));
}

TEST_F(EvidenceTest, JsonHasSummarySectionsAndAuditStatus) {
  auto j = nlohmann::json::parse(RenderEvidence(in_, EvidenceFormat::kJson));
  ASSERT_EQ(j["sections"].size(), 10u);
  EXPECT_EQ(j["sections"][0]["id"], "inventory");
  EXPECT_EQ(j["sections"][0]["tables"][0]["rows"][1]["healthyDevices"], 3);
  EXPECT_EQ(j["summary"]["Manual interventions"], "2");
  EXPECT_EQ(j["auditChain"]["ok"], true);
  EXPECT_EQ(j["window"]["from"], "2026-03-01T00:00:00.000Z");
}

// Issue 20.17: refused cancels are not interventions, and one person is "1 person".
TEST_F(EvidenceTest, InterventionsCountOnlyChangesThatTookEffect) {
  std::vector<AuditEntrySummary> audit = {{T(1, 14), "user alice", "cancel", "workload", "notebook"},
                                          {T(1, 15), "user alice", "cancel", "workload", "gone", "404: not found"},
                                          {T(1, 15), "user bob", "cancel", "workload", "done", "409: finished"}};
  in_.audit = audit;
  std::string md = RenderEvidence(in_, EvidenceFormat::kMarkdown);
  EXPECT_NE(md.find("- **Manual interventions**: 1\n"), std::string::npos);
  EXPECT_NE(md.find("1 manual intervention by 1 person ("), std::string::npos);
  EXPECT_EQ(md.find("by 1 people"), std::string::npos);
}

// Issue 20.16: capacity is the integral of what existed. A node registered 15 minutes before the
// end of a 48 h window brings 15 minutes of capacity (it showed 48 h), and the 5 minutes it was
// NotReady are shown apart.
TEST_F(EvidenceTest, CapacityIsTheIntegralOfWhatExisted) {
  const Time registered = T(2, 23) + std::chrono::minutes(45);
  std::vector<NodeChange> changes = {{registered, "Ready", {{kA100, 8}}},
                                     {registered + std::chrono::minutes(10), "NotReady", {{kA100, 8}}}};
  std::vector<CapacitySpan> spans = NodeCapacitySpans("gpu-1", changes);
  ASSERT_EQ(spans.size(), 2u);
  in_.capacity = spans;
  in_.intervals = {};
  std::string md = RenderEvidence(in_, EvidenceFormat::kMarkdown);
  // 8 devices × 15 min = 2 device-hours, of which 8 × 5 min down.
  EXPECT_NE(md.find("| gpu/nvidia/A100-80G | 8 | 2.000 | 0.000 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 0.667 | 0.000 |"), std::string::npos) << md;
  // No span for the T4 node: no capacity, whatever the inventory says today.
  EXPECT_NE(md.find("| gpu/nvidia/T4 | 4 | 0.000 |"), std::string::npos) << md;
}

TEST(CapacityTest, SpansFollowTheNodesStatesUntilItIsRemoved) {
  const Time t0 = FromMicros(1'000'000'000);
  std::vector<NodeChange> changes = {{t0, "Ready", {{"gpu/nvidia/T4", 2}, {"npu/huawei/Ascend910B", 1}}},
                                     {t0 + std::chrono::hours(1), "Cordoned", {{"gpu/nvidia/T4", 2}}},
                                     {t0 + std::chrono::hours(2), "Removed", {}}};
  std::vector<CapacitySpan> spans = NodeCapacitySpans("n", changes);
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[2].condition, NodeCondition::kDrained);
  EXPECT_EQ(spans[2].to, t0 + std::chrono::hours(2));
  // A window reaching before the registration and after the removal: 2 T4 for 2 h, the NPU 1 h.
  auto c = CapacityByFlavor(spans, ReportWindow{t0 - std::chrono::hours(24), t0 + std::chrono::hours(24)});
  EXPECT_EQ(c["gpu/nvidia/T4"].total, ResourceTime{2} * 1000 * 2 * kMicrosPerHour);
  EXPECT_EQ(c["gpu/nvidia/T4"].drained, ResourceTime{2} * 1000 * kMicrosPerHour);
  EXPECT_EQ(c["npu/huawei/Ascend910B"].total, ResourceTime{1000} * kMicrosPerHour);
  EXPECT_EQ(c["gpu/nvidia/T4"].available(), ResourceTime{2} * 1000 * kMicrosPerHour);
}

// abacus drain leaves a node Drained: that time counts as drained too, apart from idle.
TEST(CapacityTest, DrainedNodesCountAsDrained) {
  const Time t0 = FromMicros(1'000'000'000);
  std::vector<NodeChange> changes = {{t0, "Draining", {{"gpu/nvidia/T4", 2}}},
                                     {t0 + std::chrono::hours(1), "Drained", {{"gpu/nvidia/T4", 2}}},
                                     {t0 + std::chrono::hours(3), "Ready", {{"gpu/nvidia/T4", 2}}}};
  std::vector<CapacitySpan> spans = NodeCapacitySpans("n", changes);
  auto c = CapacityByFlavor(spans, ReportWindow{t0, t0 + std::chrono::hours(4)});
  EXPECT_EQ(c["gpu/nvidia/T4"].drained, ResourceTime{2} * 1000 * 3 * kMicrosPerHour);
  EXPECT_EQ(c["gpu/nvidia/T4"].available(), ResourceTime{2} * 1000 * kMicrosPerHour);
}

TEST_F(EvidenceTest, ABrokenChainIsSaidPlainly) {
  in_.audit_chain = {true, false, 7, "seq 7: hash does not match its content (entry edited)"};
  std::string md = RenderEvidence(in_, EvidenceFormat::kMarkdown);
  EXPECT_NE(md.find("BROKEN after checking 7 entries: seq 7: hash does not match"), std::string::npos);
}

TEST(EvidenceRulesTest, ManualInterventionsArePeopleActingOnWork) {
  EXPECT_TRUE(IsManualIntervention({Time{}, "user alice", "cancel", "workload", "x"}));
  EXPECT_TRUE(IsManualIntervention({Time{}, "user bob", "apply", "Queue", "q"}));
  EXPECT_FALSE(IsManualIntervention({Time{}, "user bob", "apply", "Tenant", "t"}));
  EXPECT_FALSE(IsManualIntervention({Time{}, "scheduler", "preempt", "workload", "x"}));
  EXPECT_FALSE(IsManualIntervention({Time{}, "user carol", "create", "workload", "x"}));
  // Issue 20.17: a refused request changed nothing (a 404 cancel, a 409 cancel of a finished job).
  EXPECT_FALSE(IsManualIntervention({Time{}, "user alice", "cancel", "workload", "x", "404: workload x not found"}));
  EXPECT_FALSE(IsManualIntervention({Time{}, "user alice", "cancel", "workload", "x", "409: already Succeeded"}));
  EXPECT_EQ(ParseEvidenceFormat("md").value(), EvidenceFormat::kMarkdown);
  EXPECT_EQ(ParseEvidenceFormat("html").value(), EvidenceFormat::kHtml);
  EXPECT_FALSE(ParseEvidenceFormat("pdf").ok());
}

}  // namespace
}  // namespace abacus::meter
